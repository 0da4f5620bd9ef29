#include "adapters/builtin_adapter.h"

#include <algorithm>
#include <functional>

#include "adapters/adapter_test_util.h"
#include "gtest/gtest.h"
#include "lsm/option_table.h"
#include "lsm/options.h"

namespace lsmbench {
namespace {

struct FieldCase {
  const char* name;
  const char* value;
  std::function<bool(const lsm::Options&)> check;
};

// One case per settable lsm::Options field, each with a non-default value.
std::vector<FieldCase> FieldCases() {
  using O = const lsm::Options&;
  return {
      {"block_bytes", "8K", [](O o) { return o.block_bytes == 8192; }},
      {"bloom_bits_per_key", "0", [](O o) { return o.bloom_bits_per_key == 0; }},
      {"constraint", "local", [](O o) { return o.constraint == lsm::ConstraintScope::kLocal; }},
      {"create_if_missing", "false", [](O o) { return !o.create_if_missing; }},
      {"dynamic_level_sizes", "true", [](O o) { return o.dynamic_level_sizes; }},
      {"error_if_exists", "1", [](O o) { return o.error_if_exists; }},
      {"exploring_max", "8", [](O o) { return o.exploring_max == 8; }},
      {"exploring_min", "3", [](O o) { return o.exploring_min == 3; }},
      {"exploring_ratio", "1.5", [](O o) { return o.exploring_ratio == 1.5; }},
      {"force_bytes", "1M", [](O o) { return o.force_bytes == (1u << 20); }},
      {"io_budget_bytes_per_sec", "32M",
       [](O o) { return o.io_budget_bytes_per_sec == (32u << 20); }},
      {"greedy_k", "3", [](O o) { return o.greedy_k == 3; }},
      {"idle_delay_ms", "250", [](O o) { return o.idle_delay_ms == 250; }},
      {"idle_mode", "after_burst", [](O o) { return o.idle_mode == lsm::IdleMode::kAfterBurst; }},
      {"idle_probe_ms", "100", [](O o) { return o.idle_probe_ms == 100; }},
      {"idle_threshold_bytes_per_sec", "2M",
       [](O o) { return o.idle_threshold_bytes_per_sec == (2u << 20); }},
      {"io_budget_charge_reads", "true", [](O o) { return o.io_budget_charge_reads; }},
      {"l0_merge_exact", "true", [](O o) { return o.l0_merge_exact; }},
      {"l0_stop", "20", [](O o) { return o.l0_stop == 20; }},
      {"l0_trigger", "2", [](O o) { return o.l0_trigger == 2; }},
      {"level1_bytes", "64M", [](O o) { return o.level1_bytes == (64u << 20); }},
      {"max_components", "77", [](O o) { return o.max_components == 77; }},
      {"max_components_per_level", "5", [](O o) { return o.max_components_per_level == 5; }},
      {"max_merge_components", "12", [](O o) { return o.max_merge_components == 12; }},
      {"memory_components", "4", [](O o) { return o.memory_components == 4; }},
      {"memtable_bytes", "2M", [](O o) { return o.memtable_bytes == (2u << 20); }},
      {"merge_exact_min", "true", [](O o) { return o.merge_exact_min; }},
      {"merge_policy", "leveling", [](O o) { return o.merge_policy == lsm::PolicyKind::kLeveling; }},
      {"merge_scheduler", "greedy", [](O o) { return o.merge_scheduler == lsm::SchedulerKind::kGreedy; }},
      {"min_merge_components", "3", [](O o) { return o.min_merge_components == 3; }},
      {"partition_bytes", "2M", [](O o) { return o.partition_bytes == (2u << 20); }},
      {"partition_pick", "choose-best", [](O o) { return o.partition_pick == lsm::PartitionPick::kChooseBest; }},
      {"size_ratio", "4", [](O o) { return o.size_ratio == 4; }},
      {"slowdown_components", "9", [](O o) { return o.slowdown_components == 9; }},
      {"sstable_bound", "4", [](O o) { return o.sstable_bound == 4; }},
      {"verify_checksums", "false", [](O o) { return !o.verify_checksums; }},
      {"wal", "sync", [](O o) { return o.wal == lsm::WalMode::kSync; }},
      {"write_control", "slowdown", [](O o) { return o.write_control == lsm::WriteControl::kSlowdown; }},
  };
}

TEST(BuiltinAdapterTest, EveryFieldIsSettableByName) {
  std::vector<std::string> tested;
  for (const FieldCase& c : FieldCases()) {
    lsm::Options o;
    Status s = ParseBuiltinOptions({{c.name, c.value}}, &o);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s.ToString();
    EXPECT_TRUE(c.check(o)) << c.name << "=" << c.value;
    EXPECT_FALSE(c.check(lsm::Options())) << c.name << ": the case must change the default";
    tested.push_back(c.name);
  }
  // A field added to the table needs a case here too.
  std::vector<std::string> table = lsm::OptionNames();
  std::sort(table.begin(), table.end());
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(table, tested);
}

TEST(BuiltinAdapterTest, AllWalModes) {
  lsm::Options o;
  ASSERT_TRUE(ParseBuiltinOptions({{"wal", "off"}}, &o).ok());
  EXPECT_EQ(lsm::WalMode::kOff, o.wal);
  ASSERT_TRUE(ParseBuiltinOptions({{"wal", "async"}}, &o).ok());
  EXPECT_EQ(lsm::WalMode::kAsync, o.wal);
}

TEST(BuiltinAdapterTest, ErrorsNameTheOptionAndTheChoices) {
  lsm::Options o;
  std::string names;
  for (const std::string& n : lsm::OptionNames()) names += (names.empty() ? "" : ", ") + n;
  EXPECT_EQ(
      "Invalid argument: engine option 'memtable_byts': unknown (did you mean "
      "'memtable_bytes'? choose from: " + names + ")",
            ParseBuiltinOptions({{"memtable_byts", "1M"}}, &o).ToString());
  EXPECT_EQ(
      "Invalid argument: engine option 'wal': bad value 'sometimes' "
      "(choose from: off, async, sync)",
      ParseBuiltinOptions({{"wal", "sometimes"}}, &o).ToString());

  std::string policies;
  for (const std::string n : lsm::kMergePolicyNames) {
    policies += (policies.empty() ? "" : ", ") + n;
  }
  EXPECT_EQ("Invalid argument: engine option 'merge_policy': bad value 'lazy' (choose from: " +
                policies + ")",
            ParseBuiltinOptions({{"merge_policy", "lazy"}}, &o).ToString());

  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"memtable_bytes", "12X"},
           {"memtable_bytes", "1"},  // below the floor
           {"memory_components", "1"},
           {"memory_components", "two"},
           {"bloom_bits_per_key", "-1"},
           {"size_ratio", "x"},
           {"verify_checksums", "yes"},
           {"min_merge_components", "1"},
           {"max_components", "-3"},
       }) {
    Status s = ParseBuiltinOptions({{name, value}}, &o);
    EXPECT_TRUE(s.IsInvalidArgument()) << name << "=" << value;
    EXPECT_NE(std::string::npos,
              s.ToString().find("engine option '" + name + "': bad value '" + value + "'"))
        << s.ToString();
  }
  // Rules between options: a ratio the (default, tiering) policy refuses.
  for (const char* ratio : {"1", "0.5", "2.5"}) {
    lsm::Options fresh;
    Status s = ParseBuiltinOptions({{"size_ratio", ratio}}, &fresh);
    EXPECT_NE(std::string::npos, s.ToString().find("engine option 'size_ratio': ")) << ratio;
  }
  Status s =
      ParseBuiltinOptions({{"min_merge_components", "8"}, {"max_merge_components", "4"}}, &o);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(std::string::npos, s.ToString().find("'min_merge_components'")) << s.ToString();
}

