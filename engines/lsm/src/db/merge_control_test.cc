// MergeControl without a DB: a scripted policy, a host that only records
// what it is told, and components without files (MergeControl reads only
// their metadata).
#include "db/merge_control.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "db/test_util.h"
#include "options/option_test_util.h"

namespace lsm {
namespace {

// Proposes the scripted merges once, then none.
class ScriptedPolicy final : public policy::MergePolicy {
 public:
  ScriptedPolicy(std::vector<policy::MergeOp> ops, bool partitioned)
      : ops_(std::move(ops)), partitioned_(partitioned) {}
  const char* Name() const override { return "scripted"; }
  std::vector<policy::MergeOp> PickMerges(const policy::Snapshot&) const override {
    return std::exchange(ops_, {});
  }
  uint64_t DefaultMaxComponents(const policy::Snapshot&) const override { return 9; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return 3; }
  bool Partitioned() const override { return partitioned_; }

 private:
  mutable std::vector<policy::MergeOp> ops_;
  const bool partitioned_;
};

// RunMerge works until the test finishes the job, checking for pause and
// cancel the way the merge loop does at block boundaries.
class RecordingHost final : public MergeControl::Host {
 public:
  Status RunMerge(MergeJob* job) override {
    std::unique_lock<std::mutex> lock(mu_);
    started_.insert(job->id());
    cv_.notify_all();
    while (finished_.count(job->id()) == 0) {
      lock.unlock();
      if (!job->WaitWhilePaused()) return Status::IOError("merge cancelled");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
    }
    return finish_status_;
  }
  void MergeEnded(const Status& s) override {  // under the DB mutex
    std::lock_guard<std::mutex> lock(mu_);
    ended_.push_back(s);
    if (!s.ok()) background_error_ = true;
    cv_.notify_all();
  }
  bool HasBackgroundError() const override { return background_error_; }
  uint64_t UserBytesWritten() const override { return 0; }

  void Finish(uint64_t id, Status s = Status::OK()) {
    std::lock_guard<std::mutex> lock(mu_);
    finish_status_ = s;
    finished_.insert(id);
  }
  // False after 10 s without it.
  bool WaitForStarted(uint64_t id) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return started_.count(id) > 0; });
  }
  bool WaitForEnded(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return ended_.size() >= count; });
  }
  std::set<uint64_t> started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  std::vector<Status> ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<uint64_t> started_;
  std::set<uint64_t> finished_;
  Status finish_status_;
  std::vector<Status> ended_;
  bool background_error_ = false;  // guarded by the DB mutex
};

policy::MergeOp Op(std::vector<uint64_t> inputs, int output_level = 1) {
  policy::MergeOp op;
  op.inputs = std::move(inputs);
  op.output_level = output_level;
  return op;
}

// Components 1..n at level 0 (or the given levels), oldest first.
std::vector<ComponentPtr> Stack(size_t n, std::vector<int> levels = {}) {
  std::vector<ComponentPtr> stack;
  for (size_t i = 0; i < n; i++) {
    const int level = i < levels.size() ? levels[i] : 0;
    const std::string key(1, static_cast<char>('a' + i));
    stack.push_back(std::make_shared<ComponentFile>(test::MakeMeta(i + 1, level, key, key),
                                                    nullptr, nullptr, ""));
  }
  return stack;
}

class MergeControlTest : public testing::Test {
 protected:
  void Open(std::vector<policy::MergeOp> ops = {}, const std::string& scheduler = "single",
            bool partitioned = false) {
    options_.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(scheduler);
    std::unique_ptr<sched::MergeScheduler> sched;
    ASSERT_TRUE(sched::NewMergeScheduler(options_, &sched).ok());
    control_ = std::make_unique<MergeControl>(
        options_, std::make_unique<ScriptedPolicy>(std::move(ops), partitioned), std::move(sched),
        Env::Default(), &mu_, &host_);
    std::lock_guard<std::mutex> lock(mu_);
    control_->Opened();
  }
  bool Install(const std::vector<ComponentPtr>& stack) {
    std::lock_guard<std::mutex> lock(mu_);
    return control_->StackInstalled(stack, 0);
  }
  MergeControl::WriteAdmission Admit(bool flush_pending) {
    std::lock_guard<std::mutex> lock(mu_);
    return control_->AdmitWrite(flush_pending);
  }
  Stats MergeStats() {
    Stats st;
    control_->AddMergeStats(&st);
    return st;
  }
  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      control_->BeginShutdown();
    }
    control_->JoinThreads();
  }

  Options options_;
  std::mutex mu_;  // the DB mutex
  RecordingHost host_;
  std::unique_ptr<MergeControl> control_;
};

