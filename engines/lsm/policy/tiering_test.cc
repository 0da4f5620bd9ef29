// Tiering: hand-checked cases. Sizes are in units of one flush.
#include <gtest/gtest.h>

#include "policy/policies.h"
#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::Ids;
using test::ImmediateSim;
using test::MakeStack;
using test::Shape;
using Levels = std::vector<std::pair<int, uint64_t>>;

TEST(Tiering, MergesTheFirstTFlushesIntoLevelOne) {
  auto p = NewTieringPolicy(3);
  // 1 and 2 flushes: below T = 3, nothing to do.
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 1}})).empty());
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 1}, {0, 1}})).empty());
  // 3 flushes: those 3 become one level-1 component.
  auto ops = p->PickMerges(MakeStack({{0, 1}, {0, 1}, {0, 1}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3}));
  EXPECT_EQ(ops[0].output_level, 1);
}

TEST(Tiering, StackAfterNFlushesIsNWrittenInBaseT) {
  // With every merge applied at once the stack is the base-3 number of
  // flushes: digit i = number of level-i components, each of size 3^i.
  auto p = NewTieringPolicy(3);
  ImmediateSim sim(*p);
  for (int i = 0; i < 9; ++i) sim.Flush(1);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 9}}));  // 9 = 100 in base 3
  sim.Flush(1);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 9}, {0, 1}}));
  for (int i = 10; i < 26; ++i) sim.Flush(1);  // 26 = 222 in base 3
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 9}, {2, 9}, {1, 3}, {1, 3}, {0, 1}, {0, 1}}));
  sim.Flush(1);  // 27 = 1000: the carry ripples through three levels
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{3, 27}}));
}

TEST(Tiering, WriteAmplificationIsOnePlusTheNumberOfLevels) {
  // 3^6 = 729 flushes end as one level-6 component: every byte was written
  // by its flush and by exactly one merge per level 1..6, so the write
  // amplification is exactly 7, and no op ever had a single input.
  auto p = NewTieringPolicy(3);
  ImmediateSim sim(*p);
  for (int i = 0; i < 729; ++i) sim.Flush(1);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{6, 729}}));
  EXPECT_EQ(sim.stats().moves, 0u);
  EXPECT_DOUBLE_EQ(sim.stats().WriteAmp(), 7.0);
  // 243 + 81 + 27 + 9 + 3 + 1 merges.
  EXPECT_EQ(sim.stats().merges, 364u);
}

TEST(Tiering, OneMergePerLevelAtATime) {
  auto p = NewTieringPolicy(3);
  // The oldest three flushes are being merged; three more arrived: they
  // wait for the running level-0 merge instead of starting a second one.
  Snapshot s = MakeStack({{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}});
  for (int i = 0; i < 3; ++i) s.stack[i].being_merged = true;
  EXPECT_TRUE(p->PickMerges(s).empty());
  // A merge at level 1 does not hold back level 0.
  s = MakeStack({{1, 3}, {1, 3}, {1, 3}, {0, 1}, {0, 1}, {0, 1}});
  for (int i = 0; i < 3; ++i) s.stack[i].being_merged = true;
  auto ops = p->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({4, 5, 6}));
  EXPECT_EQ(ops[0].output_level, 1);
}

TEST(Tiering, CreatesOneMergePerFullLevelAtOnce) {
  auto p = NewTieringPolicy(3);
  const Snapshot s = MakeStack({{2, 9}, {1, 3}, {1, 3}, {1, 3}, {0, 1}, {0, 1}, {0, 1}});
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  // Listed from the shallowest level down.
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({5, 6, 7}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({2, 3, 4}));
  EXPECT_EQ(ops[1].output_level, 2);
}

TEST(Tiering, MoreThanTComponentsMergeTheOldestT) {
  // Five flushes piled up (say, merges were slow): the oldest three merge.
  auto p = NewTieringPolicy(3);
  auto ops = p->PickMerges(MakeStack({{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3}));
}

TEST(Tiering, OtherRatios) {
  auto p = NewTieringPolicy(2);
  ImmediateSim sim(*p);
  for (int i = 0; i < 6; ++i) sim.Flush(10);  // 6 = 110 in base 2
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 40}, {1, 20}}));
  auto p10 = NewTieringPolicy(10);
  EXPECT_TRUE(p10->PickMerges(MakeStack(Levels(9, {0, 1}))).empty());
  EXPECT_EQ(p10->PickMerges(MakeStack(Levels(10, {0, 1}))).size(), 1u);
}

TEST(Tiering, SizesDoNotMatterOnlyCounts) {
  // Tiering counts components; a huge and a tiny flush merge all the same.
  auto p = NewTieringPolicy(3);
  auto ops = p->PickMerges(MakeStack({{0, 1000000}, {0, 1}, {0, 7}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3}));
}

}  // namespace
}  // namespace lsm::policy
