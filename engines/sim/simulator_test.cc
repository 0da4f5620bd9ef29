// The simulator: exact write amplification and SSTable counts on cases
// worked out by hand, the update model, the timed model (stalls, bandwidth,
// schedulers) and its errors.
#include "sim/simulator.h"
#include "options/option_test_util.h"

#include <gtest/gtest.h>

#include <vector>

namespace lsm::sim {
namespace {

std::unique_ptr<Simulator> Make(const std::string& policy, int k, double bandwidth = 0,
                                double arrival = 0, const std::string& scheduler = "single",
                                bool flush_time = false, int memory_components = 2) {
  SimOptions o;
  o.engine.merge_policy = lsm::test::Named<lsm::PolicyKind>(policy);
  o.engine.sstable_bound = k;
  o.engine.memory_components = memory_components;
  o.time.bandwidth = bandwidth;
  o.time.arrival_rate = arrival;
  o.time.flush_time = flush_time;
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

TEST(Simulator, AMergeOfOneComponentIsAMoveThatWritesNothing) {
  // Leveling: the first flush moves down into the empty level 1 (the
  // engine's trivial move), the next two merge into it: 200 + 300 bytes.
  for (const bool timed : {false, true}) {
    SCOPED_TRACE(timed ? "timed" : "instant");
    SimOptions o;
    o.engine.merge_policy = lsm::PolicyKind::kLeveling;
    o.engine.size_ratio = 4;
    if (timed) {
      o.time.bandwidth = 1e9;
      o.time.arrival_rate = 1e3;
    }
    std::unique_ptr<Simulator> sim;
    ASSERT_TRUE(Simulator::Create(o, &sim).ok());
    std::vector<Decision> decisions;
    sim->set_decision_observer([&](const Decision& d) { decisions.push_back(d); });
    for (int t = 0; t < 3; ++t) ASSERT_TRUE(sim->Flush(100).ok());
    ASSERT_TRUE(sim->Drain().ok());
    ASSERT_EQ(decisions.size(), 3u);
    EXPECT_EQ(decisions[0].inputs, 1u);
    EXPECT_EQ(decisions[0].output_bytes, 0u);
    EXPECT_EQ(sim->Now().bytes_merged, 500u);
    EXPECT_EQ(sim->Now().merges, 3u) << "a move counts as a merge, as the engine counts it";
  }
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
  for (const bool flush_time : {false, true})
  for (const char* policy : {"bigtable", "exploring", "binomial"}) {
    SCOPED_TRACE(flush_time ? "flush time" : "instant flushes");
    auto instant = Make(policy, 4);
    auto timed = Make(policy, 4, 1e9, 1e3, "fair", flush_time);
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
    o.time.flush_time = false;  // the 3e9-byte flushes below only let time pass
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

TEST(SimulatorTimed, FlushesTakeTimeAndFullMemtablesWait) {
  // constant k = 10 (no merge in 3 flushes); memtables of 100 bytes fill in
  // 1 s (100 bytes/s) and flush in 2 s (50 bytes/s).
  auto two = Make("constant", 10, 50, 100, "fair", true, 2);
  ASSERT_TRUE(two->Flush(100).ok());  // full at 1, sealed; flushed 1..3
  EXPECT_DOUBLE_EQ(two->Now().time_s, 1);
  EXPECT_EQ(two->Now().flushes, 1u);
  EXPECT_EQ(two->Now().flushes_pending, 1u);
  EXPECT_EQ(two->Now().bytes_flushed, 0u) << "its component joins the stack when its flush ends";
  ASSERT_TRUE(two->Flush(100).ok());  // full at 2; both memtables full until 3
  Checkpoint c = two->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 3);
  EXPECT_DOUBLE_EQ(c.stall_s, 1);
  EXPECT_DOUBLE_EQ(c.memory_stall_s, 1);
  EXPECT_EQ(c.bytes_flushed, 100u);
  ASSERT_TRUE(two->Flush(100).ok());  // full at 4; waits for the flush that ends at 5
  EXPECT_DOUBLE_EQ(two->Now().time_s, 5);
  EXPECT_DOUBLE_EQ(two->Now().memory_stall_s, 2);
  ASSERT_TRUE(two->Drain().ok());
  c = two->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 7);
  EXPECT_EQ(c.flushes, 3u);
  EXPECT_EQ(c.flushes_pending, 0u);
  EXPECT_EQ(c.bytes_flushed, 300u);

  // Three memtables: the second is sealed at once, the third when the first
  // flush ends (3); no stall.
  auto three = Make("constant", 10, 50, 100, "fair", true, 3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(three->Flush(100).ok());
  EXPECT_DOUBLE_EQ(three->Now().time_s, 3);
  EXPECT_DOUBLE_EQ(three->Now().stall_s, 0);
  EXPECT_EQ(three->Now().flushes_pending, 2u);

  // Without flush time: a flush is done when its memtable is full.
  auto none = Make("constant", 10, 50, 100, "fair", false, 2);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(none->Flush(100).ok());
  EXPECT_DOUBLE_EQ(none->Now().time_s, 3);
  EXPECT_EQ(none->Now().bytes_flushed, 300u);
}

TEST(SimulatorTimed, AWriterWithABacklogCatchesUp) {
  // Arrivals at 100 bytes/s, flushes at 200 bytes/s, two memtables (constant
  // k = 10: no merges). A 300-byte memtable is full at 3 and flushed 3..4.5;
  // the next (100 bytes) is full at 4 and waits until 4.5, while 50 bytes
  // more arrive. Then the third: at 300 bytes/s the writer works off the
  // backlog by 4.75 and fills the rest at the arrival rate: full at 5, no
  // backlog left. Without catch-up it is full at 5.5, 0.5 s behind.
  for (const double write_rate : {300.0, 0.0}) {
    SCOPED_TRACE(write_rate);
    SimOptions o;
    o.engine.merge_policy = lsm::PolicyKind::kConstant;
    o.engine.sstable_bound = 10;
    o.time.bandwidth = 200;
    o.time.arrival_rate = 100;
    o.time.write_rate = write_rate;
    std::unique_ptr<Simulator> sim;
    ASSERT_TRUE(Simulator::Create(o, &sim).ok());
    ASSERT_TRUE(sim->Flush(300).ok());
    ASSERT_TRUE(sim->Flush(100).ok());
    EXPECT_NEAR(sim->Now().time_s, 4.5, 1e-9);
    EXPECT_NEAR(sim->Now().stall_s, 0.5, 1e-9);
    EXPECT_NEAR(sim->Now().backlog_s, 0.5, 1e-9);
    ASSERT_TRUE(sim->Flush(100).ok());
    const Checkpoint c = sim->Now();
    EXPECT_NEAR(c.time_s, write_rate > 0 ? 5.0 : 5.5, 1e-9);
    EXPECT_NEAR(c.backlog_s, write_rate > 0 ? 0.0 : 0.5, 1e-9);
    EXPECT_NEAR(c.max_backlog_s, 0.5, 1e-9);
    EXPECT_NEAR(c.stall_s, 0.5, 1e-9);
  }
  SimOptions slower;
  slower.engine.merge_policy = lsm::PolicyKind::kConstant;
  slower.time.bandwidth = 200;
  slower.time.arrival_rate = 100;
  slower.time.write_rate = 50;
  std::unique_ptr<Simulator> sim;
  EXPECT_TRUE(Simulator::Create(slower, &sim).IsInvalidArgument()) << "a writer slower than arrivals";
}

TEST(SimulatorTimed, TheLoadBuildsTheStartingTreeAndIsNotCounted) {
  // Leveling: three load flushes end as one level-1 component of 300 bytes
  // (a move, then two merges, all done); the run starts from it at time 0.
  auto sim = Make("leveling", 6, 100, 100, "greedy", true);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sim->Load(100).ok());
  Checkpoint c = sim->Now();
  EXPECT_EQ(c.flushes, 0u);
  EXPECT_EQ(c.bytes_flushed, 0u);
  EXPECT_EQ(c.bytes_merged, 0u);
  EXPECT_DOUBLE_EQ(c.time_s, 0);
  ASSERT_EQ(sim->snapshot().stack.size(), 1u);
  EXPECT_EQ(sim->snapshot().stack[0].bytes, 300u);
  ASSERT_TRUE(sim->Flush(100).ok());  // full at 1, flushed 1..2
  ASSERT_TRUE(sim->Drain().ok());     // then merged with level 1: 400 bytes at 100/s
  c = sim->Now();
  EXPECT_EQ(c.flushes, 1u);
  EXPECT_EQ(c.bytes_flushed, 100u);
  EXPECT_EQ(c.bytes_merged, 400u);
  EXPECT_DOUBLE_EQ(c.time_s, 6);
  EXPECT_TRUE(sim->Load(100).IsInvalidArgument()) << "a load after the run began";
}

TEST(SimulatorTimed, ThreadSpeedsCapFlushesAndMerges) {
  // constant k = 1, 100-byte memtables filling in 1 s; bandwidth 100 bytes/s
  // but a flush thread writes at most 50: each flush takes 2 s and leaves 50
  // bytes/s to a merge beside it. F1 1..3, F2 waits for a memtable until 3
  // and is flushed 3..5; then the merge of both starts at 5 while F3, full
  // at 4 and waiting until 5, is flushed 5..7: at 7 the merge has 100 of its
  // 200 bytes left, and F4 (full at 6) is sealed.
  SimOptions o;
  o.engine.merge_policy = lsm::PolicyKind::kConstant;
  o.engine.sstable_bound = 1;
  o.time.bandwidth = 100;
  o.time.arrival_rate = 100;
  o.time.flush_rate = 50;
  o.engine.max_components = 1000;  // no constraint stall (F3 ends with 3 components)
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(sim->Flush(100).ok());
  Checkpoint c = sim->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 7);
  EXPECT_EQ(c.bytes_flushed, 300u);
  EXPECT_EQ(c.merges, 0u);
  EXPECT_DOUBLE_EQ(c.memory_stall_s, 3);

  // A merge thread at most 25 bytes/s: merging two 100-byte components
  // (flushes taking no time) takes 8 s, not 2.
  SimOptions m;
  m.engine.merge_policy = lsm::PolicyKind::kConstant;
  m.engine.sstable_bound = 1;
  m.time.bandwidth = 100;
  m.time.arrival_rate = 1e12;
  m.time.flush_time = false;
  m.time.merge_rate = 25;
  ASSERT_TRUE(Simulator::Create(m, &sim).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(sim->Flush(100).ok());
  ASSERT_TRUE(sim->Drain().ok());
  EXPECT_NEAR(sim->Now().time_s, 8, 1e-6);
  m.time.merge_rate = -1;
  EXPECT_TRUE(Simulator::Create(m, &sim).IsInvalidArgument());
}

TEST(SimulatorTimed, FlushesGoBeforeMerges) {
  // constant k = 1, 100-byte memtables filling in 1 s and flushing in 1 s
  // (100 bytes/s). The second flush ends at 3 and starts a merge of 200
  // bytes; the third memtable, sealed at 3, is flushed 3..4 with the whole
  // bandwidth while the merge waits (shared evenly, it would end at 5).
  // No constraint (3 components at 4; see the test below).
  SimOptions o;
  o.engine.merge_policy = lsm::PolicyKind::kConstant;
  o.engine.sstable_bound = 1;
  o.engine.merge_scheduler = lsm::SchedulerKind::kFair;
  o.engine.max_components = 1000;
  o.time.bandwidth = 100;
  o.time.arrival_rate = 100;
  o.time.flush_priority = FlushPriority::kStrict;
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(sim->Flush(100).ok());
  const Checkpoint c = sim->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 4);
  EXPECT_EQ(c.flushes, 4u);
  EXPECT_EQ(c.flushes_pending, 1u);
  EXPECT_EQ(c.bytes_flushed, 300u);
  EXPECT_EQ(c.merges, 0u) << "the merge made no progress while the flush ran";
  EXPECT_DOUBLE_EQ(c.stall_s, 0);
}

TEST(SimulatorTimed, NoMemtableIsSealedOverTheConstraint) {
  // As above, with the constraint (k + 1 = 2) and flushes taking turns with
  // the merge (the default): F3 is flushed 3..5 at 50 bytes/s beside the
  // merge of F1 and F2 (100 of its 200 bytes done at 5); the fourth
  // memtable, full at 4, waits for a free memtable until 5 -- and then for
  // the constraint, as F3 ended with 3 components: the engine checks the
  // constraint before it switches memtables, after every wait. The merge
  // runs alone 5..6; then 2 components, and the memtable is sealed at 6.
  // Sealed at 5, its flush would have brought a fourth component.
  auto sim = Make("constant", 1, 100, 100, "fair", true, 2);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(sim->Flush(100).ok());
  const Checkpoint c = sim->Now();
  EXPECT_DOUBLE_EQ(c.time_s, 6);
  EXPECT_EQ(c.flushes_pending, 1u);
  EXPECT_EQ(c.bytes_flushed, 300u);
  EXPECT_EQ(c.merges, 1u);
  EXPECT_DOUBLE_EQ(c.stall_s, 2);
  EXPECT_DOUBLE_EQ(c.memory_stall_s, 1) << "4..5; 5..6 is a constraint stall";
  EXPECT_EQ(c.max_sstables, 3u);
}


// Leveling + greedy in miniature (research/leveling-greedy.md): a closed
// loop over a loaded three-level tree, T = 10. Greedy always runs the merge
// with the fewest bytes left, so a level's merge down waits while the flushes
// keep merging into the new component beside it. Without full_level_waits
// that component grows past its capacity without bound: each flush's merge
// rewrites more, and write amplification climbs far above fair's. With it the
// flushes wait once the component is full, the merge down runs, and greedy
// writes about what fair writes.
TEST(SimulatorTimed, GreedyLevelingStarvesAMergeDownUnlessAFullLevelWaits) {
  auto run = [](const char* scheduler, bool waits) {
    SimOptions o;
    o.engine.merge_policy = lsm::PolicyKind::kLeveling;
    o.engine.size_ratio = 10;
    o.engine.memtable_bytes = 4096;
    o.engine.full_level_waits = waits;
    o.engine.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(scheduler);
    o.time.bandwidth = 4096;
    o.time.arrival_rate = 1e9;  // a closed loop: as fast as the merges allow
    std::unique_ptr<Simulator> sim;
    Status s = Simulator::Create(o, &sim);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return 0.0;
    for (int i = 0; i < 800; ++i) EXPECT_TRUE(sim->Load(4096).ok());
    for (int i = 0; i < 1500; ++i) EXPECT_TRUE(sim->Flush(4096).ok());
    return sim->Now().write_amp;
  };
  const double fair = run("fair", false);
  const double greedy_grows = run("greedy", false);
  const double greedy_waits = run("greedy", true);
  const double fair_waits = run("fair", true);
  std::printf("write amplification: fair %.1f, greedy %.1f; full_level_waits: fair %.1f, "
              "greedy %.1f\n", fair, greedy_grows, fair_waits, greedy_waits);
  EXPECT_GT(greedy_grows, 3 * fair);
  EXPECT_LT(greedy_waits, 1.2 * fair_waits);
  EXPECT_LT(fair_waits, 1.2 * fair);
}

}  // namespace
}  // namespace lsm::sim