TEST_F(MergeControlTest, WritersStopOverTheConstraintOnlyWithSomethingToWaitFor) {
  options_.max_components = 3;
  Open();
  ASSERT_TRUE(Install(Stack(3)));
  EXPECT_EQ(3u, control_->max_components());
  EXPECT_EQ(3u, control_->constrained_count());
  EXPECT_FALSE(Admit(true).stop);
  ASSERT_TRUE(Install(Stack(4)));
  EXPECT_EQ(4u, control_->constrained_count());
  EXPECT_TRUE(Admit(true).stop);
  // No merge and no flush could lower the count: waiting would never end.
  EXPECT_FALSE(Admit(false).stop);
  EXPECT_EQ(0u, Admit(true).slowdown_micros);  // write_control "stop"
}

TEST_F(MergeControlTest, SlowdownStartsAtTwoThirdsOfTheConstraint) {
  options_.max_components = 6;
  options_.write_control = lsm::WriteControl::kSlowdown;
  Open();
  ASSERT_TRUE(Install(Stack(4)));
  EXPECT_EQ(0u, Admit(false).slowdown_micros);
  ASSERT_TRUE(Install(Stack(5)));
  EXPECT_EQ(1000u, Admit(false).slowdown_micros);
  EXPECT_FALSE(Admit(true).stop);
  ASSERT_TRUE(Install(Stack(7)));
  EXPECT_TRUE(Admit(true).stop);
  EXPECT_EQ(1000u, Admit(true).slowdown_micros);
}

TEST_F(MergeControlTest, ExplicitSlowdownCount) {
  options_.max_components = 6;
  options_.write_control = lsm::WriteControl::kSlowdown;
  options_.slowdown_components = 2;
  Open();
  ASSERT_TRUE(Install(Stack(2)));
  EXPECT_EQ(0u, Admit(false).slowdown_micros);
  ASSERT_TRUE(Install(Stack(3)));
  EXPECT_EQ(1000u, Admit(false).slowdown_micros);
}

TEST_F(MergeControlTest, PolicyDefaultsGlobalAndLocal) {
  Open();
  ASSERT_TRUE(Install(Stack(4, {1, 1, 0, 0})));
  EXPECT_EQ(9u, control_->max_components());
  EXPECT_EQ(4u, control_->constrained_count());

  options_.constraint = lsm::ConstraintScope::kLocal;
  Open();
  ASSERT_TRUE(Install(Stack(5, {1, 0, 0, 0, 0})));
  EXPECT_EQ(3u, control_->max_components());
  EXPECT_EQ(4u, control_->constrained_count());  // the fullest level
  EXPECT_TRUE(Admit(true).stop);

  options_.max_components_per_level = 4;
  Open();
  ASSERT_TRUE(Install(Stack(5, {1, 0, 0, 0, 0})));
  EXPECT_EQ(4u, control_->max_components());
  EXPECT_FALSE(Admit(true).stop);
}

TEST_F(MergeControlTest, SingleRunsOneMergeAtATimeOldestFirst) {
  Open({Op({1, 2}), Op({3, 4})}, "single");
  auto stack = Stack(5);
  ASSERT_TRUE(Install(stack));
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(control_->HasMerges());
    EXPECT_EQ(3u, control_->ComponentsAfterMerges(5));
  }
  for (int i = 0; i < 4; i++) EXPECT_TRUE(stack[i]->being_merged) << i;
  EXPECT_FALSE(stack[4]->being_merged);
  Stats st = MergeStats();
  EXPECT_EQ(1u, st.merges_running);
  EXPECT_EQ(1u, st.merges_pending);
  EXPECT_EQ(1u, st.merge_remaining_input_bytes.size());

  ASSERT_TRUE(host_.WaitForStarted(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(std::set<uint64_t>{1}, host_.started());  // the second stays paused
  host_.Finish(1);
  ASSERT_TRUE(host_.WaitForStarted(2));
  host_.Finish(2);
  ASSERT_TRUE(host_.WaitForEnded(2));
  for (const Status& s : host_.ended()) EXPECT_TRUE(s.ok()) << s.ToString();
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_FALSE(control_->HasMerges());
  }
  st = MergeStats();
  EXPECT_EQ(0u, st.merges_running + st.merges_pending);
}

TEST_F(MergeControlTest, FairRunsEveryMerge) {
  Open({Op({1, 2}), Op({3, 4})}, "fair");
  ASSERT_TRUE(Install(Stack(4)));
  EXPECT_EQ(2u, MergeStats().merges_running);
  ASSERT_TRUE(host_.WaitForStarted(1));
  ASSERT_TRUE(host_.WaitForStarted(2));
  host_.Finish(1);
  host_.Finish(2);
  ASSERT_TRUE(host_.WaitForEnded(2));
}

