#include "adapters/builtin_adapter.h"

#include <algorithm>
#include <cmath>

#include "adapters/adapter_test_util.h"
#include "gtest/gtest.h"
#include "lsm/option_table.h"
#include "lsm/options.h"

namespace lsmbench {
namespace {

// A valid value of the option other than its default, from its description
// alone (the bounds, the middle, one off the default; the first that the
// engine accepts on its own), so every option of the table is set by name
// without a hand-written case. "" when there is none.
std::string OtherValue(const lsm::OptionInfo& info, const std::string& default_text) {
  std::vector<std::string> candidates;
  switch (info.kind) {
    case lsm::OptionKind::kBool:
      candidates = {default_text == "true" ? "false" : "true"};
      break;
    case lsm::OptionKind::kChoice:
      candidates = info.choices;
      break;
    case lsm::OptionKind::kReal:
      for (double v : {info.min, info.max, (info.min + info.max) / 2}) {
        candidates.push_back(std::to_string(v));
      }
      break;
    default: {
      const int64_t d = std::stoll(default_text);
      for (double v : {info.min, info.max, std::floor((info.min + info.max) / 2),
                       static_cast<double>(d + 1), static_cast<double>(d - 1)}) {
        candidates.push_back(std::to_string(static_cast<int64_t>(v)));
      }
    }
  }
  for (const std::string& c : candidates) {
    lsm::Options o;
    if (ParseBuiltinOptions({{info.name, c}}, &o).ok() && info.get(o) != default_text) return c;
  }
  return "";
}

TEST(BuiltinAdapterTest, EveryFieldIsSettableByName) {
  const lsm::Options defaults;
  for (const lsm::OptionInfo& info : lsm::OptionTable()) {
    const std::string default_text = info.get(defaults);
    const std::string value = OtherValue(info, default_text);
    ASSERT_NE("", value) << info.name << ": no valid value besides the default " << default_text;
    lsm::Options o;
    Status s = ParseBuiltinOptions({{info.name, value}}, &o);
    ASSERT_TRUE(s.ok()) << info.name << ": " << s.ToString();
    EXPECT_NE(default_text, info.get(o)) << info.name << "=" << value;
    // Only that field changed: every other option still reads its default.
    for (const lsm::OptionInfo& other : lsm::OptionTable()) {
      if (&other != &info) {
        EXPECT_EQ(other.get(defaults), other.get(o)) << info.name;
      }
    }
    // Text round trip: the field's text sets the same value again.
    lsm::Options again;
    ASSERT_TRUE(ParseBuiltinOptions({{info.name, info.get(o)}}, &again).ok()) << info.name;
    EXPECT_EQ(info.get(o), info.get(again)) << info.name;
  }
}

TEST(BuiltinAdapterTest, SizesAndNamesMeanWhatTheySay) {
  lsm::Options o;
  ASSERT_TRUE(ParseBuiltinOptions({{"block_bytes", "8K"},
                                   {"memtable_bytes", "2M"},
                                   {"merge_policy", "leveling"},
                                   {"merge_scheduler", "greedy"},
                                   {"constraint", "local"}},
                                  &o)
                  .ok());
  EXPECT_EQ(8192u, o.block_bytes);
  EXPECT_EQ(2u << 20, o.memtable_bytes);
  EXPECT_EQ(lsm::PolicyKind::kLeveling, o.merge_policy);
  EXPECT_EQ(lsm::SchedulerKind::kGreedy, o.merge_scheduler);
  EXPECT_EQ(lsm::ConstraintScope::kLocal, o.constraint);
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
        "gets", "background_error"}) {
    EXPECT_TRUE(m.count(key)) << key;
  }
  EXPECT_EQ(0, m.at("background_error"));
  EXPECT_EQ(n, m.at("puts"));
  EXPECT_EQ(1, m.at("deletes"));
  EXPECT_EQ(1, m.at("gets"));
  EXPECT_GE(m.at("flushes"), 10);
  EXPECT_GT(m.at("bytes_flushed"), 1e6);
  EXPECT_GE(m.at("disk_components"), 1);
  // One snapshot: the levels' bytes add up to the total exactly.
  double bytes_per_level = 0;
  for (const auto& [name, v] : m) {
    if (name.rfind("disk_bytes.L", 0) == 0) bytes_per_level += v;
  }
  EXPECT_GT(m.at("disk_bytes"), 0);
  EXPECT_EQ(m.at("disk_bytes"), bytes_per_level);
  EXPECT_EQ(m.count("disk_bytes.L0"), 1u);
  // Merges by the level they write: a series for every level of the tree, summing to the
  // totals.
  double pending = 0, running = 0;
  for (const auto& [name, v] : m) {
    if (name.rfind("merges_pending.L", 0) == 0) pending += v;
    if (name.rfind("merges_running.L", 0) == 0) running += v;
  }
  EXPECT_EQ(m.count("merges_pending.L0"), 1u);
  EXPECT_EQ(m.count("merges_running.L0"), 1u);
  EXPECT_EQ(pending, m.at("merges_pending"));
  EXPECT_EQ(running, m.at("merges_running"));
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

// The engine as a dataset: records with secondary fields, secondary queries
// validated against the primary index, and metrics in total and per tree.
TEST(BuiltinAdapterTest, DatasetRecordsQueriesAndMetrics) {
  TempDir dir;
  std::unique_ptr<KvAdapter> ds;
  Status s = OpenDatasetAdapter("builtin", dir.Sub("ds"),
                                {{"memtable_bytes", "64K"}, {"secondary_maintenance", "lazy"}},
                                2, &ds);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string value(100, 'r');
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(ds->PutRecord(TestKey(i), {static_cast<uint64_t>(i), 7}, value).ok());
  }
  // Move the first 100 records' field 0 away: their old entries go stale.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(ds->PutRecord(TestKey(i), {static_cast<uint64_t>(n + i), 7}, value).ok());
  }
  EXPECT_TRUE(ds->Put(TestKey(1), value).IsInvalidArgument()) << "a record needs its fields";
  size_t returned = 0;
  ASSERT_TRUE(ds->QuerySecondary(0, 50, 150, &returned).ok());
  EXPECT_EQ(returned, 50u);  // 100..149; 50..99 moved away
  ASSERT_TRUE(ds->QuerySecondary(1, 7, 8, &returned).ok());
  EXPECT_EQ(returned, static_cast<size_t>(n));
  std::string v;
  ASSERT_TRUE(ds->Get(TestKey(5), &v).ok());
  EXPECT_EQ(v, value);
  const Metrics m = ds->GetMetrics();
  EXPECT_EQ(m.at("stale_entries_skipped"), 50);
  EXPECT_EQ(m.at("records_put"), n + 100);
  EXPECT_EQ(m.at("queries"), 2);
  EXPECT_EQ(m.at("query_results"), 50 + n);
  EXPECT_EQ(m.at("puts"), m.at("primary.puts") + m.at("secondary0.puts") +
                              m.at("secondary1.puts"));
  EXPECT_EQ(m.at("primary.puts"), n + 100);
  EXPECT_GE(m.at("flush_rounds"), 1);
  // A round flushes every tree, each in its own background job: only when
  // the round is done do the trees' flush counts agree.
  SettleReport r;
  ASSERT_TRUE(ds->Settle(120, &r).ok());
  ASSERT_TRUE(r.idle) << r.detail;
  const Metrics settled = ds->GetMetrics();
  EXPECT_EQ(settled.at("primary.flushes"), settled.at("secondary0.flushes"));
  EXPECT_EQ(settled.at("primary.flushes"), settled.at("secondary1.flushes"));
  ASSERT_TRUE(ds->Close().ok());

  // Engines without secondary indexes say so by name.
  std::unique_ptr<KvAdapter> other;
  s = OpenDatasetAdapter("null", dir.Sub("null"), {}, 2, &other);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("engine 'null' keeps no secondary indexes"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(AdapterHasSecondaryIndexes("builtin"));
  EXPECT_FALSE(AdapterHasSecondaryIndexes("null"));
}

