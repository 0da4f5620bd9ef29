// The lsm-driver command, run as a subprocess: exit codes, error messages,
// output files, signals.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/adapter.h"
#include "driver/json_reader.h"

namespace lsmbench {
namespace driver {
namespace {

struct Outcome {
  int code = -1;
  std::string err;
  std::string out;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lsm-driver-cli-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void WriteConfig(const std::string& text) const { std::ofstream(Path("run.json")) << text; }

  // Runs the driver with args; signo > 0: sends it after delay_s.
  Outcome Run(const std::vector<std::string>& args, int signo = 0, double delay_s = 0) const {
    const std::string err_path = Path("stderr.txt");
    const std::string out_path = Path("stdout.txt");
    const pid_t pid = fork();
    if (pid == 0) {
      const int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out_fd, 1);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(LSM_DRIVER_BINARY));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(LSM_DRIVER_BINARY, argv.data());
      _exit(127);
    }
    if (signo > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
      kill(pid, signo);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    o.err = ReadFile(err_path);
    o.out = ReadFile(out_path);
    return o;
  }

  Outcome RunWithConfig(const std::string& text) const {
    WriteConfig(text);
    return Run({"--config", Path("run.json"), "--out", Path("out")});
  }

  Json ReadJson(const std::string& path) const { return Json::parse(ReadFile(path)); }

  std::vector<Json> ReadLines(const std::string& path) const {
    std::vector<Json> lines;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) lines.push_back(Json::parse(line));
    return lines;
  }

  // An engine with a data directory (not null), or "" if none was built.
  static std::string DiskEngine() {
    for (const char* e : {"builtin"}) {
      for (const auto& n : AdapterNames()) {
        if (n == e) return e;
      }
    }
    return "";
  }

  std::string dir_;
};

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

const char kWorkload[] = R"("workload": {"record_count": 1000})";

TEST_F(CliTest, Usage) {
  Outcome o = Run({});
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "--config and --out are required");
  o = Run({"--config", Path("run.json"), "--out", Path("out"), "--frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "unknown argument '--frobnicate'");
  o = Run({"--config", Path("missing.json"), "--out", Path("out")});
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "missing.json");
}

TEST_F(CliTest, UnknownFieldsExitTwoNamingTheField) {
  Outcome o = RunWithConfig(std::string(R"({"engine": "null", "phase": "testing", "duration_s": 1,
      "duraton": 5, )") + kWorkload + "}");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "duraton: unknown field (allowed: ");
  o = RunWithConfig(std::string(R"({"engine": "null", "phase": "running", "duration_s": 1,
      "arrival": {"process": "constant", "rat": 100}, )") + kWorkload + "}");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "arrival.rat: unknown field (allowed: ");
  EXPECT_FALSE(Exists(Path("out/summary.json")));
}

TEST_F(CliTest, InvalidValuesExitTwo) {
  Outcome o = RunWithConfig(std::string(R"({"engine": "null", "phase": "running", "duration_s": 1,
      "arrival": {"process": "constant", "rate": -100}, )") + kWorkload + "}");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "arrival.rate: must be > 0");
  o = RunWithConfig(R"({"engine": "null", "phase": "testing", "duration_s": 1,
      "workload": {"record_count": 10, "distribution": "gauss"}})");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "workload.distribution: unknown value \"gauss\" (choose from: uniform");
  o = RunWithConfig(std::string(R"({"engine": "nosuchdb", "dir": "x", "phase": "testing",
      "duration_s": 1, )") + kWorkload + "}");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "engine: unknown engine 'nosuchdb' (available: ");
  EXPECT_CONTAINS(o.err, "null");
  o = RunWithConfig(std::string(R"({"engine": "null", "engine_options": {"bogus_knob": "1"},
      "phase": "testing", "duration_s": 1, )") + kWorkload + "}");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "bogus_knob");
  o = RunWithConfig("{\"engine\": \"null\", ");
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "JSON syntax error");
}

// --check-config: a run.json's first error as {path, message}, nothing run.
TEST_F(CliTest, CheckConfigNamesThePathOfTheError) {
  WriteConfig(R"({"engine": "null", "phase": "testing", "duration_s": 1,
      "workload": {"record_count": 10, "secondary_fields": 1}})");
  Outcome o = Run({"--check-config", Path("run.json")});
  EXPECT_EQ(o.code, 1) << o.err;
  const Json reply = Json::parse(o.out);
  EXPECT_FALSE(reply["ok"].get<bool>());
  ASSERT_EQ(reply["errors"].size(), 1u);
  EXPECT_EQ(reply["errors"][0]["path"], "workload.secondary_fields");
  EXPECT_CONTAINS(reply["errors"][0]["message"].get<std::string>(),
                  "engine 'null' keeps no secondary indexes");
  WriteConfig(std::string(R"({"engine": "null", "phase": "testing", "duration_s": 1, )") +
              kWorkload + "}");
  o = Run({"--check-config", Path("run.json")});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(Json::parse(o.out)["ok"].get<bool>());
  EXPECT_FALSE(Exists(Path("out")));
  EXPECT_EQ(Run({"--check-config"}).code, 2);
}

