// The registry: names, defaults and parameter validation.
#include "policy/policy.h"

#include <gtest/gtest.h>

#include <limits>

#include "policy/policy_test_util.h"
#include "lsm/option_table.h"
#include "options/option_test_util.h"

namespace lsm::policy {
namespace {

using test::MakeStack;

Status Make(Options options, std::unique_ptr<MergePolicy>* policy) {
  return NewMergePolicy(options, policy);
}

Options Named(const std::string& name) {
  Options o;
  o.merge_policy = lsm::test::Named<lsm::PolicyKind>(name);
  return o;
}

TEST(PolicyFactory, NamesAreEveryPolicy) {
  EXPECT_EQ(PolicyNames(),
            (std::vector<std::string>{"leveling", "tiering", "size-tiered", "partitioned", "bigtable",
                                      "exploring", "constant", "minlatency", "binomial"}));
}

TEST(PolicyFactory, CreatesEachPolicyByName) {
  for (const std::string& name : PolicyNames()) {
    std::unique_ptr<MergePolicy> p;
    ASSERT_TRUE(Make(Named(name), &p).ok()) << name;
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::string(p->Name()), name);
  }
}

TEST(PolicyFactory, DefaultIsTiering) {
  std::unique_ptr<MergePolicy> p;
  ASSERT_TRUE(Make(Options(), &p).ok());
  EXPECT_STREQ(p->Name(), "tiering");
}

TEST(PolicyFactory, UnknownNameListsTheValidOnes) {
  std::unique_ptr<MergePolicy> p;
  ASSERT_TRUE(Make(Named("tiering"), &p).ok());
  // Names become PolicyKind in the option table; the factory refuses a value
  // outside the enum.
  Options o;
  EXPECT_EQ(SetOption(&o, "merge_policy", "x").ToString(),
            "Invalid argument: engine option 'merge_policy': bad value 'x' (choose from: "
            "leveling, tiering, size-tiered, partitioned, bigtable, exploring, constant, "
            "minlatency, binomial)");
  Status s = Make(Named("x"), &p);
  ASSERT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(p, nullptr) << "a failed call leaves no policy behind";
  // Names are exact: no case folding, no aliases.
  for (const char* bad : {"Leveling", "size_tiered", ""}) {
    EXPECT_TRUE(SetOption(&o, "merge_policy", bad).IsInvalidArgument()) << bad;
    EXPECT_TRUE(Make(Named(bad), &p).IsInvalidArgument()) << bad;
  }
}

// The default ratio of each policy shows in its behaviour: tiering merges
// after 3 flushes (T = 3), size-tiered merges 100 with 84 but not 100 with
// 83 (1.2 * 84 = 100.8 >= 100 > 99.6 = 1.2 * 83), leveling's level 1 fills
// at 10 memtables (T = 10).
TEST(PolicyFactory, ZeroRatioMeansThePolicyDefault) {
  std::unique_ptr<MergePolicy> p;
  ASSERT_TRUE(Make(Named("tiering"), &p).ok());
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 1}, {0, 1}})).empty());
  EXPECT_EQ(p->PickMerges(MakeStack({{0, 1}, {0, 1}, {0, 1}})).size(), 1u);

  ASSERT_TRUE(Make(Named("size-tiered"), &p).ok());
  EXPECT_EQ(p->PickMerges(MakeStack({{0, 100}, {0, 84}})).size(), 1u);
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 100}, {0, 83}})).empty());

  Options o = Named("leveling");
  o.memtable_bytes = 4096;
  ASSERT_TRUE(Make(o, &p).ok());
  // Level 1 holds 40959 < 10 * 4096: not full, the flush merges into it.
  auto ops = p->PickMerges(MakeStack({{1, 40959}, {0, 4096}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 1);
  // Level 1 holds 1000: full, it moves down (and the flush forms a new
  // level 1 meanwhile).
  ops = p->PickMerges(MakeStack({{1, 40960}, {0, 4096}}));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].inputs, test::Ids({1}));
  EXPECT_EQ(ops[1].output_level, 2);
}

void ExpectInvalid(const Options& o, const std::string& expected) {
  std::unique_ptr<MergePolicy> p;
  Status s = NewMergePolicy(o, &p);
  ASSERT_TRUE(s.IsInvalidArgument()) << ToString(o.merge_policy) << ": " << s.ToString();
  EXPECT_EQ(s.ToString(), "Invalid argument: " + expected);
  EXPECT_EQ(p, nullptr);
}

