// Helpers shared by the adapter tests.
#ifndef LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_
#define LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "adapters/adapter.h"
#include "adapters/plugin_adapter.h"
#include "gtest/gtest.h"

namespace lsmbench {

// A fresh directory under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "lsm_adapter_test.XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory that does not exist yet (engines create it).
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Fixed-width keys so that bytewise order is numeric order.
inline std::string TestKey(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

// n puts of 100-byte values to the keys 0..n-1 in a scrambled order (7919 is
// prime), as fast as the engine takes them: a burst that leaves flushes and
// merges behind.
inline void PutBurst(KvAdapter* db, int n) {
  const std::string value(100, 'x');
  for (int i = 0; i < n; ++i) ASSERT_TRUE(db->Put(TestKey(i * 7919 % n), value).ok());
}

// The engine plugin at `path`, loaded once per test binary and known to
// OpenAdapter by its name; nullptr (and a test failure) when it does not load.
inline const EnginePlugin* LoadedPlugin(const std::string& path) {
  static std::map<std::string, std::shared_ptr<const EnginePlugin>> loaded;
  auto it = loaded.find(path);
  if (it == loaded.end()) {
    std::string name;
    const Status s = LoadEnginePlugin(path, &name);
    EXPECT_TRUE(s.ok()) << s.ToString();
    it = loaded.emplace(path, s.ok() ? FindEnginePlugin(name) : nullptr).first;
  }
  return it->second.get();
}

// Loads a plugin before any test, so that every test may open the engine by name:
// ::testing::AddGlobalTestEnvironment(new LoadPluginFirst(PATH)).
class LoadPluginFirst : public ::testing::Environment {
 public:
  explicit LoadPluginFirst(std::string path) : path_(std::move(path)) {}
  void SetUp() override { ASSERT_NE(LoadedPlugin(path_), nullptr) << path_; }

 private:
  std::string path_;
};

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_