TEST_F(CliTest, CheckConfigReportsABadSettle) {
  WriteConfig(std::string(R"({"engine": "null", "phase": "testing", "duration_s": 1,
      "settle_s": 1e6, )") + kWorkload + "}");
  Outcome o = Run({"--check-config", Path("run.json")});
  EXPECT_EQ(o.code, 1) << o.err;
  const Json reply = Json::parse(o.out);
  ASSERT_EQ(reply["errors"].size(), 1u);
  EXPECT_EQ(reply["errors"][0]["path"], "settle_s");
  EXPECT_EQ(reply["errors"][0]["message"], "must be <= 86400 (got 1000000.0)");
}

TEST_F(CliTest, EngineOpenFailureExitsOneWithTheEnginesMessage) {
  const std::string engine = DiskEngine();
  if (engine.empty()) GTEST_SKIP() << "no disk engine built";
  std::ofstream(Path("plainfile")) << "x";
  // The data directory would have to be inside a regular file.
  Outcome o = RunWithConfig(R"({"engine": ")" + engine + R"(", "dir": ")" + Path("plainfile/db") +
                        R"(", "phase": "testing", "duration_s": 1, )" + kWorkload + "}");
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_CONTAINS(o.err, "engine " + engine + " failed to open");
  EXPECT_CONTAINS(o.err, "plainfile/db");
  EXPECT_FALSE(Exists(Path("out/summary.json")));
}

TEST_F(CliTest, UnwritableOutputDirectoryFailsBeforeAnyWork) {
  const std::string engine = DiskEngine();
  std::ofstream(Path("plainfile")) << "x";
  const std::string db = Path("db");
  WriteConfig(R"({"engine": ")" + (engine.empty() ? std::string("null") : engine) +
              R"(", "dir": ")" + db + R"(", "phase": "testing", "duration_s": 1, )" + kWorkload +
              "}");
  Outcome o = Run({"--config", Path("run.json"), "--out", Path("plainfile/out")});
  EXPECT_EQ(o.code, 2);
  EXPECT_CONTAINS(o.err, "plainfile/out");
  EXPECT_FALSE(Exists(db)) << "the engine was opened before the output check";
}

