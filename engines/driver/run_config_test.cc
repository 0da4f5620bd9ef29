#include "driver/run_config.h"

#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "driver/yaml_json.h"

namespace lsmbench {
namespace driver {
namespace {

const std::vector<std::string> kEngines = {"null", "rocksdb"};

Status ParseText(const std::string& text, RunConfig* c, const std::string& dir = ".") {
  return ParseRunConfig(Json::parse(text), dir, kEngines, c);
}

std::string Error(const std::string& text) {
  RunConfig c;
  Status s = ParseText(text, &c);
  EXPECT_FALSE(s.ok()) << text;
  return ErrorText(s);
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

const char kMinimal[] = R"({"engine": "null", "phase": "testing", "duration_s": 10,
                             "workload": {"record_count": 100}})";

TEST(RunConfigTest, MinimalTestingPhaseAndDefaults) {
  RunConfig c;
  Status s = ParseText(kMinimal, &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.phase, Phase::kTesting);
  EXPECT_EQ(c.threads, 1u);
  EXPECT_EQ(c.interval_ms, 1000u);
  EXPECT_EQ(c.workload.record_count, 100u);
  EXPECT_EQ(c.workload.mix[kUpdate], 1.0);
  EXPECT_EQ(c.insert_start, 100u);
  EXPECT_EQ(c.seed, 1u);
  // The echo parses back to the same configuration.
  RunConfig again;
  Json echo = c.ToJson();
  echo.erase("workload_file");
  s = ParseRunConfig(echo, ".", kEngines, &again);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << echo.dump(1);
  EXPECT_EQ(again.ToJson(), c.ToJson());
}

TEST(RunConfigTest, FullRunningPhase) {
  RunConfig c;
  Status s = ParseText(R"({
    "engine": "rocksdb", "engine_options": {"write_buffer_size": "64M", "x": 3},
    "dir": "/tmp/db", "label": "point 7", "phase": "running", "duration_s": 60,
    "warmup_s": 10, "threads": 2, "interval_ms": 500, "seed": 9, "max_ops": 1000000,
    "insert_start": 5000, "progress_s": 0, "spin_us": 20, "slow_ms": 50, "drain_s": 5,
    "arrival": {"process": "poisson", "rate": 12345.5},
    "queries": {"threads": 2, "operations": {"get": 0.75, "scan": 0.25}, "scan_length": 10,
                "distribution": "latest"},
    "workload": {"record_count": 1000, "key_size": 24, "key_prefix": "k",
                 "value_size": {"min": 10, "max": 20},
                 "operations": {"insert": 0.25, "update": 0.25, "delete": 0.1, "read": 0.3,
                                "scan": 0.1},
                 "distribution": "zipfian", "zipf_theta": 0.8, "scan_length": 5}})",
                       &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.engine_options.at("write_buffer_size"), "64M");
  EXPECT_EQ(c.engine_options.at("x"), "3");
  EXPECT_EQ(c.arrival.process, ArrivalSpec::Process::kPoisson);
  EXPECT_EQ(c.arrival.rate, 12345.5);
  EXPECT_EQ(c.queries.threads, 2u);
  EXPECT_EQ(c.queries.scan, 0.25);
  EXPECT_EQ(c.queries.distribution, Distribution::kLatest);
  EXPECT_EQ(c.workload.value_size_min, 10u);
  EXPECT_EQ(c.workload.value_size_max, 20u);
  EXPECT_EQ(c.workload.distribution, Distribution::kZipfian);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.insert_start, 5000u);
  EXPECT_EQ(c.drain_s, 5.0);
}

TEST(RunConfigTest, UnknownFieldsAreNamedWithTheirPath) {
  std::string e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 1,
                            "workload": {"record_count": 1}, "duraton_s": 5})");
  EXPECT_CONTAINS(e, "duraton_s: unknown field (allowed: ");
  EXPECT_CONTAINS(e, "duration_s");
  e = Error(R"({"engine": "null", "phase": "running", "duration_s": 1,
                "workload": {"record_count": 1}, "arrival": {"process": "constant", "rat": 5}})");
  EXPECT_CONTAINS(e, "arrival.rat: unknown field (allowed: ");
  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 1,
                "workload": {"record_count": 1, "operations": {"updat": 1}}})");
  EXPECT_CONTAINS(e, "workload.operations.updat: unknown field");
  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 1,
                "workload": {"record_count": 1, "value_size": {"min": 1, "mx": 2}}})");
  EXPECT_CONTAINS(e, "workload.value_size.mx: unknown field");
  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 1,
                "workload": {"record_count": 1}, "queries": {"thread": 1}})");
  EXPECT_CONTAINS(e, "queries.thread: unknown field");
}

