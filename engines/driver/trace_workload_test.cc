#include "driver/trace_workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "driver/generate_ops.h"
#include "driver/op_generator.h"
#include "driver/rocksdb_trace.h"
#include "driver/run_config.h"
#include "driver/runner.h"
#include "driver/runner_test_util.h"

namespace lsmbench {
namespace driver {
namespace {

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
}

// A trace of every kind: n puts of keys k0..k(n-1) (binary bytes in them),
// gets and seeks of some, deletes, a range delete (not replayed), at 1 ms
// steps from t0.
struct TestTrace {
  std::string path;
  std::multiset<std::string> puts, gets, seeks, deletes;
  uint64_t put_bytes = 0;
  uint64_t ops = 0;
};

TestTrace WriteTrace(const char* name, int n) {
  TestTrace t;
  t.path = TempPath(name);
  RocksDbTraceWriter w;
  const uint64_t t0 = 1'000'000'000;
  EXPECT_TRUE(w.Open(t.path, t0).ok());
  uint64_t ts = t0;
  auto key = [](int i) { return std::string("k\0", 2) + std::to_string(i * 7919 % 100003); };
  for (int i = 0; i < n; i++) {
    TraceOp op;
    op.timestamp_us = ts += 1000;
    op.kind = TraceOpKind::kPut;
    op.key = key(i);
    op.value_size = 10 + i % 50;
    EXPECT_TRUE(w.Append(op).ok());
    t.puts.insert(op.key);
    t.put_bytes += op.value_size;
    t.ops++;
    TraceOp get;
    get.timestamp_us = ts += 1000;
    get.kind = i % 3 == 0 ? TraceOpKind::kSeek : TraceOpKind::kGet;
    get.key = key(i / 2);
    EXPECT_TRUE(w.Append(get).ok());
    (get.kind == TraceOpKind::kSeek ? t.seeks : t.gets).insert(get.key);
    t.ops++;
    if (i % 10 == 9) {
      TraceOp del;
      del.timestamp_us = ts += 1000;
      del.kind = i % 20 == 9 ? TraceOpKind::kDelete : TraceOpKind::kSingleDelete;
      del.key = key(i - 5);
      EXPECT_TRUE(w.Append(del).ok());
      t.deletes.insert(del.key);
      t.ops++;
      TraceOp range;
      range.timestamp_us = ts;
      range.kind = TraceOpKind::kDeleteRange;
      range.key = key(0);
      range.end_key = key(1);
      EXPECT_TRUE(w.Append(range).ok());
    }
  }
  EXPECT_TRUE(w.Finish(ts + 1000).ok());
  return t;
}

RunConfig TraceConfig(const TestTrace& t, const std::string& phase, const std::string& extra) {
  return Config(R"({"engine": "null", "phase": ")" + phase +
                R"(", "duration_s": 60, "threads": 2, "progress_s": 0,
                "workload": {"rocksdb_trace": ")" + t.path + R"("})" + extra + "}");
}

TEST(TraceWorkloadTest, MeasureCountsWhatReplays) {
  TestTrace t = WriteTrace("measure", 300);
  TraceMeasure m;
  ASSERT_TRUE(MeasureTrace(t.path, 1000000, &m).ok());
  EXPECT_EQ(m.ops, t.ops);
  EXPECT_EQ(m.skipped_ops, 30u);  // the range deletes
  EXPECT_EQ(m.ops_by_type[kUpdate], 300u);
  EXPECT_EQ(m.ops_by_type[kScan], 100u);
  EXPECT_EQ(m.ops_by_type[kRead], 200u);
  EXPECT_EQ(m.ops_by_type[kDelete], 30u);
  EXPECT_NEAR(m.mean_value_size, static_cast<double>(t.put_bytes) / 300, 1e-9);
  EXPECT_EQ(m.max_value_size, 59u);
  EXPECT_EQ(m.span_us, (t.ops - 1) * 1000);
  ASSERT_TRUE(m.keys_complete);
  std::set<std::string> distinct(t.puts.begin(), t.puts.end());
  for (const auto& k : t.gets) distinct.insert(k);
  for (const auto& k : t.seeks) distinct.insert(k);
  EXPECT_EQ(m.keys->size(), distinct.size());
  EXPECT_EQ((*m.keys)[0], std::string("k\0", 2) + "0");  // first appearance order
  TraceMeasure few;
  ASSERT_TRUE(MeasureTrace(t.path, 10, &few).ok());
  EXPECT_FALSE(few.keys_complete);
  unlink(t.path.c_str());
}