TEST_F(CliTest, OpenLoopRunWritesAllOutputs) {
  Outcome o = RunWithConfig(R"({"engine": "null", "phase": "running", "duration_s": 2,
      "warmup_s": 0.5, "interval_ms": 500, "progress_s": 0.5, "label": "cli test",
      "workload": {"record_count": 1000, "operations": {"update": 0.9, "read": 0.1}},
      "arrival": {"process": "poisson", "rate": 5000},
      "queries": {"threads": 1, "operations": {"get": 0.5, "scan": 0.5}, "scan_length": 10}})");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_CONTAINS(o.err, "[lsm-driver] running");
  EXPECT_CONTAINS(o.err, "queue");

  const auto lines = ReadLines(Path("out/timeseries.jsonl"));
  ASSERT_EQ(lines.size(), 4u);
  double window_cpu_s = 0;  // the measured intervals' CPU time
  for (size_t i = 0; i < lines.size(); i++) {
    const Json& l = lines[i];
    // The process's usage in the interval: consecutive intervals share a
    // snapshot, so the measured ones add up to the summary's window.
    const Json& p = l["process"];
    const double cpu_s = p["cpu_user_s"].get<double>() + p["cpu_system_s"].get<double>();
    EXPECT_GE(cpu_s, 0);
    EXPECT_NEAR(p["cpu_cores"].get<double>(),
                cpu_s / (l["t_end_s"].get<double>() - l["t_start_s"].get<double>()), 1e-9);
    EXPECT_NEAR(p["cpu_utilization"].get<double>(),
                p["cpu_cores"].get<double>() / p["usable_cpus"].get<double>(), 1e-9);
    if (l["measured"] == true) window_cpu_s += cpu_s;
    EXPECT_EQ(l["interval"], i);
    EXPECT_EQ(l["measured"], i >= 1);  // the warm-up is the first interval
    EXPECT_NEAR(l["t_end_s"].get<double>() - l["t_start_s"].get<double>(), 0.5, 0.05);
    for (const char* k : {"ops", "throughput", "write_latency_us", "write_processing_latency_us",
                          "latency_us", "processing_latency_us", "queue", "queries", "engine",
                          "errors"}) {
      EXPECT_TRUE(l.contains(k)) << k << " missing in " << l.dump();
    }
    EXPECT_TRUE(l["ops"].contains("update"));
    EXPECT_TRUE(l["ops"].contains("read"));
    for (const char* k : {"count", "mean", "p50", "p90", "p99", "p999", "max"}) {
      EXPECT_TRUE(l["write_latency_us"].contains(k)) << k;
    }
    EXPECT_GT(l["queue"]["arrivals"].get<uint64_t>(), 1500u);
    EXPECT_GT(l["queries"]["get"]["ops"].get<uint64_t>(), 0u);
    EXPECT_TRUE(l["engine"].contains("ops"));
  }

  const Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["status"], "ok");
  EXPECT_EQ(s["interrupted"], false);
  EXPECT_EQ(s["exit_code"], 0);
  EXPECT_EQ(s["config"]["label"], "cli test");
  EXPECT_EQ(s["config"]["arrival"]["rate"], 5000.0);
  EXPECT_EQ(s["window"]["intervals"], 3);
  EXPECT_NEAR(s["window"]["duration_s"].get<double>(), 1.5, 0.05);
  EXPECT_NEAR(s["open_loop"]["intended_rate"].get<double>(), 5000, 500);
  EXPECT_EQ(s["open_loop"]["window_s"], 1.5);
  EXPECT_GT(s["throughput"]["mean"].get<double>(), 4000);
  EXPECT_TRUE(s["throughput"]["cv"].is_number());
  EXPECT_GT(s["write_latency_us"]["count"].get<uint64_t>(), 5000u);
  EXPECT_TRUE(s["queries"]["scan"]["latency_us"]["p99"].is_number());
  EXPECT_TRUE(s.contains("stalls"));
  EXPECT_FALSE(s.contains("max_write_throughput"));  // testing phase only
  // The closed-loop query thread alone keeps a CPU busy for the window.
  const double summary_cpu_s =
      s["process"]["cpu_user_s"].get<double>() + s["process"]["cpu_system_s"].get<double>();
  EXPECT_GT(summary_cpu_s, 0);
  EXPECT_NEAR(summary_cpu_s, window_cpu_s, 1e-6);

  const Json h = ReadJson(Path("out/histograms.json"));
  EXPECT_EQ(h["unit"], "ns");
  const Json& w = h["histograms"]["write_latency"];
  uint64_t total = 0;
  for (const auto& b : w["buckets"]) {
    EXPECT_LE(b[0].get<uint64_t>(), b[1].get<uint64_t>());
    total += b[2].get<uint64_t>();
  }
  EXPECT_EQ(total, w["count"].get<uint64_t>());
  EXPECT_EQ(w["count"], s["write_latency_us"]["count"]);
  EXPECT_TRUE(h["histograms"].contains("query_get_latency"));

  // No temporary files are left behind.
  EXPECT_FALSE(Exists(Path("out/timeseries.jsonl.partial")));
  EXPECT_FALSE(Exists(Path("out/summary.json.tmp")));
}