TEST(RunConfigTest, InvalidValuesAreExplained) {
  EXPECT_CONTAINS(Error(R"({"engine": "leveldbx", "phase": "testing", "duration_s": 1,
                            "workload": {"record_count": 1}})"),
                  "engine: unknown engine 'leveldbx' (available: null, rocksdb; no plugin "
                  "lsmbench-leveldbx.so on the plugin path: ");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "warmup", "duration_s": 1,
                            "workload": {"record_count": 1}})"),
                  "phase: unknown value \"warmup\" (choose from: load, testing, running)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing",
                            "workload": {"record_count": 1}})"),
                  "duration_s: required");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": -1,
                            "workload": {"record_count": 1}})"),
                  "duration_s: must be >= 0");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "warmup_s": 5, "workload": {"record_count": 1}})"),
                  "warmup_s: must be shorter than duration_s");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 1.5,
                            "warmup_s": 1.2, "workload": {"record_count": 1}})"),
                  "warmup_s: rounded up to whole intervals");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "threads": 0, "workload": {"record_count": 1}})"),
                  "threads: must be >= 1 (got 0)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "threads": 1.5, "workload": {"record_count": 1}})"),
                  "threads: must be a non-negative integer");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1, "distribution": "pareto"}})"),
                  "workload.distribution: unknown value \"pareto\" (choose from: uniform, "
                  "zipfian, latest, scrambled_zipfian)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1, "zipf_theta": 1}})"),
                  "workload.zipf_theta: must be in (0, 1)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1, "operations": {"update": 0.5}}})"),
                  "workload.operations: proportions must sum to 1");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1, "operations": {"update": -1,
                                         "read": 2}}})"),
                  "workload.operations.update: must be >= 0");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 0}})"),
                  "workload.record_count: is 0");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1000, "key_size": 6}})"),
                  "workload.record_count: exceeds the 100 distinct keys");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "running", "duration_s": 5,
                            "workload": {"record_count": 1},
                            "arrival": {"process": "constant", "rate": -5}})"),
                  "arrival.rate: must be > 0");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "running", "duration_s": 5,
                            "workload": {"record_count": 1}})"),
                  "arrival: required for phase running");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1},
                            "arrival": {"process": "constant", "rate": 5}})"),
                  "arrival: only used by phase running");
  EXPECT_CONTAINS(Error(R"({"engine": "rocksdb", "phase": "testing", "duration_s": 5,
                            "workload": {"record_count": 1}})"),
                  "dir: required");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 5})"),
                  "workload");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": "5",
                            "workload": {"record_count": 1}})"),
                  "duration_s: expected a number, got a string");
  EXPECT_CONTAINS(Error(R"([1, 2])"), "expected an object");
}

// settle_s: off by default (and then not echoed, so earlier summaries' config
// objects stay as they were), any phase, 0..86400 seconds.
TEST(RunConfigTest, SettleBeforeThePhase) {
  RunConfig c;
  ASSERT_TRUE(ParseText(kMinimal, &c).ok());
  EXPECT_EQ(c.settle_s, 0);
  EXPECT_FALSE(c.ToJson().contains("settle_s"));
  for (const char* phase : {"load", "testing", "running"}) {
    Json j = Json::parse(R"({"engine": "null", "duration_s": 10, "settle_s": 120,
                             "workload": {"record_count": 100},
                             "arrival": {"process": "constant", "rate": 10}})");
    j["phase"] = phase;
    if (std::string(phase) != "running") j.erase("arrival");
    Status s = ParseRunConfig(j, ".", kEngines, &c);
    ASSERT_TRUE(s.ok()) << phase << ": " << s.ToString();
    EXPECT_EQ(c.settle_s, 120);
    EXPECT_EQ(c.ToJson()["settle_s"], 120.0);
    RunConfig again;
    ASSERT_TRUE(ParseRunConfig(c.ToJson(), ".", kEngines, &again).ok());
    EXPECT_EQ(again.settle_s, 120);
  }
  ASSERT_TRUE(ParseText(R"({"engine": "null", "phase": "testing", "duration_s": 10,
                            "settle_s": 86400, "workload": {"record_count": 1}})",
                        &c)
                  .ok());
  EXPECT_EQ(c.settle_s, 86400);
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 10,
                            "settle_s": -1, "workload": {"record_count": 1}})"),
                  "settle_s: must be >= 0 (got -1)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 10,
                            "settle_s": 86401, "workload": {"record_count": 1}})"),
                  "settle_s: must be <= 86400 (got 86401)");
  EXPECT_CONTAINS(Error(R"({"engine": "null", "phase": "testing", "duration_s": 10,
                            "settle_s": "1m", "workload": {"record_count": 1}})"),
                  "settle_s: expected a number, got a string");
}

