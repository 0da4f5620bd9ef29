// Every real engine the build has: a load and a short open-loop run through
// the driver produce operations and non-empty engine metrics.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "adapters/adapter.h"
#include "driver/run_config.h"
#include "driver/runner.h"

namespace lsmbench {
namespace driver {
namespace {

class EngineRunTest : public ::testing::TestWithParam<std::string> {};

RunConfig Config(const std::string& text) {
  RunConfig c;
  Status s = ParseRunConfig(Json::parse(text), ".", AdapterNames(), &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

TEST_P(EngineRunTest, ShortOpenLoopRunProducesMetrics) {
  const std::string engine = GetParam();
  char tmpl[] = "/tmp/lsm-driver-engine-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::unique_ptr<KvAdapter> adapter;
  Status s = OpenAdapter(engine, dir + "/db", {}, &adapter);
  ASSERT_TRUE(s.ok()) << s.ToString();

  const std::string workload =
      R"("workload": {"record_count": 2000, "value_size": 200,
          "operations": {"update": 0.6, "insert": 0.1, "read": 0.2, "scan": 0.1},
          "scan_length": 20})";
  RunConfig load = Config(R"({"engine": ")" + engine + R"(", "dir": ")" + dir +
                          R"(/db", "phase": "load", "progress_s": 0, )" + workload + "}");
  auto loaded = std::make_unique<RunResult>();
  RunPhase(load, adapter.get(), RunHooks(), loaded.get());
  ASSERT_TRUE(loaded->error.ok()) << loaded->error.ToString();
  EXPECT_EQ(loaded->total_ops[kInsert], 2000u);

  RunConfig run = Config(R"({"engine": ")" + engine + R"(", "dir": ")" + dir +
                         R"(/db", "phase": "running", "duration_s": 1.5, "interval_ms": 500,
                         "progress_s": 0, "arrival": {"process": "constant", "rate": 2000},
                         "queries": {"threads": 1}, )" +
                         workload + "}");
  int intervals = 0, with_metrics = 0;
  RunHooks hooks;
  hooks.on_interval = [&](const IntervalStats& st) {
    intervals++;
    with_metrics += !st.engine.empty();
  };
  auto result = std::make_unique<RunResult>();
  RunPhase(run, adapter.get(), hooks, result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  ASSERT_TRUE(adapter->Close().ok());

  uint64_t ops = 0;
  for (int t = 0; t < kNumOpTypes; t++) ops += result->total_ops[t];
  printf("%s: %llu operations, %zu metrics\n", engine.c_str(),
         static_cast<unsigned long long>(ops), result->metrics_end.size());
  EXPECT_GT(ops, 2000u);
  EXPECT_GT(result->total_ops[kScan], 0u);
  EXPECT_GT(result->total_query_ops[kQueryGet], 0u);
  EXPECT_FALSE(result->metrics_end.empty());
  EXPECT_EQ(with_metrics, intervals);
  EXPECT_GE(intervals, 3);
  std::system(("rm -rf " + dir).c_str());
}

std::vector<std::string> RealEngines() {
  std::vector<std::string> engines;
  for (const auto& e : AdapterNames()) {
    if (e != "null") engines.push_back(e);
  }
  return engines;
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineRunTest, ::testing::ValuesIn(RealEngines()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EngineRunTest);

}  // namespace
}  // namespace driver
}  // namespace lsmbench