// Closed and open loop, several writers: the engine receives exactly the
// trace's operations, key for key.
TEST(TraceWorkloadTest, ReplaySendsTheTracesOperationsAndKeys) {
  TestTrace t = WriteTrace("replay", 2000);
  for (const char* phase : {"testing", "running"}) {
    SCOPED_TRACE(phase);
    const std::string arrival =
        // The drain lets every request that arrived finish, however late a loaded machine
        // runs the writers: the check is what is sent, not when.
        std::string(phase) == "running"
            ? R"(, "drain_s": 60, "arrival": {"process": "replay", "speed": 50})"
            : "";
    RunConfig config = TraceConfig(t, phase, arrival);
    RecordingAdapter engine;
    RunHooks hooks;
    auto result = std::make_unique<RunResult>();
    RunPhase(config, &engine, hooks, result.get());
    ASSERT_TRUE(result->error.ok()) << result->error.ToString();
    EXPECT_EQ(engine.keys["put"], t.puts);
    EXPECT_EQ(engine.keys["get"], t.gets);
    EXPECT_EQ(engine.keys["scan"], t.seeks);
    EXPECT_EQ(engine.keys["delete"], t.deletes);
    EXPECT_EQ(engine.sizes["put"], t.put_bytes);
    EXPECT_EQ(engine.sizes["scan"], t.seeks.size());  // a seek and one entry
  }
  // At 50x the trace's pace (1 ms steps), the replay's window is the trace's span / 50.
  RunConfig config = TraceConfig(t, "running", R"(, "arrival": {"process": "replay", "speed": 50})");
  EXPECT_DOUBLE_EQ(config.arrival.ReplaySpeed(), 50);
  EXPECT_NEAR(config.arrival.NominalRate(), 50 * 1000.0 * t.ops / (t.ops - 1), 1e-6);
  RunConfig by_rate = TraceConfig(t, "running", R"(, "arrival": {"process": "replay", "rate": 3000})");
  EXPECT_NEAR(by_rate.arrival.ReplaySpeed(), 3.0 * (t.ops - 1) / t.ops, 1e-9);
  unlink(t.path.c_str());
}

// rocksdb_trace_repeat: the trace again from its start, as long as the
// phase lasts; in an open loop its time goes on from one pass to the next.
TEST(TraceWorkloadTest, RepeatReplaysTheTraceAgain) {
  TestTrace t = WriteTrace("repeat", 200);
  const uint64_t n = t.ops;
  RunConfig config = Config(R"({"engine": "null", "phase": "testing", "duration_s": 60,
      "threads": 2, "progress_s": 0, "max_ops": )" + std::to_string(2 * n + n / 2) + R"(,
      "workload": {"rocksdb_trace": ")" + t.path + R"(", "rocksdb_trace_repeat": true}})");
  RecordingAdapter engine;
  auto result = std::make_unique<RunResult>();
  RunPhase(config, &engine, RunHooks(), result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  uint64_t total = 0;
  for (const auto& [kind, keys] : engine.keys) total += keys.size();
  EXPECT_EQ(total, 2 * n + n / 2);
  for (const std::string& k : std::set<std::string>(t.puts.begin(), t.puts.end())) {
    EXPECT_GE(engine.keys["put"].count(k), 2 * t.puts.count(k)) << "each put twice at least";
  }
  // Arrivals: pass k is k x (span + one mean gap) later.
  RunConfig open = Config(R"({"engine": "null", "phase": "running", "duration_s": 60,
      "workload": {"rocksdb_trace": ")" + t.path + R"(", "rocksdb_trace_repeat": true},
      "arrival": {"process": "replay", "speed": 2}})");
  auto arrivals = NewArrivalProcess(open.arrival, 1);
  std::vector<double> times;
  for (uint64_t i = 0; i < 2 * n + 1; i++) times.push_back(arrivals->Next());
  const double pass_s = (n - 1) * 1e-3 + 1e-3;  // 1 ms steps
  EXPECT_NEAR(times[n], pass_s / 2, 1e-9);
  EXPECT_NEAR(times[2 * n], pass_s, 1e-9);
  EXPECT_NEAR(times[n + 7] - times[n], times[7] - times[0], 1e-9);
  unlink(t.path.c_str());
}

TEST(TraceWorkloadTest, LoadInsertsTheTracesKeys) {
  TestTrace t = WriteTrace("load", 500);
  RunConfig config = TraceConfig(t, "load", "");
  ASSERT_GT(config.workload.record_count, 0u);
  RecordingAdapter engine;
  auto result = std::make_unique<RunResult>();
  RunPhase(config, &engine, RunHooks(), result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  std::set<std::string> loaded(engine.keys["put"].begin(), engine.keys["put"].end());
  EXPECT_EQ(loaded.size(), engine.keys["put"].size()) << "each key once";
  EXPECT_EQ(loaded.size(), config.workload.record_count);
  for (const auto& k : t.gets) EXPECT_EQ(loaded.count(k), 1u);
  // record_count 0: nothing to load.
  RunConfig none = Config(R"({"engine": "null", "phase": "load", "progress_s": 0,
      "workload": {"rocksdb_trace": ")" + t.path + R"(", "record_count": 0}})");
  EXPECT_EQ(none.workload.record_count, 0u);
  unlink(t.path.c_str());
}