// A burst of writes through tiny memtables leaves flushes and merges behind;
// Settle waits until none is pending or running, and the stats agree.
TEST(BuiltinAdapterTest, SettlesToIdleAfterABurst) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("builtin", dir.Sub("db"),
                          {{"memtable_bytes", "64K"}, {"merge_policy", "leveling"}}, &db)
                  .ok());
  PutBurst(db.get(), 20000);
  SettleReport r;
  ASSERT_TRUE(db->Settle(120, &r).ok());
  EXPECT_TRUE(r.supported);
  ASSERT_TRUE(r.idle) << r.detail;
  EXPECT_EQ("no flush or merge pending or running", r.detail);
  EXPECT_LE(r.waited_s, 120 + 1);
  const Metrics m = db->GetMetrics();
  EXPECT_EQ(0, m.at("merges_pending"));
  EXPECT_EQ(0, m.at("merges_running"));
  EXPECT_EQ(0, m.at("memory_components_immutable"));
  EXPECT_GE(m.at("flushes"), 10);
  // The flushes and merges of the burst were told as events.
  EXPECT_FALSE(db->TakeEvents().empty());
  ASSERT_TRUE(db->Close().ok());
}

// A time limit of 0 with a flush in progress: supported, not idle. The I/O
// budget makes it certain: the first flush takes the budget into debt
// (64 KiB at once), so the second waits about a second to be paid for, and
// the burst ends right after that second flush began.
TEST(BuiltinAdapterTest, SettleTimesOutWhileAFlushIsPending) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("builtin", dir.Sub("db"),
                          {{"memtable_bytes", "64K"}, {"io_budget_bytes_per_sec", "64K"}}, &db)
                  .ok());
  const std::string value(100, 'z');
  for (int i = 0;; ++i) {
    const Metrics m = db->GetMetrics();
    if (m.at("flushes") >= 1 && m.at("memory_components_immutable") >= 1) break;
    ASSERT_LT(i, 100000) << "no second flush began";
    ASSERT_TRUE(db->Put(TestKey(i), value).ok());
  }
  SettleReport r;
  ASSERT_TRUE(db->Settle(0, &r).ok());
  EXPECT_TRUE(r.supported);
  EXPECT_FALSE(r.idle) << r.detail;
  EXPECT_NE(std::string::npos, r.detail.find("1 memtables waiting for or in flush")) << r.detail;
  ASSERT_TRUE(db->Close().ok());
}

