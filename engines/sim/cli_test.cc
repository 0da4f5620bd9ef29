// lsm-sim's command line: the contract's columns, checkpoints, formats, the
// flush file, and clear errors for bad input (run through the real binary
// where the exit code matters).
#include "sim/cli.h"
#include "lsm/memtable_capacity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace lsm::sim {
namespace {

CliOptions Parse(const std::vector<std::string>& args, Status* status = nullptr) {
  CliOptions o;
  bool help = false;
  Status s = ParseArgs(args, &o, &help);
  if (status != nullptr) *status = s;
  return o;
}

std::string RunCli(const CliOptions& o, int* code = nullptr, std::string* error = nullptr) {
  std::ostringstream out, err;
  const int rc = RunSimulation(o, out, err);
  if (code != nullptr) *code = rc;
  if (error != nullptr) *error = err.str();
  return out.str();
}

TEST(SimCli, CsvRowsPerCheckpointAndTheEnd) {
  Status s;
  CliOptions o = Parse({"--policy", "constant", "--k", "2", "--flushes", "6", "--flush-bytes",
                        "1", "--checkpoints", "2,3"},
                       &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Hand values as in simulator_test's ConstantByHand.
  EXPECT_EQ(RunCli(o),
            "policy,k,flushes,write_amp,avg_sstables,sstables\n"
            "constant,2,2,1.0000,1.5000,2\n"
            "constant,2,3,2.0000,1.3333,1\n"
            "constant,2,6,2.3333,1.5000,2\n");
}

TEST(SimCli, JsonlCarriesTheBytes) {
  CliOptions o = Parse({"--policy=constant", "--k=2", "--flushes=3", "--flush-bytes=1K",
                        "--format=jsonl"});
  EXPECT_EQ(RunCli(o),
            "{\"policy\":\"constant\",\"k\":2,\"flushes\":3,\"write_amp\":2.0000,"
            "\"avg_sstables\":1.3333,\"sstables\":1,\"bytes_flushed\":3072,"
            "\"bytes_written\":6144,\"merges\":1,\"moves\":0}\n");
}

TEST(SimCli, TimedModelAddsColumns) {
  CliOptions o = Parse({"--policy", "binomial", "--k", "4", "--flushes", "100", "--bandwidth",
                        "100M", "--arrival-rate", "10M", "--scheduler", "greedy"});
  const std::string out = RunCli(o);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "policy,k,flushes,write_amp,avg_sstables,sstables,time_s,stall_s,max_sstables");
  const std::string row = out.substr(out.find('\n') + 1);
  EXPECT_EQ(row.rfind("binomial,4,100,", 0), 0u) << out;
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), 8) << out;
}

TEST(SimCli, FlushFileSizesAreUsedInOrder) {
  const std::string path = ::testing::TempDir() + "/sim_cli_sizes.txt";
  {
    std::ofstream f(path);
    f << "# sizes\n1\n\n2\n3K\n";
  }
  CliOptions o = Parse({"--policy", "constant", "--k", "1", "--flush-file", path,
                        "--format", "jsonl"});
  // [1] ; [1,2] -> 3 ; [3,3072] -> 3075.
  const std::string out = RunCli(o);
  EXPECT_NE(out.find("\"flushes\":3,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"bytes_written\":" + std::to_string(1 + 2 + 3072 + 3 + 3075)),
            std::string::npos)
      << out;
  int code = 0;
  std::string err;
  o.flushes = 4;
  EXPECT_EQ(RunCli(o, &code, &err), "");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("holds 3"), std::string::npos) << err;
  std::remove(path.c_str());
}

TEST(SimCli, ParametersThatDoNotGoTogetherAreBadInput) {
  // Each flag is valid alone; together they are refused as bad input (exit 2), naming both.
  CliOptions o = Parse({"--policy", "tiering", "--flushes", "10", "--key-space", "1M",
                        "--obsolete", "0.1"});
  int code = 0;
  std::string err;
  EXPECT_EQ(RunCli(o, &code, &err), "");
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("obsolete fraction and a key space"), std::string::npos) << err;
}

