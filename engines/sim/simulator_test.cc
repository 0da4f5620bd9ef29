// The simulator: exact write amplification and SSTable counts on cases
// worked out by hand, the update model, the timed model (stalls, bandwidth,
// schedulers) and its errors.
#include "sim/simulator.h"
#include "options/option_test_util.h"

#include <gtest/gtest.h>

namespace lsm::sim {
namespace {

std::unique_ptr<Simulator> Make(const std::string& policy, int k, double bandwidth = 0,
                                double arrival = 0, const std::string& scheduler = "single") {
  SimOptions o;
  o.engine.merge_policy = lsm::test::Named<lsm::PolicyKind>(policy);
  o.engine.sstable_bound = k;
  o.time.bandwidth = bandwidth;
  o.time.arrival_rate = arrival;
  o.engine.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(scheduler);
  std::unique_ptr<Simulator> sim;
  Status s = Simulator::Create(o, &sim);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return sim;
}

TEST(Simulator, ConstantByHand) {
  // constant k = 2, unit flushes: [1] [1,1] [1,1,1]->[3] [3,1] [3,1,1]->[5]
  // [5,1]. Written: 6 flushed + 3 + 5 merged; counts 1 2 1 2 1 2.
  auto sim = Make("constant", 2);
  for (int t = 0; t < 6; ++t) ASSERT_TRUE(sim->Flush(1).ok());
  const Checkpoint c = sim->Now();
  EXPECT_EQ(c.flushes, 6u);
  EXPECT_EQ(c.bytes_flushed, 6u);
  EXPECT_EQ(c.bytes_merged, 3u + 5u);
  EXPECT_EQ(c.merges, 2u);
  EXPECT_DOUBLE_EQ(c.write_amp, 14.0 / 6);
  EXPECT_DOUBLE_EQ(c.avg_sstables, 1.5);
  EXPECT_EQ(c.sstables, 2u);
}

TEST(Simulator, ObsoleteFractionShrinksMergeOutputs) {
  SimOptions o;
  o.engine.merge_policy = lsm::PolicyKind::kConstant;
  o.engine.sstable_bound = 1;
  o.obsolete_fraction = 0.5;
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  // [100] ; [100,100] -> 100 ; [100,100] -> 100: each merge halves 200.
  for (int t = 0; t < 3; ++t) ASSERT_TRUE(sim->Flush(100).ok());
  EXPECT_EQ(sim->Now().bytes_merged, 200u);
  EXPECT_EQ(sim->snapshot().stack.size(), 1u);
  EXPECT_EQ(sim->snapshot().stack[0].bytes, 100u);
}

TEST(Simulator, DecisionsAreObserved) {
  auto sim = Make("minlatency", 2);
  std::vector<Decision> seen;
  sim->set_decision_observer([&](const Decision& d) { seen.push_back(d); });
  for (int t = 0; t < 6; ++t) ASSERT_TRUE(sim->Flush(1).ok());
  // minlatency k = 2: merges at t3 (all 3), t5 (newest 2), t6 (all 3).
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].flush, 3u);
  EXPECT_EQ(seen[0].inputs, 3u);
  EXPECT_EQ(seen[1].flush, 5u);
  EXPECT_EQ(seen[1].first, 1u);
  EXPECT_EQ(seen[1].input_bytes, 2u);
  EXPECT_EQ(seen[2].output_bytes, 6u);
}

TEST(Simulator, RejectsBadParameters) {
  std::unique_ptr<Simulator> sim;
  SimOptions o;
  o.engine.merge_policy = lsm::test::Named<lsm::PolicyKind>("nope");
  EXPECT_TRUE(Simulator::Create(o, &sim).IsInvalidArgument());
  o.engine.merge_policy = lsm::PolicyKind::kBinomial;
  o.obsolete_fraction = 1;
  EXPECT_TRUE(Simulator::Create(o, &sim).IsInvalidArgument());
  o.obsolete_fraction = 0;
  o.time.bandwidth = 100;
  EXPECT_TRUE(Simulator::Create(o, &sim).IsInvalidArgument()) << "bandwidth without arrival";
  o.time.arrival_rate = 10;
  o.engine.merge_scheduler = lsm::SchedulerKind::kIdle;
  EXPECT_TRUE(Simulator::Create(o, &sim).IsInvalidArgument());
  o.engine.merge_scheduler = lsm::SchedulerKind::kSingle;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  EXPECT_TRUE(sim->Flush(0).IsInvalidArgument());
}