// A dataset settles when every tree has: its flush rounds and each index's
// merges.
TEST(BuiltinAdapterTest, DatasetSettlesToIdleAfterABurst) {
  TempDir dir;
  std::unique_ptr<KvAdapter> ds;
  ASSERT_TRUE(OpenDatasetAdapter("builtin", dir.Sub("ds"), {{"memtable_bytes", "64K"}}, 2, &ds)
                  .ok());
  const std::string value(100, 'r');
  const int n = 5000;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(ds->PutRecord(TestKey(i), {static_cast<uint64_t>(i), 7}, value).ok());
  }
  SettleReport r;
  ASSERT_TRUE(ds->Settle(120, &r).ok());
  EXPECT_TRUE(r.supported);
  ASSERT_TRUE(r.idle) << r.detail;
  const Metrics m = ds->GetMetrics();
  for (const char* tree : {"primary.", "secondary0.", "secondary1."}) {
    EXPECT_EQ(0, m.at(std::string(tree) + "merges_pending")) << tree;
    EXPECT_EQ(0, m.at(std::string(tree) + "merges_running")) << tree;
    EXPECT_EQ(0, m.at(std::string(tree) + "memory_components_immutable")) << tree;
  }
  EXPECT_GE(m.at("flush_rounds"), 1);
  ASSERT_TRUE(ds->Close().ok());
}

}  // namespace
}  // namespace lsmbench
