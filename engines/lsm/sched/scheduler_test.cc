#include "sched/scheduler.h"

#include <gtest/gtest.h>

namespace lsm::sched {
namespace {

std::unique_ptr<MergeScheduler> Make(const std::string& name, int k = 2) {
  SchedulerOptions options;
  options.name = name;
  options.greedy_k = k;
  std::unique_ptr<MergeScheduler> s;
  Status status = NewMergeScheduler(options, &s);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return s;
}

// Three merges as a leveled tree would have them: a small one created last.
std::vector<MergeState> Merges() {
  return {{/*id=*/1, /*remaining=*/900, /*total=*/1000, /*level=*/3},
          {/*id=*/2, /*remaining=*/300, /*total=*/400, /*level=*/2},
          {/*id=*/3, /*remaining=*/50, /*total=*/50, /*level=*/1}};
}

TEST(SchedulerTest, SingleRunsOnlyTheOldest) {
  auto s = Make("single");
  EXPECT_EQ(s->SelectRunning(Merges()), std::vector<uint64_t>({1}));
  EXPECT_TRUE(s->SelectRunning({}).empty());
}

TEST(SchedulerTest, FairRunsEveryMerge) {
  auto s = Make("fair");
  EXPECT_EQ(s->SelectRunning(Merges()), std::vector<uint64_t>({1, 2, 3}));
}

TEST(SchedulerTest, GreedyRunsTheSmallestRemaining) {
  auto s = Make("greedy");
  EXPECT_EQ(s->SelectRunning(Merges()), std::vector<uint64_t>({3}));
  // Remaining bytes, not totals, decide: merge 1 is nearly done.
  auto merges = Merges();
  merges[0].remaining_bytes = 10;
  EXPECT_EQ(s->SelectRunning(merges), std::vector<uint64_t>({1}));
  // Ties go to the older merge.
  merges[2].remaining_bytes = 10;
  EXPECT_EQ(s->SelectRunning(merges), std::vector<uint64_t>({1}));
}

TEST(SchedulerTest, GreedyKRunsTheKSmallest) {
  auto s = Make("greedy_k", 2);
  EXPECT_EQ(s->SelectRunning(Merges()), std::vector<uint64_t>({3, 2}));
  auto all = Make("greedy_k", 5);
  EXPECT_EQ(all->SelectRunning(Merges()).size(), 3u);
}

TEST(SchedulerTest, UnknownNameListsTheValidOnes) {
  SchedulerOptions options;
  options.name = "gredy";
  std::unique_ptr<MergeScheduler> s;
  Status status = NewMergeScheduler(options, &s);
  EXPECT_TRUE(status.IsInvalidArgument());
  EXPECT_NE(status.ToString().find("gredy"), std::string::npos);
  EXPECT_NE(status.ToString().find("single, fair, greedy, greedy_k"), std::string::npos)
      << status.ToString();
  options.name = "greedy_k";
  options.greedy_k = 0;
  EXPECT_TRUE(NewMergeScheduler(options, &s).IsInvalidArgument());
}

}  // namespace
}  // namespace lsm::sched
