#include "lsm/option_table.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "gtest/gtest.h"
#include "option_test_util.h"

namespace lsm {
namespace {

TEST(OptionTableTest, DefaultsAreValidAndRoundTrip) {
  const Options defaults;
  ASSERT_TRUE(CheckOptions(defaults).ok()) << CheckOptions(defaults).ToString();
  std::set<std::string> names;
  for (const OptionInfo& info : OptionTable()) {
    EXPECT_TRUE(names.insert(info.name).second) << "declared twice: " << info.name;
    EXPECT_NE(std::string(info.doc), "") << info.name;
    Options o;
    const std::string text = info.get(defaults);
    ASSERT_TRUE(info.set(info, text, &o).ok()) << info.name << "=" << text;
    EXPECT_EQ(text, info.get(o)) << info.name;
    if (info.kind == OptionKind::kChoice) {
      EXPECT_FALSE(info.choices.empty()) << info.name;
    } else {
      EXPECT_TRUE(info.choices.empty()) << info.name;
    }
  }
}

TEST(OptionTableTest, SetOptionParsesEachKind) {
  Options o;
  ASSERT_TRUE(SetOption(&o, "memtable_bytes", "4M").ok());
  EXPECT_EQ(4u << 20, o.memtable_bytes);
  ASSERT_TRUE(SetOption(&o, "wal", "sync").ok());
  EXPECT_EQ(WalMode::kSync, o.wal);
  EXPECT_EQ("sync", FindOption("wal")->get(o));
  ASSERT_TRUE(SetOption(&o, "merge_policy", "leveling").ok());
  EXPECT_EQ(PolicyKind::kLeveling, o.merge_policy);
  ASSERT_TRUE(SetOption(&o, "exploring_ratio", "0.5").ok());
  EXPECT_EQ(0.5, o.exploring_ratio);
  ASSERT_TRUE(SetOption(&o, "verify_checksums", "0").ok());
  EXPECT_FALSE(o.verify_checksums);
  ASSERT_TRUE(SetOption(&o, "greedy_k", "7").ok());
  EXPECT_EQ(7, o.greedy_k);
}

TEST(OptionTableTest, BadValuesLeaveTheFieldAndNameTheRange) {
  Options o;
  Status s = SetOption(&o, "memtable_bytes", "-4M");
  EXPECT_EQ(
      "Invalid argument: engine option 'memtable_bytes': bad value '-4M' (expected a byte "
      "count, optional suffix K/M/G = KiB/MiB/GiB, in [4096, 68719476736])",
      s.ToString());
  EXPECT_EQ(Options().memtable_bytes, o.memtable_bytes);
  s = SetOption(&o, "bloom_bits_per_key", "1000");
  EXPECT_EQ(
      "Invalid argument: engine option 'bloom_bits_per_key': bad value '1000' (expected an "
      "integer in [0, 64])",
      s.ToString());
  s = SetOption(&o, "merge_policy", "levling");
  EXPECT_NE(std::string::npos, s.ToString().find("bad value 'levling' (choose from: leveling,"))
      << s.ToString();
  s = SetOption(&o, "memtable_byts", "4M");
  EXPECT_NE(std::string::npos, s.ToString().find("did you mean 'memtable_bytes'?"))
      << s.ToString();
}

TEST(OptionTableTest, SetOptionsReportsEveryProblemAtOnce) {
  Options o;
  Status s = SetOptions(&o, {{"memtable_byts", "4M"},
                             {"bloom_bits_per_key", "1000"},
                             {"merge_policy", "levling"},
                             {"wal", "sync"}});
  ASSERT_TRUE(s.IsInvalidArgument());
  const std::string text = s.ToString();
  for (const char* name : {"'memtable_byts'", "'bloom_bits_per_key'", "'merge_policy'"}) {
    EXPECT_NE(std::string::npos, text.find(name)) << text;
  }
  EXPECT_EQ(std::string::npos, text.find("'wal'")) << text;
  EXPECT_EQ(2u, std::count(text.begin(), text.end(), ';')) << text;
}

TEST(OptionTableTest, CheckOptionsSeesFieldsSetInTheStruct) {
  Options o;
  o.memtable_bytes = 1;
  o.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>("gredy");
  o.wal = static_cast<WalMode>(7);
  const std::string text = CheckOptions(o).ToString();
  for (const char* name : {"'memtable_bytes'", "'merge_scheduler'", "'wal'"}) {
    EXPECT_NE(std::string::npos, text.find(name)) << text;
  }
}

TEST(OptionTableTest, RulesBetweenOptions) {
  Options o;
  o.l0_trigger = 8;
  o.l0_stop = 4;
  EXPECT_NE(std::string::npos, CheckOptions(o).ToString().find("'l0_stop': 4 is below l0_trigger 8"));
  o = Options();
  o.exploring_min = 6;
  o.exploring_max = 5;
  EXPECT_NE(std::string::npos, CheckOptions(o).ToString().find("'exploring_min'"));
  o = Options();
  o.min_merge_components = 11;
  EXPECT_NE(std::string::npos, CheckOptions(o).ToString().find("'min_merge_components'"));
  // The size ratio's floor depends on the policy; 0 is always the default.
  for (const auto& [policy, ratio, ok] : std::vector<std::tuple<std::string, double, bool>>{
           {"tiering", 0, true},      {"tiering", 2, true},       {"tiering", 2.5, false},
           {"tiering", 1, false},     {"leveling", 1.5, false},   {"leveling", 2.5, true},
           {"partitioned", 1.9, false}, {"size-tiered", 1, true}, {"size-tiered", 0.99, false},
           {"binomial", 0.5, true}}) {
    o = Options();
    o.merge_policy = lsm::test::Named<lsm::PolicyKind>(policy);
    o.size_ratio = ratio;
    EXPECT_EQ(ok, CheckOptions(o).ok()) << policy << " " << ratio << ": "
                                        << CheckOptions(o).ToString();
  }
}

}  // namespace
}  // namespace lsm
