// Helpers shared by the tests that run phases through RunPhase on the `null`
// engine (calibration_test.cc, runner_test.cc).
#ifndef LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_
#define LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
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

// Every operation an engine is asked for, with its key.
class RecordingAdapter : public KvAdapter {
 public:
  Status Put(std::string_view key, std::string_view value) override {
    return Note("put", key, value.size());
  }
  Status Delete(std::string_view key) override { return Note("delete", key, 0); }
  Status Get(std::string_view key, std::string*) override { return Note("get", key, 0); }
  Status Scan(std::string_view key, size_t count, size_t* returned) override {
    *returned = 0;
    return Note("scan", key, count);
  }
  Metrics GetMetrics() override { return {}; }
  Status Close() override { return Status::OK(); }

  std::map<std::string, std::multiset<std::string>> keys;  // by kind
  std::map<std::string, uint64_t> sizes;                   // value bytes / scan counts by kind

 private:
  Status Note(const char* kind, std::string_view key, size_t size) {
    std::lock_guard<std::mutex> l(mu_);
    keys[kind].insert(std::string(key));
    sizes[kind] += size;
    return Status::OK();
  }
  std::mutex mu_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_RUNNER_TEST_UTIL_H_
