#include "sched/scheduler.h"
#include "options/option_test_util.h"

#include <gtest/gtest.h>

namespace lsm::sched {
namespace {

std::unique_ptr<MergeScheduler> Make(const std::string& name, int k = 2) {
  Options options;
  options.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(name);
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
  EXPECT_EQ(s->SelectRunning(Merges(), {}), std::vector<uint64_t>({1}));
  EXPECT_TRUE(s->SelectRunning({}, {}).empty());
}

TEST(SchedulerTest, FairRunsEveryMerge) {
  auto s = Make("fair");
  EXPECT_EQ(s->SelectRunning(Merges(), {}), std::vector<uint64_t>({1, 2, 3}));
}

TEST(SchedulerTest, GreedyRunsTheSmallestRemaining) {
  auto s = Make("greedy");
  EXPECT_EQ(s->SelectRunning(Merges(), {}), std::vector<uint64_t>({3}));
  // Remaining bytes, not totals, decide: merge 1 is nearly done.
  auto merges = Merges();
  merges[0].remaining_bytes = 10;
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({1}));
  // Ties go to the older merge.
  merges[2].remaining_bytes = 10;
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({1}));
}

TEST(SchedulerTest, GreedyKRunsTheKSmallest) {
  auto s = Make("greedy_k", 2);
  EXPECT_EQ(s->SelectRunning(Merges(), {}), std::vector<uint64_t>({3, 2}));
  auto all = Make("greedy_k", 5);
  EXPECT_EQ(all->SelectRunning(Merges(), {}).size(), 3u);
}

TEST(SchedulerTest, LevelDbRunsOneByScoreAndNeverPreempts) {
  auto s = Make("leveldb");
  auto merges = Merges();
  // Without scores: the oldest, like single.
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({1}));
  merges[1].score = 2.5;  // level 2 is the fullest
  merges[2].score = 1.2;
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({2}));
  // Once running, a merge keeps the thread even if a more urgent one arrives.
  merges[2].running = true;
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({3}));
  // Equal scores: the older one.
  merges[2].running = false;
  merges[0].score = 2.5;
  EXPECT_EQ(s->SelectRunning(merges, {}), std::vector<uint64_t>({1}));
  EXPECT_TRUE(s->SelectRunning({}, {}).empty());
}

TEST(SchedulerTest, UnknownNameListsTheValidOnes) {
  Options options;
  options.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>("gredy");
  std::unique_ptr<MergeScheduler> s;
  Status status = NewMergeScheduler(options, &s);
  EXPECT_TRUE(status.IsInvalidArgument());
  EXPECT_NE(status.ToString().find("'merge_scheduler'"), std::string::npos);
  EXPECT_NE(status.ToString().find("single, fair, greedy, greedy_k, idle"), std::string::npos)
      << status.ToString();
  options.merge_scheduler = lsm::SchedulerKind::kGreedyK;
  options.greedy_k = 0;
  EXPECT_TRUE(NewMergeScheduler(options, &s).IsInvalidArgument());
}

std::unique_ptr<MergeScheduler> MakeIdle(const std::string& mode) {
  Options options;
  options.merge_scheduler = lsm::SchedulerKind::kIdle;
  options.idle_mode = lsm::test::Named<lsm::IdleMode>(mode);
  options.idle_probe_ms = 500;
  options.idle_threshold_bytes_per_sec = 1000;
  options.idle_delay_ms = 200;
  std::unique_ptr<MergeScheduler> s;
  Status status = NewMergeScheduler(options, &s);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return s;
}

SchedulerContext Context(double rate, uint64_t since_write, bool pressure = false) {
  SchedulerContext c;
  c.client_write_bytes_per_sec = rate;
  c.micros_since_last_write = since_write;
  c.constraint_pressure = pressure;
  return c;
}

TEST(SchedulerTest, IdleRateDefersWhileTheClientWrites) {
  auto s = MakeIdle("rate");
  EXPECT_STREQ("idle", s->Name());
  // Above the threshold: nothing runs, whatever the time since the last write.
  EXPECT_TRUE(s->SelectRunning(Merges(), Context(1001, UINT64_MAX)).empty());
  EXPECT_TRUE(s->SelectRunning(Merges(), Context(1e9, 0)).empty());
  // At or below it: like single, the oldest only.
  EXPECT_EQ(s->SelectRunning(Merges(), Context(1000, 0)), std::vector<uint64_t>({1}));
  EXPECT_EQ(s->SelectRunning(Merges(), Context(0, 0)), std::vector<uint64_t>({1}));
  EXPECT_TRUE(s->SelectRunning({}, Context(0, 0)).empty());
  // The engine re-decides a few times per window; never more than every 10 ms.
  EXPECT_EQ(500000u, s->ProbeWindowMicros());
  EXPECT_EQ(100000u, s->RecheckIntervalMicros());
}

TEST(SchedulerTest, IdleAfterBurstWaitsForTheDelay) {
  auto s = MakeIdle("after_burst");
  // The rate does not matter in this mode, only the time since the last write.
  EXPECT_TRUE(s->SelectRunning(Merges(), Context(0, 0)).empty());
  EXPECT_TRUE(s->SelectRunning(Merges(), Context(0, 199999)).empty());
  EXPECT_EQ(s->SelectRunning(Merges(), Context(1e9, 200000)), std::vector<uint64_t>({1}));
  EXPECT_EQ(s->SelectRunning(Merges(), Context(0, UINT64_MAX)), std::vector<uint64_t>({1}));
  // Probes at a fifth of the delay, the shorter of delay and window.
  EXPECT_EQ(40000u, s->RecheckIntervalMicros());
}

TEST(SchedulerTest, IdleRunsUnderConstraintPressure) {
  for (const char* mode : {"rate", "after_burst"}) {
    auto s = MakeIdle(mode);
    EXPECT_EQ(s->SelectRunning(Merges(), Context(1e9, 0, /*pressure=*/true)),
              std::vector<uint64_t>({1}))
        << mode;
  }
}

TEST(SchedulerTest, OnlyIdleAsksForRechecks) {
  for (const std::string& name : SchedulerNames()) {
    EXPECT_EQ(name == "idle", Make(name)->RecheckIntervalMicros() > 0) << name;
  }
}

TEST(SchedulerTest, IdleValidatesItsOptions) {
  Options options;
  options.merge_scheduler = lsm::SchedulerKind::kIdle;
  std::unique_ptr<MergeScheduler> s;
  ASSERT_TRUE(NewMergeScheduler(options, &s).ok());  // the defaults are valid
  options.idle_mode = lsm::test::Named<lsm::IdleMode>("sometimes");
  Status status = NewMergeScheduler(options, &s);
  EXPECT_TRUE(status.IsInvalidArgument());
  EXPECT_NE(status.ToString().find("idle_mode"), std::string::npos) << status.ToString();
  EXPECT_NE(status.ToString().find("rate, after_burst"), std::string::npos) << status.ToString();
  options = Options();
  options.merge_scheduler = lsm::SchedulerKind::kIdle;
  options.idle_probe_ms = 9;
  status = NewMergeScheduler(options, &s);
  EXPECT_NE(status.ToString().find("idle_probe_ms"), std::string::npos) << status.ToString();
  options.idle_probe_ms = 500;
  options.idle_delay_ms = -1;
  status = NewMergeScheduler(options, &s);
  EXPECT_NE(status.ToString().find("idle_delay_ms"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace lsm::sched