TEST(PolicyFactory, RejectsBadSizeRatios) {
  Options o = Named("leveling");
  for (double bad : {-1.0, 0.5, 1.0, 1.9, 1001.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    o.size_ratio = bad;
    std::unique_ptr<MergePolicy> p;
    EXPECT_TRUE(NewMergePolicy(o, &p).IsInvalidArgument()) << bad;
  }
  o.size_ratio = 1.5;
  ExpectInvalid(o,
                "engine option 'size_ratio': 1.5 for leveling (expected 0, the policy's "
                "default, or a number >= 2)");

  o = Named("tiering");
  o.size_ratio = 2.5;
  ExpectInvalid(o,
                "engine option 'size_ratio': 2.5 for tiering (expected 0, the policy's "
                "default, or an integer >= 2)");
  o.size_ratio = 1;
  ExpectInvalid(o,
                "engine option 'size_ratio': 1 for tiering (expected 0, the policy's default, "
                "or an integer >= 2)");

  o = Named("size-tiered");
  o.size_ratio = 0.99;
  ExpectInvalid(o,
                "engine option 'size_ratio': 0.99 for size-tiered (expected 0, the policy's "
                "default, or a number >= 1)");
}

TEST(PolicyFactory, AcceptsBoundaryRatios) {
  std::unique_ptr<MergePolicy> p;
  for (const auto& [name, ratio] : std::vector<std::pair<std::string, double>>{
           {"leveling", 2}, {"leveling", 2.5}, {"leveling", 1000}, {"tiering", 2},
           {"tiering", 1000}, {"size-tiered", 1}, {"size-tiered", 5.0}}) {
    Options o = Named(name);
    o.size_ratio = ratio;
    EXPECT_TRUE(NewMergePolicy(o, &p).ok()) << name << " " << ratio;
  }
}

TEST(PolicyFactory, RejectsBadMergeWidthsAndMemtableSize) {
  for (const std::string& name : PolicyNames()) {
    Options o = Named(name);
    for (int bad : {0, -3, 1}) {
      o.min_merge_components = bad;
      ExpectInvalid(o, "engine option 'min_merge_components': bad value '" +
                           std::to_string(bad) + "' (expected an integer in [2, 1000])");
    }
    o.min_merge_components = 4;
    o.max_merge_components = 3;
    ExpectInvalid(o, "engine option 'min_merge_components': 4 exceeds max_merge_components 3");
    o.max_merge_components = 4;
    std::unique_ptr<MergePolicy> p;
    EXPECT_TRUE(NewMergePolicy(o, &p).ok()) << "min == max is fine";
    o.memtable_bytes = 0;
    ExpectInvalid(o,
                  "engine option 'memtable_bytes': bad value '0' (expected a byte count, "
                  "optional suffix K/M/G = KiB/MiB/GiB, in [4096, 68719476736])");
  }
}

TEST(PolicyFactory, DefaultMaxComponents) {
  std::unique_ptr<MergePolicy> leveling, tiering, size_tiered;
  ASSERT_TRUE(Make(Named("leveling"), &leveling).ok());
  ASSERT_TRUE(Make(Named("tiering"), &tiering).ok());
  ASSERT_TRUE(Make(Named("size-tiered"), &size_tiered).ok());

  // Empty tree: L = 1. Leveling 2*1 raised to the floor 4, tiering 2*3*1.
  const Snapshot empty;
  EXPECT_EQ(leveling->DefaultMaxComponents(empty), 4u);
  EXPECT_EQ(tiering->DefaultMaxComponents(empty), 6u);
  EXPECT_EQ(size_tiered->DefaultMaxComponents(empty), 50u);

  // Levels 3, 2, 1 and two flushes: L = 4 (levels 0..3).
  const Snapshot four = MakeStack({{3, 1000}, {2, 100}, {1, 10}, {0, 1}, {0, 1}});
  EXPECT_EQ(leveling->DefaultMaxComponents(four), 8u);
  EXPECT_EQ(tiering->DefaultMaxComponents(four), 24u);
  EXPECT_EQ(size_tiered->DefaultMaxComponents(four), 50u);
  // Local constraints: 2 per level for leveling, 2T for tiering (T = 3).
  EXPECT_EQ(leveling->DefaultMaxComponentsPerLevel(), 2u);
  EXPECT_EQ(tiering->DefaultMaxComponentsPerLevel(), 6u);
  EXPECT_EQ(size_tiered->DefaultMaxComponentsPerLevel(), 50u);

  // An empty intermediate level still counts: L is the depth, not the
  // number of non-empty levels, so the bound does not drop while level 1 is
  // momentarily empty (its component just moved down).
  EXPECT_EQ(leveling->DefaultMaxComponents(MakeStack({{3, 1000}, {0, 1}})), 8u);
  EXPECT_EQ(leveling->DefaultMaxComponents(MakeStack({{3, 1000}})), 8u);

  Options o = Named("tiering");
  o.size_ratio = 4;
  ASSERT_TRUE(Make(o, &tiering).ok());
  EXPECT_EQ(tiering->DefaultMaxComponents(MakeStack({{2, 16}, {1, 4}})), 2u * 4 * 3);
}

}  // namespace
}  // namespace lsm::policy