TEST(SimulatorTimed, FastMergesMatchTheInstantModel) {
  // Merges 10^6 times faster than arrivals: every merge completes before
  // the next flush, so the timed run decides exactly as the instant one.
  for (const char* policy : {"bigtable", "exploring", "binomial"}) {
    auto instant = Make(policy, 4);
    auto timed = Make(policy, 4, 1e9, 1e3, "fair");
    for (int t = 0; t < 500; ++t) {
      const uint64_t bytes = 1000 + (t * 7919) % 500;
      ASSERT_TRUE(instant->Flush(bytes).ok());
      ASSERT_TRUE(timed->Flush(bytes).ok());
    }
    const double flushed_at = timed->Now().time_s;
    ASSERT_TRUE(timed->Drain().ok());  // the last flush's merge
    const Checkpoint a = instant->Now(), b = timed->Now();
    EXPECT_EQ(a.bytes_merged, b.bytes_merged) << policy;
    EXPECT_DOUBLE_EQ(a.avg_sstables, b.avg_sstables) << policy;
    EXPECT_DOUBLE_EQ(b.stall_s, 0) << policy;
    EXPECT_NEAR(flushed_at, a.bytes_flushed / 1e3, 1e-6) << policy;
    EXPECT_GT(b.time_s, flushed_at) << policy;
  }
}

TEST(SimulatorTimed, SlowMergesStallWrites) {
  // constant k = 1, flushes of 100 bytes every 1 s; merging 2 components
  // takes 200 / 50 = 4 s. The third flush arrives with 3 components over
  // the constraint (k + 1 = 2): writes stall until the merge ends.
  auto sim = Make("constant", 1, 50, 100);
  ASSERT_TRUE(sim->Flush(100).ok());  // t = 1: [100]
  ASSERT_TRUE(sim->Flush(100).ok());  // t = 2: [100*,100*], merge until t = 6
  EXPECT_DOUBLE_EQ(sim->Now().time_s, 2);
  EXPECT_EQ(sim->Now().sstables, 1u) << "counted as its merge leaves it";
  ASSERT_TRUE(sim->Flush(100).ok());  // t = 3: 3 components, another merge
  EXPECT_DOUBLE_EQ(sim->Now().time_s, 3);
  EXPECT_EQ(sim->Now().max_sstables, 3u);
  // The fourth flush needs 1 s of filling, but the count (3) exceeds k + 1
  // until the first merge ends at 6; filling resumes then: flush at 7.
  ASSERT_TRUE(sim->Flush(100).ok());
  const Checkpoint c = sim->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 7);
  EXPECT_DOUBLE_EQ(c.stall_s, 3);
  EXPECT_EQ(c.bytes_merged, 200u);
}

TEST(SimulatorTimed, SchedulersShareTheBandwidth) {
  // size-tiered with windows of two: flushes of 100 bytes arriving at once
  // create two merges of 200 bytes, both in flight, under 100 bytes/s.
  // single runs the older alone (done at 2 s, the other at 4 s); fair runs
  // both at 50 bytes/s (both done at 4 s). A 3e9-byte flush at 1e9 bytes/s
  // lets 3 s pass.
  for (const char* scheduler : {"single", "fair"}) {
    SCOPED_TRACE(scheduler);
    SimOptions o;
    o.engine.merge_policy = lsm::PolicyKind::kSizeTiered;
    o.engine.max_merge_components = 2;
    o.time.bandwidth = 100;
    o.time.arrival_rate = 1e9;
    o.engine.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(scheduler);
    o.engine.max_components = 1000;
    std::unique_ptr<Simulator> sim;
    ASSERT_TRUE(Simulator::Create(o, &sim).ok());
    for (int t = 0; t < 4; ++t) ASSERT_TRUE(sim->Flush(100).ok());
    ASSERT_TRUE(sim->Flush(3000000000ull).ok());
    EXPECT_EQ(sim->Now().merges, std::string(scheduler) == "single" ? 1u : 0u);
    // At 5 s both are done (the merge of their outputs, 400 bytes, is not).
    ASSERT_TRUE(sim->Flush(2000000000ull).ok());
    EXPECT_NEAR(sim->Now().time_s, 5, 1e-6);
    EXPECT_EQ(sim->Now().merges, 2u);
  }
}

}  // namespace
}  // namespace lsm::sim