TEST(RunConfigTest, LoadPhaseNeedsNoDuration) {
  RunConfig c;
  Status s = ParseText(R"({"engine": "null", "phase": "load", "workload": {"record_count": 5}})",
                       &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.duration_s, 0);
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lsm-driver-config-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
  }

 private:
  std::string path_;
};

TEST(RunConfigTest, WorkloadFileWithInlineOverridesAndArrivalDefaults) {
  TempDir dir;
  dir.Write("w.yaml",
            "name: burst\nrecord_count: 1000\nvalue_size: 100\n"
            "operations: {update: 0.5, read: 0.5}\n"
            "arrival:\n  process: bursts\n  burst_s: 10\n  idle_s: 20\n");
  RunConfig c;
  // Relative to the configuration's directory; inline fields override
  // whole values; the run's arrival adds the rate.
  Status s = ParseText(R"({"engine": "null", "phase": "running", "duration_s": 5,
                           "workload_file": "w.yaml",
                           "workload": {"record_count": 50, "operations": {"insert": 1}},
                           "arrival": {"rate": 777}})",
                       &c, dir.path());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.workload.name, "burst");
  EXPECT_EQ(c.workload.record_count, 50u);
  EXPECT_EQ(c.workload.value_size_max, 100u);
  EXPECT_EQ(c.workload.mix[kInsert], 1.0);
  EXPECT_EQ(c.workload.mix[kRead], 0.0);
  EXPECT_EQ(c.arrival.process, ArrivalSpec::Process::kBursts);
  EXPECT_EQ(c.arrival.rate, 777);
  EXPECT_EQ(c.arrival.burst_s, 10);
  EXPECT_EQ(c.workload_file, dir.path() + "/w.yaml");

  // Another process in run.json replaces the workload's arrival.
  s = ParseText(R"({"engine": "null", "phase": "running", "duration_s": 5,
                    "workload_file": "w.yaml", "arrival": {"process": "constant", "rate": 5}})",
                &c, dir.path());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.arrival.process, ArrivalSpec::Process::kConstant);

  // The workload's bursts without a rate: the error says what is missing.
  std::string e = Error(R"({"engine": "null", "phase": "running", "duration_s": 5,
                            "workload_file": ")" + dir.path() + R"(/w.yaml"})");
  EXPECT_CONTAINS(e, "arrival.rate: required");

  dir.Write("bad.yaml", "record_count: 10\nvalue_sise: 5\n");
  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                "workload_file": ")" + dir.path() + R"(/bad.yaml"})");
  EXPECT_CONTAINS(e, "workload.value_sise: unknown field");
  EXPECT_CONTAINS(e, "bad.yaml");

  dir.Write("syntax.yaml", "record_count: [1,\n");
  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                "workload_file": ")" + dir.path() + R"(/syntax.yaml"})");
  EXPECT_CONTAINS(e, "YAML syntax error at line");

  e = Error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
                "workload_file": "/nonexistent/w.yaml"})");
  EXPECT_CONTAINS(e, "workload_file: /nonexistent/w.yaml: cannot read");
}