TEST(BuiltinAdapterTest, EveryBadOptionIsReportedAtOnce) {
  lsm::Options o;
  Status s = ParseBuiltinOptions(
      {{"memtable_byts", "4M"}, {"bloom_bits_per_key", "1000"}, {"merge_policy", "levling"}}, &o);
  ASSERT_TRUE(s.IsInvalidArgument());
  for (const char* part : {"'memtable_byts': unknown (did you mean 'memtable_bytes'?",
                           "'bloom_bits_per_key': bad value '1000'",
                           "'merge_policy': bad value 'levling'"}) {
    EXPECT_NE(std::string::npos, s.ToString().find(part)) << s.ToString();
  }
}

TEST(BuiltinAdapterTest, DescriptionAgreesWithTheEngine) {
  // Every option the engine accepts is described, with a default that the
  // engine's parser accepts and that is the field's default.
  std::vector<OptionDescription> described;
  ASSERT_TRUE(DescribeAdapterOptions("builtin", &described).ok());
  ASSERT_EQ(lsm::OptionNames().size(), described.size());
  const lsm::Options defaults;
  for (const OptionDescription& d : described) {
    const lsm::OptionInfo* info = lsm::FindOption(d.name);
    ASSERT_NE(nullptr, info) << d.name;
    EXPECT_EQ(info->get(defaults), d.default_text) << d.name;
    lsm::Options o;
    EXPECT_TRUE(ParseBuiltinOptions({{d.name, d.default_text}}, &o).ok()) << d.name;
    if (d.kind == lsm::OptionKind::kInt || d.kind == lsm::OptionKind::kSize) {
      // The bounds are accepted, one past them is not.
      const auto bound = [](double v) { return std::to_string(static_cast<int64_t>(v)); };
      EXPECT_TRUE(lsm::SetOption(&o, d.name, bound(d.min)).ok()) << d.name;
      EXPECT_TRUE(lsm::SetOption(&o, d.name, bound(d.max)).ok()) << d.name;
      EXPECT_FALSE(lsm::SetOption(&o, d.name, bound(d.max + 1)).ok()) << d.name;
      if (d.min > 0 || d.kind == lsm::OptionKind::kInt) {
        EXPECT_FALSE(lsm::SetOption(&o, d.name, bound(d.min - 1)).ok()) << d.name;
      }
    }
    if (d.kind == lsm::OptionKind::kChoice) {
      for (const std::string& c : d.choices) {
        EXPECT_TRUE(lsm::SetOption(&o, d.name, c).ok()) << d.name << "=" << c;
      }
    }
  }
}