TEST_F(MergeControlTest, GreedyRunsAMoveFirst) {
  // Leveling's stack when level 1 is full and level 2 empty: level 1's
  // component moves down (one input: nothing to read or write) while the
  // flushed components merge into a new level-1 component. Greedy runs the
  // merge with the fewest remaining bytes: the move, with none, although its
  // component is ten times the merge's input (it waited behind the merge,
  // and behind every later one while they stayed smaller).
  auto component = [](uint64_t number, int level, uint64_t bytes) {
    ComponentMeta m = test::MakeMeta(number, level, "a", "z");
    m.file_size = bytes;
    return std::make_shared<ComponentFile>(m, nullptr, nullptr, "");
  };
  const std::vector<ComponentPtr> stack = {component(1, 1, 10 << 20), component(2, 0, 1 << 20),
                                           component(3, 0, 1 << 20)};
  Open({Op({2, 3}, 1), Op({1}, 2)}, "greedy");
  ASSERT_TRUE(Install(stack));
  Stats st = MergeStats();
  EXPECT_EQ(1u, st.merges_running);
  EXPECT_EQ(1u, st.merges_pending);
  // By the level each writes: the move into level 2 runs, the merge into level 1 waits.
  EXPECT_EQ((std::vector<uint64_t>{0, 0, 1}), st.merges_running_per_level);
  EXPECT_EQ((std::vector<uint64_t>{0, 1}), st.merges_pending_per_level);
  ASSERT_TRUE(host_.WaitForStarted(2));  // the move
  EXPECT_EQ(std::set<uint64_t>{2}, host_.started()) << "the merge waits (greedy runs one)";
  host_.Finish(2);
  ASSERT_TRUE(host_.WaitForEnded(1));
  ASSERT_TRUE(host_.WaitForStarted(1));
  host_.Finish(1);
  ASSERT_TRUE(host_.WaitForEnded(2));
}

TEST_F(MergeControlTest, InvalidMergesAreIgnored) {
  // Not contiguous, missing, and an input shared with the first merge.
  Open({Op({1, 3}), Op({7}), Op({}), Op({2, 3}), Op({3, 4})});
  auto stack = Stack(4);
  ASSERT_TRUE(Install(stack));
  EXPECT_FALSE(stack[0]->being_merged);
  EXPECT_TRUE(stack[1]->being_merged);
  EXPECT_TRUE(stack[2]->being_merged);
  EXPECT_FALSE(stack[3]->being_merged);
  Stats st = MergeStats();
  EXPECT_EQ(1u, st.merges_running + st.merges_pending);
  host_.Finish(1);
  ASSERT_TRUE(host_.WaitForEnded(1));
}

TEST_F(MergeControlTest, PartitionedMergesTakeAnySubsetAndMoveTheCursor) {
  Open({Op({1, 3}, 2)}, "single", /*partitioned=*/true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    control_->RestoreCursor({"", "x"});
  }
  auto stack = Stack(3, {2, 2, 1});  // ids 1, 2 at level 2 ("a", "b"); 3 at level 1 ("c")
  ASSERT_TRUE(Install(stack));
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ((std::vector<std::string>{"", "c"}), control_->round_robin_cursor());
  }
  EXPECT_TRUE(stack[0]->being_merged);
  EXPECT_FALSE(stack[1]->being_merged);
  host_.Finish(1);
  ASSERT_TRUE(host_.WaitForEnded(1));
}

TEST_F(MergeControlTest, StackPoliciesIgnoreTheRecoveredCursor) {
  Open();
  std::lock_guard<std::mutex> lock(mu_);
  control_->RestoreCursor({"", "x"});
  EXPECT_TRUE(control_->round_robin_cursor().empty());
}

TEST_F(MergeControlTest, AFailedMergeFreesItsInputsAndHaltsMerges) {
  Open({Op({1, 2})});
  auto stack = Stack(3);
  ASSERT_TRUE(Install(stack));
  host_.Finish(1, Status::IOError("disk full"));
  ASSERT_TRUE(host_.WaitForEnded(1));
  EXPECT_TRUE(host_.ended()[0].IsIOError());
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_FALSE(stack[0]->being_merged);
    EXPECT_FALSE(control_->HasMerges());
  }
  // The host now reports the background error: the constraint still follows
  // the stack, but no merge is created.
  EXPECT_FALSE(Install(Stack(4)));
  EXPECT_EQ(4u, control_->constrained_count());
}

TEST_F(MergeControlTest, ShutdownCancelsMergesWithoutError) {
  Open({Op({1, 2}), Op({3, 4})}, "single");
  auto stack = Stack(4);
  ASSERT_TRUE(Install(stack));
  ASSERT_TRUE(host_.WaitForStarted(1));
  Shutdown();
  EXPECT_EQ(std::set<uint64_t>{1}, host_.started());  // the paused one never ran
  ASSERT_EQ(2u, host_.ended().size());
  for (const Status& s : host_.ended()) EXPECT_TRUE(s.ok()) << s.ToString();
  for (const ComponentPtr& c : stack) EXPECT_FALSE(c->being_merged);  // their inputs stay
  EXPECT_FALSE(Install(stack));
}

}  // namespace
}  // namespace lsm