TEST(SimCli, MemtableEntriesAsksTheEngine) {
  Status s;
  CliOptions o = Parse({"--memtable-entries", "16,1000", "--memtable_bytes", "2M"}, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();  // no --policy or --flushes needed
  EXPECT_EQ(RunCli(o), "{\"memtable_bytes\":2097152,\"key_bytes\":16,\"value_bytes\":1000,"
                       "\"entries\":" + std::to_string(MemTableCapacity(2 << 20, 16, 1000)) +
                       "}\n");
  for (const char* bad : {"16", "16,x", "-1,100", ",100"}) {
    Parse({"--memtable-entries", bad}, &s);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.ToString().find("--memtable-entries"), std::string::npos) << s.ToString();
  }
  Parse({"--memtable-entries", "16,100", "--memtable_bytes", "1"}, &s);
  EXPECT_NE(s.ToString().find("memtable_bytes"), std::string::npos) << s.ToString();
}

TEST(SimCli, BadInputNamesTheFlag) {
  Status s;
  Parse({"--policy", "binomial", "--k", "0", "--flushes", "5"}, &s);
  EXPECT_NE(s.ToString().find("--k: engine option 'sstable_bound': bad value '0'"),
            std::string::npos)
      << s.ToString();
  // Every engine option is a flag by its own name ('-' for '_' too).
  CliOptions parsed = Parse({"--policy", "exploring", "--exploring-ratio", "2",
                             "--exploring_max", "7", "--flushes", "5"}, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(2, parsed.sim.engine.exploring_ratio);
  EXPECT_EQ(7, parsed.sim.engine.exploring_max);
  Parse({"--policy", "exploring", "--exploring_min", "8", "--exploring_max", "7", "--flushes",
         "5"}, &s);
  EXPECT_NE(s.ToString().find("'exploring_min': 8 exceeds exploring_max 7"), std::string::npos)
      << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--checkpoints", "3,2"}, &s);
  EXPECT_NE(s.ToString().find("ascending"), std::string::npos) << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--checkpoints", "9"}, &s);
  EXPECT_NE(s.ToString().find("exceeds --flushes 5"), std::string::npos) << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--format", "xml"}, &s);
  EXPECT_NE(s.ToString().find("csv or jsonl"), std::string::npos) << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--bogus", "1"}, &s);
  EXPECT_TRUE(s.IsInvalidArgument());
  Parse({"--k", "4", "--flushes", "5"}, &s);
  EXPECT_NE(s.ToString().find("--policy is required"), std::string::npos);
  Parse({"--policy", "binomial", "--flushes", "5", "--bandwidth", "1M"}, &s);
  EXPECT_NE(s.ToString().find("go together"), std::string::npos);
  // The time model's flags name what they allow.
  Parse({"--policy", "binomial", "--flushes", "5", "--flush-priority", "fast"}, &s);
  EXPECT_NE(s.ToString().find("strict, alternate or shared"), std::string::npos) << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--flush-time", "maybe"}, &s);
  EXPECT_NE(s.ToString().find("on or none"), std::string::npos) << s.ToString();
  Parse({"--policy", "binomial", "--flushes", "5", "--bandwidth", "1M", "--arrival-rate", "2M",
         "--write-rate", "1M"}, &s);
  EXPECT_NE(s.ToString().find("--write-rate must be >= --arrival-rate"), std::string::npos)
      << s.ToString();
  CliOptions timed = Parse({"--policy", "binomial", "--flushes", "5", "--bandwidth", "1M",
                            "--arrival-rate", "1M", "--flush-rate", "64K", "--merge-rate", "2M",
                            "--load-flushes", "7", "--flush-priority", "strict"}, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(65536, timed.sim.time.flush_rate);
  EXPECT_EQ(2 << 20, timed.sim.time.merge_rate);
  EXPECT_EQ(7u, timed.load_flushes);
  EXPECT_EQ(FlushPriority::kStrict, timed.sim.time.flush_priority);
  // An unknown policy is reported with the valid names.
  Parse({"--policy", "x", "--flushes", "5"}, &s);
  EXPECT_NE(s.ToString().find("--policy: engine option 'merge_policy': bad value 'x' (choose "
                              "from: leveling"),
            std::string::npos)
      << s.ToString();
}

TEST(SimCli, BinaryExitCodes) {
  const std::string bin = LSM_SIM_BINARY;
  EXPECT_EQ(std::system((bin + " --help > /dev/null").c_str()), 0);
  EXPECT_NE(std::system((bin + " --policy binomial --k 0 --flushes 3 2> /dev/null").c_str()), 0);
  EXPECT_EQ(std::system((bin + " --policy binomial --k 3 --flushes 3 > /dev/null").c_str()), 0);
}

}  // namespace
}  // namespace lsm::sim
