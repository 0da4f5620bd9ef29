// Helpers shared by the adapter tests.
#ifndef LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_
#define LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

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

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_ADAPTER_TEST_UTIL_H_
