// Tiering: hand-checked cases. Sizes are in units of one flush.
#include <gtest/gtest.h>

#include <array>

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

// A stack from (level, entries, flushed entries), oldest first.
Snapshot Flushed(const std::vector<std::array<uint64_t, 3>>& components) {
  Snapshot s;
  uint64_t id = 1;
  for (const auto& [level, entries, flushed] : components) {
    Component c;
    c.id = id++;
    c.level = static_cast<int>(level);
    c.bytes = c.entries = entries;
    c.flushed_entries = flushed;
    s.stack.push_back(c);
  }
  return s;
}

TEST(Tiering, TheDeepestLevelStaysTheLastOnceItsDataNoLongerFillsIt) {
  auto p = NewTieringPolicy(3);
  // Three level-2 components of 9 flushes (900 entries flushed) each: with
  // 590 live of 900 (65.6 %, above 1 - 1/e) the data still fills them, and
  // they merge one level deeper; with 560 (62.2 %) they merge among
  // themselves and level 2 stays the deepest.
  auto filled = p->PickMerges(Flushed({{2, 590, 900}, {2, 590, 900}, {2, 590, 900}}));
  ASSERT_EQ(filled.size(), 1u);
  EXPECT_EQ(filled[0].output_level, 3);
  auto saturated = p->PickMerges(Flushed({{2, 560, 900}, {2, 560, 900}, {2, 560, 900}}));
  ASSERT_EQ(saturated.size(), 1u);
  EXPECT_EQ(saturated[0].inputs, Ids({1, 2, 3}));
  EXPECT_EQ(saturated[0].output_level, 2);
  // The share is over the merge's inputs together.
  auto mixed = p->PickMerges(Flushed({{2, 900, 900}, {2, 400, 900}, {2, 400, 900}}));
  EXPECT_EQ(mixed[0].output_level, 2);  // 1700 of 2700 = 63.0 %
  // A component that records nothing flushed counts as all live.
  auto unknown = p->PickMerges(Flushed({{2, 560, 0}, {2, 560, 900}, {2, 560, 900}}));
  EXPECT_EQ(unknown[0].output_level, 3);  // 1680 of 2360 = 71 %
}

TEST(Tiering, OnlyTheDeepestLevelCanStayAndLevelZeroAlwaysMergesDown) {
  auto p = NewTieringPolicy(3);
  // Level 1 is saturated but level 2 is deeper: level 1 merges into it.
  auto above = p->PickMerges(
      Flushed({{2, 100, 900}, {1, 100, 300}, {1, 100, 300}, {1, 100, 300}}));
  ASSERT_EQ(above.size(), 1u);
  EXPECT_EQ(above[0].output_level, 2);
  // Flushes only, all overwriting one another: still merged into level 1.
  auto flushes = p->PickMerges(Flushed({{0, 10, 100}, {0, 10, 100}, {0, 10, 100}}));
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0].output_level, 1);
}

TEST(Tiering, UnboundedDepthAlwaysMergesDown) {
  auto p = NewTieringPolicy(3, /*unbounded_depth=*/true);
  auto ops = p->PickMerges(Flushed({{2, 100, 900}, {2, 100, 900}, {2, 100, 900}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 3);
  // And the option reaches the policy through the options.
  Options options;
  options.merge_policy = PolicyKind::kTiering;
  options.tiering_unbounded_depth = true;
  std::unique_ptr<MergePolicy> from_options;
  ASSERT_TRUE(NewMergePolicy(options, &from_options).ok());
  EXPECT_EQ(from_options->PickMerges(Flushed({{2, 100, 900}, {2, 100, 900}, {2, 100, 900}}))[0]
                .output_level,
            3);
  options.tiering_unbounded_depth = false;
  ASSERT_TRUE(NewMergePolicy(options, &from_options).ok());
  EXPECT_EQ(from_options->PickMerges(Flushed({{2, 100, 900}, {2, 100, 900}, {2, 100, 900}}))[0]
                .output_level,
            2);
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
