#include "policy/levels.h"

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::MakeStack;

TEST(Levels, DescribeGroupsPositionsBytesAndBusy) {
  Snapshot s = MakeStack({{2, 50}, {1, 5}, {1, 6}, {0, 1}});
  s.stack[2].being_merged = true;
  const std::vector<LevelInfo> levels = DescribeLevels(s);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0].positions, (std::vector<size_t>{3}));
  EXPECT_EQ(levels[1].positions, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(levels[1].bytes, 11u);
  EXPECT_TRUE(levels[1].busy);
  EXPECT_FALSE(levels[2].busy);
  EXPECT_EQ(levels[2].bytes, 50u);
}

TEST(Levels, EmptyStackHasOnlyLevelZero) {
  EXPECT_EQ(DescribeLevels(Snapshot()).size(), 1u);
  EXPECT_EQ(DeepestLevel(Snapshot()), 0);
  EXPECT_EQ(LevelCount(Snapshot()), 1u);
}

TEST(Levels, OutOfRangeLevelsAreClamped) {
  const Snapshot s = MakeStack({{1000000, 1}, {-5, 1}});
  EXPECT_EQ(DeepestLevel(s), kMaxLevel);
  const std::vector<LevelInfo> levels = DescribeLevels(s);
  ASSERT_EQ(levels.size(), static_cast<size_t>(kMaxLevel) + 1);
  EXPECT_EQ(levels[kMaxLevel].positions, (std::vector<size_t>{0}));
  EXPECT_EQ(levels[0].positions, (std::vector<size_t>{1}));
}

TEST(Levels, LevelCountIsTheDepth) {
  EXPECT_EQ(LevelCount(MakeStack({{0, 1}})), 1u);
  EXPECT_EQ(LevelCount(MakeStack({{3, 1}})), 4u);
  EXPECT_EQ(LevelCount(MakeStack({{3, 1}, {1, 1}, {0, 1}})), 4u);
}

TEST(Levels, Contiguity) {
  EXPECT_FALSE(IsContiguous({}));
  EXPECT_TRUE(IsContiguous({4}));
  EXPECT_TRUE(IsContiguous({4, 5, 6}));
  EXPECT_FALSE(IsContiguous({4, 6}));
  EXPECT_FALSE(IsContiguous({0, 1, 3}));
}

TEST(Levels, IdsAtFollowsPositions) {
  const Snapshot s = MakeStack({{0, 1}, {0, 1}, {0, 1}});
  EXPECT_EQ(IdsAt(s, {1, 2}), (std::vector<uint64_t>{2, 3}));
}

}  // namespace
}  // namespace lsm::policy