// Records with secondary fields (datasets): the workload's fields, the
// secondary queries over them, and the engines that can keep them.
TEST(RunConfigTest, SecondaryFieldsAndQueries) {
  const std::vector<std::string> engines = {"builtin", "null"};
  RunConfig c;
  Status s = ParseRunConfig(Json::parse(R"({"engine": "builtin", "phase": "testing",
      "dir": "/tmp/d", "duration_s": 5, "workload": {"record_count": 1000, "secondary_fields": 2},
      "queries": {"threads": 2, "operations": {"secondary": 0.5, "get": 0.5},
                  "field": 1, "selectivity": 100}})"),
                            ".", engines, &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.workload.secondary_fields, 2u);
  EXPECT_EQ(c.workload.SecondaryValues(), 1000u);  // record_count by default
  EXPECT_EQ(c.queries.field, 1u);
  EXPECT_EQ(c.queries.selectivity, 100u);
  EXPECT_DOUBLE_EQ(c.queries.secondary, 0.5);
  RunConfig again;
  s = ParseRunConfig(c.ToJson(), ".", engines, &again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(again.ToJson(), c.ToJson());

  auto error = [&](const std::string& text) {
    RunConfig bad;
    Status st = ParseRunConfig(Json::parse(text), ".", engines, &bad);
    EXPECT_FALSE(st.ok()) << text;
    return ErrorText(st);
  };
  const std::string head =
      R"({"engine": "builtin", "dir": "/tmp/d", "phase": "testing", "duration_s": 5, )";
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 1000, "secondary_fields": 2},
      "queries": {"threads": 1, "operations": {"secondary": 1}, "field": 2}})"),
                  "queries.field: the workload defines 2 secondary fields (0..1), not 2");
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 1000, "secondary_fields": 1},
      "queries": {"threads": 1, "operations": {"secondary": 1}, "selectivity": 1001}})"),
                  "queries.selectivity: a range of 1001 values is wider than the 1000");
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 1000},
      "queries": {"threads": 1, "operations": {"secondary": 1}}})"),
                  "queries.operations: secondary queries need records with secondary fields");
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 10, "secondary_values": 5}})"),
                  "workload.secondary_values: describes secondary fields, but "
                  "secondary_fields is 0");
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 10, "secondary_fields": 17}})"),
                  "workload.secondary_fields");
  EXPECT_CONTAINS(error(R"({"engine": "null", "phase": "testing", "duration_s": 5,
      "workload": {"record_count": 10, "secondary_fields": 1}})"),
                  "workload.secondary_fields: engine 'null' keeps no secondary indexes");
  EXPECT_CONTAINS(error(head + R"("workload": {"record_count": 10, "secondary_fields": 1},
      "queries": {"threads": 1, "operations": {"scan": 0.5, "secondary": 0.5}}})"),
                  "queries.operations: scans of a dataset's primary index are not supported");
}

TEST(YamlJsonTest, ScalarsAndQuoting) {
  Json j;
  ASSERT_TRUE(YamlToJson("a: 1\nb: '2'\nc: 1.5\nd: true\ne: x\nf: [1, -2]\ng: ~\nh: 1e3\n"
                         "i: 18446744073709551615\n",
                         &j)
                  .ok());
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], "2");
  EXPECT_EQ(j["c"], 1.5);
  EXPECT_EQ(j["d"], true);
  EXPECT_EQ(j["e"], "x");
  EXPECT_EQ(j["f"], Json::parse("[1, -2]"));
  EXPECT_TRUE(j["g"].is_null());
  EXPECT_EQ(j["h"], 1000.0);
  EXPECT_EQ(j["i"].get<uint64_t>(), 18446744073709551615ULL);
  EXPECT_FALSE(YamlToJson("a: 1\na: 2\n", &j).ok());  // duplicate key
}

TEST(WorkloadFilesTest, EveryExampleParses) {
  const std::string dir = LSM_WORKLOADS_DIR;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  int files = 0;
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 6 || name.substr(name.size() - 5) != ".yaml") continue;
    names.push_back(name);
  }
  closedir(d);
  for (const auto& name : names) {
    Json j;
    Status s = ReadConfigFile(dir + "/" + name, &j);
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    WorkloadSpec w;
    s = ParseWorkload(j, "workload", &w);
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    // Files are named by their parameters: the name field says the same.
    EXPECT_EQ(w.name + ".yaml", name);
    files++;
    // As the workload of a running phase (bursts need the rate from run.json).
    RunConfig c;
    const std::string process =
        w.arrival.is_null() ? "constant" : w.arrival["process"].get<std::string>();
    // Records with secondary fields need an engine that keeps secondary indexes.
    const std::string engine = w.secondary_fields > 0 ? R"("builtin", "dir": "/tmp/d")"
                                                      : R"("null")";
    s = ParseRunConfig(Json::parse(R"({"engine": )" + engine + R"(, "phase": "running",
                      "duration_s": 5, "workload_file": ")" + dir + "/" + name + R"(",
                      "arrival": {"rate": 1000, "process": ")" + process + R"("}})"),
                       ".", {"builtin", "null"}, &c);
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
  }
  for (const char* required : {"update-uniform-1kb.yaml", "update-zipf-1kb.yaml",
                               "insert-only-1kb.yaml", "burst-write-uniform.yaml"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
  EXPECT_GE(files, 4);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
