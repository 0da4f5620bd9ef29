// Size-tiered: hand-checked cases, Figure 18 of Luo & Carey first.
#include <gtest/gtest.h>

#include "policy/policies.h"
#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::Ids;
using test::MakeStack;

constexpr uint64_t kMB = 1ull << 20;
constexpr uint64_t kGB = 1ull << 30;

std::unique_ptr<MergePolicy> SizeTiered(double ratio, int min, int max, bool exact = false) {
  SizeTieredParams params;
  params.size_ratio = ratio;
  params.min_merge_components = min;
  params.max_merge_components = max;
  params.merge_exact_min = exact;
  return NewSizeTieredPolicy(params);
}

// Figure 18: ratio 1.2, min 2, max 4; oldest first 100GB, 10GB, 5GB, 5GB,
// 5GB, 1GB, 128MB, 64MB, 64MB (ids 1..9).
//  - 100GB: 100 > 1.2 * (10 + 5 + 5) = 24: too large, skipped.
//  - 10GB: window 10, 5, 5, 5 (max 4): 10 <= 1.2 * 15 = 18: merge all 4.
//  - the next execution starts after the components being merged, at 1GB:
//    1024MB > 1.2 * (128 + 64 + 64) = 307.2: skipped.
//  - 128MB: window 128, 64, 64 (the stack ends): 128 <= 1.2 * 128 = 153.6:
//    merge these 3.
// The paper's wording ("the younger components' total is T times larger
// than the oldest") read literally, 128 + ... >= 1.2 * oldest, would reject
// 64 + 64 = 128 < 153.6 and schedule no second merge: the figure fixes the
// inequality as oldest <= T * younger.
Snapshot Figure18() {
  return MakeStack({{0, 100 * kGB},
                    {0, 10 * kGB},
                    {0, 5 * kGB},
                    {0, 5 * kGB},
                    {0, 5 * kGB},
                    {0, 1 * kGB},
                    {0, 128 * kMB},
                    {0, 64 * kMB},
                    {0, 64 * kMB}});
}

TEST(SizeTiered, Figure18OneExecutionAtATime) {
  auto p = SizeTiered(1.2, 2, 4);
  Snapshot s = Figure18();
  // First execution: the first op returned is the paper's first merge.
  auto ops = p->PickMerges(s);
  ASSERT_GE(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4, 5}));
  EXPECT_EQ(ops[0].output_level, 0);
  // The engine marks those inputs; the next execution starts at 1GB and
  // schedules the paper's second merge, 128MB to 64MB.
  test::MarkBeingMerged(&s, {ops[0]});
  auto next = p->PickMerges(s);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].inputs, Ids({7, 8, 9}));
  EXPECT_EQ(next[0].output_level, 0);
}

TEST(SizeTiered, Figure18BothMergesInOneCall) {
  // PickMerges runs executions until none schedules anything, so a call
  // hands the scheduler both merges at once.
  auto p = SizeTiered(1.2, 2, 4);
  const Snapshot s = Figure18();
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4, 5}));
  EXPECT_EQ(ops[1].inputs, Ids({7, 8, 9}));
  // Once both run, nothing else is due.
  Snapshot marked = s;
  test::MarkBeingMerged(&marked, ops);
  EXPECT_TRUE(p->PickMerges(marked).empty());
}

TEST(SizeTiered, Figure18WithTheDefaultMaxMergesMore) {
  // With max 10 the 10GB window reaches the stack's end: 10 <= 1.2 * 16.25
  // and all 8 components from 10GB on are merged at once.
  auto p = SizeTiered(1.2, 2, 10);
  auto ops = p->PickMerges(Figure18());
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(SizeTiered, OnlyComponentsYoungerThanTheYoungestBeingMergedAreCandidates) {
  // HBase's rule: the 5 and 5 before the component being merged could
  // merge, but only the components after it are examined, and 100 alone
  // is too few.
  auto p = SizeTiered(1.2, 2, 10);
  Snapshot s = MakeStack({{0, 5}, {0, 5}, {0, 7}, {0, 100}});
  s.stack[2].being_merged = true;
  EXPECT_TRUE(p->PickMerges(s).empty());
  s = MakeStack({{0, 5}, {0, 5}, {0, 7}, {0, 1}, {0, 1}});
  s.stack[2].being_merged = true;
  auto ops = p->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({4, 5}));
  // Without the component being merged, the oldest qualifying start wins:
  // 5 <= 1.2 * (5 + 7 + 1 + 1).
  s.stack[2].being_merged = false;
  ops = p->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3, 4, 5}));
}

