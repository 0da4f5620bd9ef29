// Helpers shared by the DB tests.
#ifndef LSM_SRC_DB_TEST_UTIL_H_
#define LSM_SRC_DB_TEST_UTIL_H_

#include <cstdlib>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "db/filenames.h"
#include "db/version.h"
#include "env/fault_env.h"

namespace lsm::test {

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/lsm-test-XXXXXX";
    path_ = mkdtemp(templ.data()) != nullptr ? templ : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A seed for randomized tests: $LSM_TEST_SEED if set, else random; always
// printed so a failure can be replayed.
inline uint64_t TestSeed() {
  const char* env = std::getenv("LSM_TEST_SEED");
  uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::printf("seed: %llu (replay with LSM_TEST_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

// A component's description as the manifest records it (sizes made up).
inline ComponentMeta MakeMeta(uint64_t number, int level, std::string smallest,
                              std::string largest) {
  ComponentMeta c;
  c.number = number;
  c.level = level;
  c.file_size = 100 * number;
  c.entries = number;
  c.smallest = std::move(smallest);
  c.largest = std::move(largest);
  return c;
}

// The kind of a database file, for FaultEnv.
inline FaultFile DbFileKind(const std::string& path) {
  uint64_t number;
  switch (ParseFileName(path.substr(path.rfind('/') + 1), &number)) {
    case FileType::kWal: return FaultFile::kWal;
    case FileType::kTable: return FaultFile::kTable;
    case FileType::kManifest: return FaultFile::kManifest;
    // CURRENT is written as a temp file, then renamed over: the engine
    // writes no other temp file.
    case FileType::kCurrent:
    case FileType::kTemp: return FaultFile::kCurrent;
    default: return FaultFile::kOther;
  }
}

}  // namespace lsm::test

#endif  // LSM_SRC_DB_TEST_UTIL_H_