TEST(TraceWorkloadTest, BadTraceWorkloadsNameTheField) {
  TestTrace t = WriteTrace("bad", 10);
  auto error = [](const std::string& text) {
    RunConfig c;
    Status s = ParseRunConfig(Json::parse(text), ".", AdapterNames(), &c);
    EXPECT_FALSE(s.ok()) << text;
    return ErrorText(s);
  };
  const std::string head = R"({"engine": "null", "phase": "testing", "duration_s": 1, )";
  EXPECT_NE(error(head + R"("workload": {"rocksdb_trace": "/no/such.trace"}})")
                .find("workload.rocksdb_trace: "),
            std::string::npos);
  const std::string not_a_trace = TempPath("not-a-trace");
  FILE* f = fopen(not_a_trace.c_str(), "w");
  fputs("time_s,rate\n0,100\n", f);
  fclose(f);
  const std::string e = error(head + R"("workload": {"rocksdb_trace": ")" + not_a_trace + R"("}})");
  EXPECT_NE(e.find("workload.rocksdb_trace: "), std::string::npos) << e;
  EXPECT_NE(e.find(not_a_trace), std::string::npos) << e;
  EXPECT_NE(error(head + R"("workload": {"rocksdb_trace": ")" + t.path +
                  R"(", "operations": {"read": 1}}})")
                .find("workload.operations: not with rocksdb_trace"),
            std::string::npos);
  EXPECT_NE(error(head + R"("workload": {"rocksdb_trace": ")" + t.path +
                  R"(", "record_count": 5}})")
                .find("workload.record_count: with rocksdb_trace, 0 (no load) or left out"),
            std::string::npos);
  EXPECT_NE(error(R"({"engine": "null", "phase": "running", "duration_s": 1,
      "workload": {"record_count": 10}, "arrival": {"process": "replay", "speed": 2}})")
                .find("arrival.process: replay needs a workload with rocksdb_trace"),
            std::string::npos);
  EXPECT_NE(error(R"({"engine": "null", "phase": "running", "duration_s": 1, "workload":
      {"rocksdb_trace": ")" + t.path + R"("}, "arrival": {"process": "replay", "speed": 0}})")
                .find("arrival.speed: must be > 0"),
            std::string::npos);
  unlink(not_a_trace.c_str());
  unlink(t.path.c_str());
}

// A phase's workload recorded as a RocksDB trace replays as the same
// operations on the same keys: what a campaign sent can be sent again
// elsewhere.
TEST(TraceWorkloadTest, GeneratedTraceReplaysAsTheSameOperations) {
  RunConfig synthetic = Config(R"({"engine": "null", "phase": "testing", "duration_s": 1,
      "workload": {"record_count": 5000, "operations": {"update": 0.3, "read": 0.5,
      "scan": 0.1, "delete": 0.1}, "distribution": "zipfian", "value_size": {"min": 10,
      "max": 90}}})");
  const std::string path = TempPath("generated");
  ASSERT_TRUE(WriteGeneratedTrace(synthetic, 3000, path).ok());
  OpGenerator generator(synthetic.workload, synthetic.seed, synthetic.insert_start);
  std::multiset<std::string> puts, gets, seeks, deletes;
  uint64_t put_bytes = 0;
  std::string key(generator.key_size(), '\0');
  for (uint64_t seq = 0; seq < 3000; seq++) {
    Op op;
    ASSERT_TRUE(generator.Make(seq, &op));
    generator.FormatKey(op.id, key.data());
    switch (op.type) {
      case kUpdate: puts.insert(key); put_bytes += op.value.size(); break;
      case kRead: gets.insert(key); break;
      case kScan: seeks.insert(key); break;
      default: deletes.insert(key); break;
    }
  }
  RunConfig replay = Config(R"({"engine": "null", "phase": "testing", "duration_s": 60,
      "threads": 2, "progress_s": 0, "workload": {"rocksdb_trace": ")" + path +
                            R"(", "record_count": 0}})");
  ASSERT_EQ(replay.workload.trace->ops, 3000u);
  RecordingAdapter engine;
  auto result = std::make_unique<RunResult>();
  RunPhase(replay, &engine, RunHooks(), result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  EXPECT_EQ(engine.keys["put"], puts);
  EXPECT_EQ(engine.keys["get"], gets);
  EXPECT_EQ(engine.keys["scan"], seeks);
  EXPECT_EQ(engine.keys["delete"], deletes);
  EXPECT_EQ(engine.sizes["put"], put_bytes);
  unlink(path.c_str());
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