TEST(SizeTiered, MergesAsManyAsPossibleUpToMax) {
  // 12 equal flushes, max 10: the oldest 10 merge, then the last 2.
  auto p = SizeTiered(1.2, 2, 10);
  auto ops = p->PickMerges(MakeStack(std::vector<std::pair<int, uint64_t>>(12, {0, 64})));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ops[1].inputs, Ids({11, 12}));
}

TEST(SizeTiered, MergeExactMinAlwaysMergesMinComponents) {
  // The paper's lower-bound setting: the same 12 flushes give six pairs.
  auto p = SizeTiered(1.2, 2, 10, /*exact=*/true);
  auto ops = p->PickMerges(MakeStack(std::vector<std::pair<int, uint64_t>>(12, {0, 64})));
  ASSERT_EQ(ops.size(), 6u);
  for (size_t k = 0; k < ops.size(); ++k) {
    EXPECT_EQ(ops[k].inputs, Ids({2 * k + 1, 2 * k + 2}));
  }
  // min 3: four triples.
  auto p3 = SizeTiered(1.2, 3, 10, /*exact=*/true);
  ops = p3->PickMerges(MakeStack(std::vector<std::pair<int, uint64_t>>(12, {0, 64})));
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[3].inputs, Ids({10, 11, 12}));
}

TEST(SizeTiered, MergeExactMinChecksTheRatioOnTheMinWindow) {
  // 100, 50, 50, 50. Up to max: 100 <= 1.2 * 150, all four merge.
  // Exactly 2: 100 > 1.2 * 50, skipped; 50 <= 1.2 * 50: the pair (2, 3);
  // the last 50 alone is too few.
  const Snapshot s = MakeStack({{0, 100}, {0, 50}, {0, 50}, {0, 50}});
  auto ops = SizeTiered(1.2, 2, 10)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3, 4}));
  ops = SizeTiered(1.2, 2, 10, /*exact=*/true)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3}));
}

TEST(SizeTiered, TheInequalityIsInclusive) {
  // Ratio 2 (exact in binary): 20 <= 2 * 10 merges, 21 does not.
  auto p = SizeTiered(2, 2, 10);
  EXPECT_EQ(p->PickMerges(MakeStack({{0, 20}, {0, 10}})).size(), 1u);
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 21}, {0, 10}})).empty());
  // Ratio 1: the oldest may be as large as all younger ones together.
  auto p1 = SizeTiered(1, 2, 10);
  auto ops = p1->PickMerges(MakeStack({{0, 30}, {0, 10}, {0, 20}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 3}));
  // 31 is skipped; then 10 <= 1 * 20.
  ops = p1->PickMerges(MakeStack({{0, 31}, {0, 10}, {0, 20}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3}));
}

TEST(SizeTiered, TooFewComponentsNeverMerge) {
  auto p = SizeTiered(1.2, 3, 10);
  EXPECT_TRUE(p->PickMerges(Snapshot()).empty());
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 1}})).empty());
  EXPECT_TRUE(p->PickMerges(MakeStack({{0, 1}, {0, 1}})).empty());
  EXPECT_EQ(p->PickMerges(MakeStack({{0, 1}, {0, 1}, {0, 1}})).size(), 1u);
  // Empty components qualify (0 <= 1.2 * 0) rather than pile up.
  EXPECT_EQ(SizeTiered(1.2, 2, 10)->PickMerges(MakeStack({{0, 0}, {0, 0}})).size(), 1u);
}

TEST(SizeTiered, LevelsAreIgnoredAndOutputsAreLevelZero) {
  // A leveling stack reopened under size-tiered: only sizes matter.
  auto p = SizeTiered(1.2, 2, 10);
  auto ops = p->PickMerges(MakeStack({{3, 100000}, {2, 10000}, {1, 9000}, {0, 100}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4}));
  EXPECT_EQ(ops[0].output_level, 0);
}

}  // namespace
}  // namespace lsm::policy