TEST_F(CliTest, TestingPhaseReportsMaxThroughput) {
  Outcome o = RunWithConfig(R"({"engine": "null", "phase": "testing", "duration_s": 1.5,
      "warmup_s": 0.5, "interval_ms": 250, "progress_s": 0, "threads": 2,
      "workload_file": ")" LSM_WORKLOADS_DIR R"(/update-zipf-1kb.yaml",
      "workload": {"record_count": 10000}})");
  ASSERT_EQ(o.code, 0) << o.err;
  const Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["config"]["workload"]["distribution"], "zipfian");
  EXPECT_EQ(s["window"]["intervals"], 4);
  const double max_tput = s["max_write_throughput"].get<double>();
  EXPECT_GT(max_tput, 10000);
  EXPECT_NEAR(max_tput, s["ops"]["writes"].get<double>() / s["window"]["duration_s"].get<double>(),
              max_tput * 1e-9);
  EXPECT_TRUE(s["throughput"]["writes_cv"].is_number());
  EXPECT_FALSE(s.contains("open_loop"));
}

TEST_F(CliTest, LoadPhaseInsertsEveryRecordAndStops) {
  Outcome o = RunWithConfig(R"({"engine": "null", "phase": "load", "threads": 2, "progress_s": 0,
      "workload": {"record_count": 200000}})");
  ASSERT_EQ(o.code, 0) << o.err;
  const Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["ops_total"]["insert"], 200000);
  EXPECT_EQ(s["next_insert_id"], 200000);
  EXPECT_LT(s["elapsed_s"].get<double>(), 30);
}

// settle_s: the wait before the phase is in the summary.
TEST_F(CliTest, SettleBeforeThePhaseIsReported) {
  Outcome o = RunWithConfig(std::string(R"({"engine": "null", "phase": "testing",
      "duration_s": 0.3, "interval_ms": 100, "settle_s": 30, )") + kWorkload + "}");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_CONTAINS(o.err, "[lsm-driver] settle: idle");
  Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["config"]["settle_s"], 30.0);
  const Json& settle = s["settle"];
  EXPECT_EQ(settle["limit_s"], 30.0);
  EXPECT_EQ(settle["supported"], true);
  EXPECT_EQ(settle["idle"], true);
  EXPECT_EQ(settle["timed_out"], false);
  EXPECT_EQ(settle["flushes"], 0);
  EXPECT_EQ(settle["merges"], 0);
  EXPECT_LT(settle["waited_s"].get<double>(), 30);
  EXPECT_TRUE(settle["detail"].is_string());

  // Without settle_s there is no settle object.
  o = RunWithConfig(std::string(R"({"engine": "null", "phase": "testing", "duration_s": 0.3,
      "interval_ms": 100, )") + kWorkload + "}");
  ASSERT_EQ(o.code, 0) << o.err;
  s = ReadJson(Path("out/summary.json"));
  EXPECT_FALSE(s.contains("settle"));
  EXPECT_FALSE(s["config"].contains("settle_s"));
  EXPECT_TRUE(s["ended_early"].is_null());
}

