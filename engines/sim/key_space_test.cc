// The key-space model of updates, and what it shows of each policy's depth:
// under updates over a fixed key space, a tree's depth and its write
// amplification must settle once the data fills the deepest level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "options/option_test_util.h"
#include "policy/levels.h"
#include "sim/simulator.h"

namespace lsm::sim {
namespace {

constexpr uint64_t kFlush = 4096;            // bytes of writes per flush (a memtable)
constexpr double kKeySpace = 50.0 * kFlush;  // the unique data: 50 flushes' worth

std::unique_ptr<Simulator> MakeUpdating(const std::string& policy,
                                        void (*configure)(Options*) = nullptr) {
  SimOptions o;
  o.engine.merge_policy = lsm::test::Named<lsm::PolicyKind>(policy);
  if (configure != nullptr) configure(&o.engine);
  o.key_space_bytes = kKeySpace;
  std::unique_ptr<Simulator> sim;
  Status s = Simulator::Create(o, &sim);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // The load inserts the key space once, as a campaign's load phase does.
  for (int t = 0; t < 50; ++t) EXPECT_TRUE(sim->Load(kFlush).ok());
  return sim;
}

// Depth and merge bytes per flush, sampled after `marks` update flushes.
struct Trace {
  std::vector<int> depth;
  std::vector<double> merged_per_flush;  // since the previous mark
};

Trace RunUpdates(Simulator* sim, const std::vector<uint64_t>& marks) {
  Trace trace;
  uint64_t done = 0, merged = 0;
  for (uint64_t mark : marks) {
    const uint64_t from = done;
    for (; done < mark; ++done) EXPECT_TRUE(sim->Flush(kFlush).ok());
    const Checkpoint c = sim->Now();
    trace.depth.push_back(policy::DeepestLevel(sim->snapshot()));
    trace.merged_per_flush.push_back(static_cast<double>(c.bytes_merged - merged) /
                                     static_cast<double>(mark - from));
    merged = c.bytes_merged;
  }
  return trace;
}

// constant k = 1 (every flush merged into the one component) over a key space of 1000 bytes.
SimOptions OneComponentOverAThousandBytes() {
  SimOptions o;
  o.engine.merge_policy = lsm::PolicyKind::kConstant;
  o.engine.sstable_bound = 1;
  o.key_space_bytes = 1000;
  return o;
}

TEST(KeySpace, AFlushKeepsOneEntryPerKeyAndAMergeTheUnionOfItsInputs) {
  SimOptions o = OneComponentOverAThousandBytes();
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  // A flush of 1000 bytes of writes over 1000 bytes of keys: 1000(1 - 1/e).
  ASSERT_TRUE(sim->Flush(1000).ok());
  const uint64_t one = sim->snapshot().stack[0].bytes;
  EXPECT_EQ(one, static_cast<uint64_t>(std::llround(1000 * (1 - std::exp(-1.0)))));
  EXPECT_EQ(sim->snapshot().stack[0].flushed_entries, 1000u);
  // Two such shares merged: 1000(1 - (1 - 0.632)^2), not their sum.
  ASSERT_TRUE(sim->Flush(1000).ok());
  ASSERT_EQ(sim->snapshot().stack.size(), 1u);
  const double share = static_cast<double>(one) / 1000;
  EXPECT_EQ(sim->snapshot().stack[0].bytes,
            static_cast<uint64_t>(std::llround(1000 * (1 - (1 - share) * (1 - share)))));
  EXPECT_EQ(sim->snapshot().stack[0].flushed_entries, 2000u);
}

TEST(KeySpace, TheLoadInsertsDistinctKeys) {
  SimOptions o = OneComponentOverAThousandBytes();
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  for (int t = 0; t < 4; ++t) ASSERT_TRUE(sim->Load(250).ok());
  ASSERT_EQ(sim->snapshot().stack.size(), 1u);
  EXPECT_EQ(sim->snapshot().stack[0].bytes, 1000u);  // the sum: no key twice
}

TEST(KeySpace, AMergeTakesTheTimeOfWhatItWrites) {
  // The bandwidth is the writes': two flushes of 1000 bytes over a key space of 1000 keep
  // 632 each, and their merge writes 865 (not the 1264 it reads) at 1000 bytes/s.
  SimOptions o = OneComponentOverAThousandBytes();
  o.time.bandwidth = 1000;
  o.time.arrival_rate = 1000;
  o.time.flush_time = false;
  std::unique_ptr<Simulator> sim;
  ASSERT_TRUE(Simulator::Create(o, &sim).ok());
  std::vector<Decision> merges;
  sim->set_decision_observer([&](const Decision& d) { merges.push_back(d); });
  for (int t = 0; t < 2; ++t) ASSERT_TRUE(sim->Flush(1000).ok());
  ASSERT_TRUE(sim->Drain().ok());
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_EQ(merges[0].input_bytes, 1264u);
  EXPECT_EQ(merges[0].output_bytes, 865u);
  EXPECT_NEAR(merges[0].time_s, 2.0 + 0.865, 1e-6);  // sealed at 2 s, then 865 / 1000 s
}

TEST(KeySpace, IsNotCombinedWithAnObsoleteFraction) {
  SimOptions o;
  o.engine.merge_policy = lsm::PolicyKind::kTiering;
  o.key_space_bytes = 1000;
  o.obsolete_fraction = 0.1;
  std::unique_ptr<Simulator> sim;
  const Status s = Simulator::Create(o, &sim);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("choose one"), std::string::npos) << s.ToString();
}

// 20,000 update flushes over a key space of 50 flushes: tiering (T = 3)
// needs level 4, the first whose components' capacity (81 flushes) exceeds
// the data; the unbounded rule, run beside it, keeps deepening (a level
// every 3x flushes).
TEST(KeySpace, TieringsDepthAndWriteAmplificationSettleUnderUpdates) {
  const std::vector<uint64_t> marks = {2000, 5000, 10000, 15000, 20000};
  auto bounded = MakeUpdating("tiering");
  const Trace b = RunUpdates(bounded.get(), marks);
  auto unbounded = MakeUpdating("tiering", [](Options* o) { o->tiering_unbounded_depth = true; });
  const Trace u = RunUpdates(unbounded.get(), marks);
  for (size_t i = 0; i < marks.size(); ++i) {
    std::printf("after %llu flushes: depth %d (unbounded %d), merge bytes/flush %.0f (%.0f)\n",
                static_cast<unsigned long long>(marks[i]), b.depth[i], u.depth[i],
                b.merged_per_flush[i], u.merged_per_flush[i]);
  }
  // The depth is the data's: level 4 from 2,000 flushes on.
  for (int d : b.depth) EXPECT_EQ(d, 4);
  // Merge bytes per flush settle: every window from 5,000 flushes on within
  // 5 % of the last one.
  for (size_t i = 1; i < marks.size(); ++i) {
    EXPECT_NEAR(b.merged_per_flush[i] / b.merged_per_flush.back(), 1.0, 0.05) << "window " << i;
  }
  // The unbounded rule deepens between 2,000 and 20,000 flushes, past the
  // bounded depth.
  EXPECT_GT(u.depth.back(), u.depth.front());
  EXPECT_GT(u.depth.back(), b.depth.back() + 1);
}

// The same question for the other stack policies. Size-tiered and the
// dynamic bounded-depth policies (bigtable, exploring, constant) decide from
// component sizes, so their cost settles with the data, as leveling's does;
// minlatency and binomial follow a schedule of the flush count (Mao et al.'s
// recurrences), so theirs keeps growing with it, slowly, under updates as
// under inserts. All keep their component bound.
struct Settling {
  const char* policy;
  bool settles;
  uint64_t max_components;
};

class KeySpacePolicies : public ::testing::TestWithParam<Settling> {};

TEST_P(KeySpacePolicies, KeepTheirBoundAndSettleWhenTheyDecideFromSizes) {
  const Settling& p = GetParam();
  auto sim = MakeUpdating(p.policy, [](Options* o) { o->memtable_bytes = kFlush; });
  const Trace t = RunUpdates(sim.get(), {2000, 5000, 10000, 15000, 20000});
  for (size_t i = 0; i < t.depth.size(); ++i) {
    std::printf("%s after window %zu: depth %d, merge bytes/flush %.0f\n", p.policy, i,
                t.depth[i], t.merged_per_flush[i]);
  }
  EXPECT_LE(sim->Now().max_sstables, p.max_components);
  for (int d : t.depth) EXPECT_EQ(d, t.depth.front());
  const double growth = t.merged_per_flush.back() / t.merged_per_flush[1];
  if (p.settles) {
    EXPECT_NEAR(growth, 1.0, 0.05);
  } else {
    EXPECT_GT(growth, 1.05);  // the schedule's cost still grows
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, KeySpacePolicies,
    ::testing::Values(Settling{"leveling", true, 4}, Settling{"size-tiered", true, 50},
                      Settling{"bigtable", true, 7}, Settling{"exploring", true, 7},
                      Settling{"constant", true, 7}, Settling{"minlatency", false, 7},
                      Settling{"binomial", false, 7}),
    [](const ::testing::TestParamInfo<Settling>& info) {
      std::string name = info.param.policy;
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

}  // namespace
}  // namespace lsm::sim

