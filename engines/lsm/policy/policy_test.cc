// The registry: names, defaults and parameter validation.
#include "policy/policy.h"

#include <gtest/gtest.h>

#include <limits>

#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::MakeStack;

Status Make(PolicyOptions options, std::unique_ptr<MergePolicy>* policy) {
  return NewMergePolicy(options, policy);
}

PolicyOptions Named(const std::string& name) {
  PolicyOptions o;
  o.name = name;
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
  ASSERT_TRUE(Make(PolicyOptions(), &p).ok());
  EXPECT_STREQ(p->Name(), "tiering");
}

TEST(PolicyFactory, UnknownNameListsTheValidOnes) {
  std::unique_ptr<MergePolicy> p;
  ASSERT_TRUE(Make(Named("tiering"), &p).ok());
  Status s = Make(Named("x"), &p);
  ASSERT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.ToString(),
            "Invalid argument: unknown merge policy 'x' (choose from: leveling, tiering, "
            "size-tiered, partitioned, bigtable, exploring, constant, minlatency, binomial)");
  EXPECT_EQ(p, nullptr) << "a failed call leaves no policy behind";
  // Names are exact: no case folding, no aliases.
  EXPECT_TRUE(Make(Named("Leveling"), &p).IsInvalidArgument());
  EXPECT_TRUE(Make(Named("size_tiered"), &p).IsInvalidArgument());
  EXPECT_TRUE(Make(Named(""), &p).IsInvalidArgument());
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

  PolicyOptions o = Named("leveling");
  o.memtable_bytes = 100;
  ASSERT_TRUE(Make(o, &p).ok());
  // Level 1 holds 999 < 10 * 100: not full, the flush merges into it.
  auto ops = p->PickMerges(MakeStack({{1, 999}, {0, 100}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 1);
  // Level 1 holds 1000: full, it moves down (and the flush forms a new
  // level 1 meanwhile).
  ops = p->PickMerges(MakeStack({{1, 1000}, {0, 100}}));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].inputs, test::Ids({1}));
  EXPECT_EQ(ops[1].output_level, 2);
}

void ExpectInvalid(const PolicyOptions& o, const std::string& expected) {
  std::unique_ptr<MergePolicy> p;
  Status s = NewMergePolicy(o, &p);
  ASSERT_TRUE(s.IsInvalidArgument()) << o.name << ": " << s.ToString();
  EXPECT_EQ(s.ToString(), "Invalid argument: " + expected);
  EXPECT_EQ(p, nullptr);
}

TEST(PolicyFactory, RejectsBadSizeRatios) {
  PolicyOptions o = Named("leveling");
  for (double bad : {-1.0, 0.5, 1.0, 1.9, 1001.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    o.size_ratio = bad;
    std::unique_ptr<MergePolicy> p;
    EXPECT_TRUE(NewMergePolicy(o, &p).IsInvalidArgument()) << bad;
  }
  o.size_ratio = 1.5;
  ExpectInvalid(o, "size_ratio for leveling must be 0 (the default, 10) or in [2, 1000]: got 1.5");

  o = Named("tiering");
  o.size_ratio = 2.5;
  ExpectInvalid(o,
                "size_ratio for tiering must be 0 (the default, 3) or an integer in [2, 1000]: "
                "got 2.5");
  o.size_ratio = 1;
  ExpectInvalid(o,
                "size_ratio for tiering must be 0 (the default, 3) or an integer in [2, 1000]: "
                "got 1");

  o = Named("size-tiered");
  o.size_ratio = 0.99;
  ExpectInvalid(o,
                "size_ratio for size-tiered must be 0 (the default, 1.2) or in [1, 1000]: got "
                "0.99");
}

TEST(PolicyFactory, AcceptsBoundaryRatios) {
  std::unique_ptr<MergePolicy> p;
  for (const auto& [name, ratio] : std::vector<std::pair<std::string, double>>{
           {"leveling", 2}, {"leveling", 2.5}, {"leveling", 1000}, {"tiering", 2},
           {"tiering", 1000}, {"size-tiered", 1}, {"size-tiered", 5.0}}) {
    PolicyOptions o = Named(name);
    o.size_ratio = ratio;
    EXPECT_TRUE(NewMergePolicy(o, &p).ok()) << name << " " << ratio;
  }
}

TEST(PolicyFactory, RejectsBadMergeWidthsAndMemtableSize) {
  for (const std::string& name : PolicyNames()) {
    PolicyOptions o = Named(name);
    o.min_merge_components = 0;
    ExpectInvalid(o, "min_merge_components must be >= 2: got 0");
    o.min_merge_components = -3;
    ExpectInvalid(o, "min_merge_components must be >= 2: got -3");
    o.min_merge_components = 1;
    ExpectInvalid(o, "min_merge_components must be >= 2: got 1");
    o.min_merge_components = 4;
    o.max_merge_components = 3;
    ExpectInvalid(o, "max_merge_components must be >= min_merge_components (4): got 3");
    o.max_merge_components = 4;
    std::unique_ptr<MergePolicy> p;
    EXPECT_TRUE(NewMergePolicy(o, &p).ok()) << "min == max is fine";
    o.memtable_bytes = 0;
    ExpectInvalid(o, "memtable_bytes must be >= 1: got 0");
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

  PolicyOptions o = Named("tiering");
  o.size_ratio = 4;
  ASSERT_TRUE(Make(o, &tiering).ok());
  EXPECT_EQ(tiering->DefaultMaxComponents(MakeStack({{2, 16}, {1, 4}})), 2u * 4 * 3);
}

}  // namespace
}  // namespace lsm::policy