#ifdef LSMBENCH_HAVE_BUILTIN
// The bundled engine after a load through tiny memtables (and an I/O budget,
// so that merges are usually still due when the next phase opens the tree):
// the testing phase settles first; the flushes and merges it waited for are
// counted there, and none of them lands in the phase's time series.
TEST_F(CliTest, BuiltinSettlesAfterTheLoad) {
  const std::string common = R"("engine": "builtin", "dir": ")" + Path("db") +
                             R"(", "engine_options": {"memtable_bytes": "64K",
      "merge_policy": "leveling", "io_budget_bytes_per_sec": "4M"}, "progress_s": 0,
      "workload": {"record_count": 20000, "value_size": 100})";
  Outcome o = RunWithConfig(R"({"phase": "load", )" + common + "}");
  ASSERT_EQ(o.code, 0) << o.err;
  o = RunWithConfig(R"({"phase": "testing", "duration_s": 0.5, "interval_ms": 100,
      "settle_s": 120, )" + common + "}");
  ASSERT_EQ(o.code, 0) << o.err;
  const Json s = ReadJson(Path("out/summary.json"));
  const Json& settle = s["settle"];
  EXPECT_EQ(settle["supported"], true);
  EXPECT_EQ(settle["idle"], true) << settle.dump();
  EXPECT_EQ(settle["timed_out"], false);
  EXPECT_EQ(settle["detail"], "no flush or merge pending or running");
  printf("settled after %.3f s: %llu flushes, %llu merges\n", settle["waited_s"].get<double>(),
         static_cast<unsigned long long>(settle["flushes"].get<uint64_t>()),
         static_cast<unsigned long long>(settle["merges"].get<uint64_t>()));
  // Every event in the time series completed during the phase.
  for (const Json& line : ReadLines(Path("out/timeseries.jsonl"))) {
    if (!line.contains("events")) continue;
    for (const Json& e : line["events"]) EXPECT_GE(e["end_s"].get<double>(), 0) << e.dump();
  }
}

// A load settles after its writes: it closes a tree with nothing left to do.
// (Reopening it recovers the last memtable from the log, which may start a
// merge: the next phase settles again, by default.)
TEST_F(CliTest, BuiltinLoadSettlesAfterItsWrites) {
  const std::string common = R"("engine": "builtin", "dir": ")" + Path("db") +
                             R"(", "engine_options": {"memtable_bytes": "64K",
      "merge_policy": "leveling", "io_budget_bytes_per_sec": "4M"}, "progress_s": 0,
      "workload": {"record_count": 20000, "value_size": 100})";
  Outcome o = RunWithConfig(R"({"phase": "load", "settle_s": 120, "progress_s": 60, )" +
                            common.substr(0, common.find(R"(, "progress_s": 0)")) +
                            common.substr(common.find(R"(, "progress_s": 0)") + 17) + "}");
  ASSERT_EQ(o.code, 0) << o.err;
  // The run's last progress line (written when its writes end) comes before the settle.
  const size_t last_progress = o.err.rfind("[lsm-driver] load ");
  ASSERT_NE(last_progress, std::string::npos) << o.err;
  EXPECT_GT(o.err.find("[lsm-driver] settling"), last_progress) << o.err;
  Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["ops_total"]["insert"], 20000);
  EXPECT_EQ(s["settle"]["idle"], true) << s["settle"].dump();
  EXPECT_EQ(s["settle"]["detail"], "no flush or merge pending or running");
  EXPECT_EQ(s["settle"]["timed_out"], false);
  // Settled after the writes, not before them: the settle's events are not in
  // the time series, and the series holds the load's writes.
  uint64_t writes = 0;
  for (const Json& line : ReadLines(Path("out/timeseries.jsonl"))) {
    writes += line["ops"]["writes"].get<uint64_t>();
  }
  EXPECT_EQ(writes, 20000u);
}
#endif