TEST(BuiltinAdapterTest, CheckOptionsOpensNothing) {
  EXPECT_TRUE(CheckAdapterOptions("builtin", {{"memtable_bytes", "4M"}}).ok());
  EXPECT_TRUE(CheckAdapterOptions("builtin", {{"memtable_bytes", "-4M"}}).IsInvalidArgument());
  EXPECT_TRUE(CheckAdapterOptions("nope", {}).IsInvalidArgument());
}

TEST(BuiltinAdapterTest, OpenErrorsComeBeforeTheEngine) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter("builtin", dir.Sub("db"), {{"wal", "maybe"}}, &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(nullptr, db);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("db")));
}

TEST(BuiltinAdapterTest, MetricsFromEngineStats) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter("builtin", dir.Sub("db"),
                         {{"memtable_bytes", "64K"}, {"wal", "off"}, {"merge_policy", "tiering"}},
                         &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string value(100, 'z');
  const int n = 40000;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(db->Put(TestKey(i * 7919 % n), value).ok());
  ASSERT_TRUE(db->Delete(TestKey(0)).ok());
  std::string v;
  EXPECT_TRUE(db->Get(TestKey(0), &v).IsNotFound());
  const Metrics m = db->GetMetrics();
  for (const char* key :
       {"disk_components", "disk_components.L0", "stall_count", "stall_micros",
        "merge_stall_count", "merge_stall_micros", "memory_stall_count", "memory_stall_micros",
        "bytes_flushed", "bytes_merged", "bytes_merge_read", "merges_running", "merges_pending",
        "merge_remaining_bytes", "write_amplification", "flushes", "merges", "disk_bytes",
        "max_components", "memory_components_immutable", "user_bytes", "puts", "deletes",
        "gets"}) {
    EXPECT_TRUE(m.count(key)) << key;
  }
  EXPECT_EQ(n, m.at("puts"));
  EXPECT_EQ(1, m.at("deletes"));
  EXPECT_EQ(1, m.at("gets"));
  EXPECT_GE(m.at("flushes"), 10);
  EXPECT_GT(m.at("bytes_flushed"), 1e6);
  EXPECT_GE(m.at("disk_components"), 1);
  EXPECT_EQ(m.at("stall_count"), m.at("merge_stall_count") + m.at("memory_stall_count"));
  EXPECT_EQ(m.at("stall_micros"), m.at("merge_stall_micros") + m.at("memory_stall_micros"));
  EXPECT_GT(m.at("write_amplification"), 0);

  // wal=off: Close flushes, so the data survives a reopen.
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(OpenAdapter("builtin", dir.Sub("db"), {}, &db).ok());
  ASSERT_TRUE(db->Get(TestKey(n - 1), &v).ok());
  EXPECT_EQ(value, v);
  EXPECT_TRUE(db->Get(TestKey(0), &v).IsNotFound());
}

}  // namespace
}  // namespace lsmbench
