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

#ifdef LSMBENCH_HAVE_BUILTIN
// The bundled engine tells each flush and merge; the driver puts them in the
// interval in which they completed, on the run's clock.
TEST(EngineEventsTest, BuiltinFlushesAndMergesLandInTheirIntervals) {
  char tmpl[] = "/tmp/lsm-driver-events-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::unique_ptr<KvAdapter> adapter;
  Status s = OpenAdapter("builtin", dir + "/db", {{"memtable_bytes", "64K"}, {"wal", "off"}},
                         &adapter);
  ASSERT_TRUE(s.ok()) << s.ToString();
  RunConfig run = Config(R"({"engine": "builtin", "dir": ")" + dir +
                         R"(/db", "phase": "testing", "duration_s": 1.5, "interval_ms": 500,
                         "progress_s": 0, "workload": {"record_count": 20000,
                         "value_size": 200, "operations": {"insert": 1.0}}})");
  uint64_t flushes = 0, merges = 0, flushed_entries = 0;
  bool ordered = true;
  RunHooks hooks;
  hooks.on_interval = [&](const IntervalStats& st) {
    for (const EngineEvent& e : st.events) {
      const double end_s = static_cast<double>(e.end_ns) * 1e-9;
      ordered = ordered && e.start_ns <= e.end_ns && end_s <= st.t_end_s + 1e-9;
      if (e.kind == EngineEvent::Kind::kFlush) {
        ordered = ordered && e.sealed_ns > 0 && e.sealed_ns <= e.start_ns;
      }
      if (e.kind == EngineEvent::Kind::kFlush) {
        flushes++;
        flushed_entries += e.entries;
      } else {
        merges++;
      }
    }
  };
  auto result = std::make_unique<RunResult>();
  RunPhase(run, adapter.get(), hooks, result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  const Metrics m = adapter->GetMetrics();
  ASSERT_TRUE(adapter->Close().ok());
  printf("builtin: %llu flushes, %llu merges told\n", static_cast<unsigned long long>(flushes),
         static_cast<unsigned long long>(merges));
  EXPECT_TRUE(ordered);
  EXPECT_GE(flushes, 2u);
  // Events that completed after the last snapshot are not in an interval.
  EXPECT_LE(flushes, static_cast<uint64_t>(m.at("flushes")));
  EXPECT_LE(merges, static_cast<uint64_t>(m.at("merges")));
  EXPECT_LE(flushed_entries, result->total_ops[kInsert]);
  std::system(("rm -rf " + dir).c_str());
}
#endif

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