void ExpectInterrupted(const Json& s, int signo) {
  EXPECT_EQ(s["interrupted"], true);
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_EQ(s["exit_code"], 128 + signo);
  EXPECT_LT(s["elapsed_s"].get<double>(), 10);
  EXPECT_GT(s["ops_total"]["total"].get<uint64_t>(), 0u);
}

TEST_F(CliTest, SigintStopsCleanlyAndKeepsTheMeasurements) {
  WriteConfig(R"({"engine": "null", "phase": "running", "duration_s": 60, "interval_ms": 200,
      "progress_s": 0, "workload": {"record_count": 1000},
      "arrival": {"process": "constant", "rate": 10000}})");
  Outcome o = Run({"--config", Path("run.json"), "--out", Path("out")}, SIGINT, 1.5);
  EXPECT_EQ(o.code, 130) << o.err;
  EXPECT_CONTAINS(o.err, "interrupted by signal 2");
  const Json s = ReadJson(Path("out/summary.json"));
  ExpectInterrupted(s, SIGINT);
  EXPECT_GT(ReadLines(Path("out/timeseries.jsonl")).size(), 3u);
  EXPECT_GT(s["write_latency_us"]["count"].get<uint64_t>(), 5000u);
  EXPECT_TRUE(Exists(Path("out/histograms.json")));
}

// SIGUSR1 (the orchestrator's stopping rule has decided) ends the phase as
// if its duration had elapsed: exit 0, complete outputs, not interrupted.
TEST_F(CliTest, Sigusr1EndsThePhaseEarlyAndCleanly) {
  WriteConfig(R"({"engine": "null", "phase": "running", "duration_s": 30, "interval_ms": 200,
      "drain_s": 1, "progress_s": 0, "workload": {"record_count": 1000},
      "arrival": {"process": "poisson", "rate": 5000}})");
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(Path("stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    execl(LSM_DRIVER_BINARY, LSM_DRIVER_BINARY, "--config", Path("run.json").c_str(), "--out",
          Path("out").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // After the first interval line: the phase is under way.
  const std::string partial = Path("out/timeseries.jsonl.partial");
  while (ReadFile(partial).find('\n') == std::string::npos) {
    ASSERT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25))
        << "no interval line; stderr: " << ReadFile(Path("stderr.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGUSR1);
  int status = 0;
  waitpid(pid, &status, 0);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << ReadFile(Path("stderr.txt"));
  EXPECT_LT(elapsed, 25);
  EXPECT_EQ(ReadFile(Path("stderr.txt")).find("interrupted"), std::string::npos);
  const Json s = ReadJson(Path("out/summary.json"));
  EXPECT_EQ(s["status"], "ok");
  EXPECT_EQ(s["interrupted"], false);
  EXPECT_EQ(s["exit_code"], 0);
  ASSERT_TRUE(s["ended_early"].is_object()) << s["ended_early"].dump();
  const double at = s["ended_early"]["at_s"].get<double>();
  EXPECT_EQ(s["ended_early"]["duration_s"], 30.0);
  EXPECT_GT(at, 0.2);
  EXPECT_LT(at, 25);
  // The exact window ends where the phase did.
  EXPECT_NEAR(s["open_loop"]["window_s"].get<double>(), at, 1e-6);
  EXPECT_TRUE(Exists(Path("out/timeseries.jsonl")));
  EXPECT_TRUE(Exists(Path("out/histograms.json")));
}

TEST_F(CliTest, SigtermStopsAClosedLoop) {
  WriteConfig(R"({"engine": "null", "phase": "testing", "duration_s": 60, "progress_s": 0,
      "workload": {"record_count": 1000}})");
  Outcome o = Run({"--config", Path("run.json"), "--out", Path("out")}, SIGTERM, 1.0);
  EXPECT_EQ(o.code, 143) << o.err;
  ExpectInterrupted(ReadJson(Path("out/summary.json")), SIGTERM);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
