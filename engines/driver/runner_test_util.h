// Helpers shared by the tests that run phases through RunPhase on the `null`
// engine (calibration_test.cc, runner_test.cc).
#ifndef LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_
#define LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "driver/json_reader.h"
#include "driver/run_config.h"
#include "driver/runner.h"

namespace lsmbench {
namespace driver {

// A run.json text parsed as the driver would (a test failure if it is bad).
inline RunConfig Config(const std::string& text) {
  RunConfig c;
  Status s = ParseRunConfig(Json::parse(text), ".", AdapterNames(), &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

inline std::unique_ptr<KvAdapter> OpenNull(const std::map<std::string, std::string>& options) {
  std::unique_ptr<KvAdapter> adapter;
  Status s = OpenAdapter("null", "", options, &adapter);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return adapter;
}

// Collects every writer operation (thread-safe).
class OpLog {
 public:
  std::function<void(const OpTrace&)> Hook() {
    return [this](const OpTrace& t) {
      std::lock_guard<std::mutex> l(mu_);
      ops_.push_back(t);
    };
  }
  const std::vector<OpTrace>& ops() const { return ops_; }

 private:
  std::mutex mu_;
  std::vector<OpTrace> ops_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_
