// Long runs of every policy in the test simulators (policy_test_util.h):
// invariants after thousands of flushes, write amplification, and the op
// contract under merges that take time and on random snapshots.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "policy/policies.h"
#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::ConcurrentSim;
using test::Describe;
using test::ImmediateSim;

constexpr uint64_t kM = 1000;  // memtable_bytes and the size of every flush

void Report(const std::string& what, const test::SimStats& stats) {
  std::cout << "[ measured ] " << what << ": flushes " << stats.flushes << ", write amp "
            << stats.WriteAmp() << " (" << stats.WriteAmpWithoutMoves()
            << " if single-input ops are free), max components " << stats.max_components
            << std::endl;
  ::testing::Test::RecordProperty(what, std::to_string(stats.WriteAmp()));
}

// ---- leveling ---------------------------------------------------------------

LevelingParams LevelingWith(double t, bool dynamic) {
  LevelingParams params;
  params.size_ratio = t;
  params.memtable_bytes = kM;
  params.dynamic_level_sizes = dynamic;
  return params;
}

// At rest (no merge due): no flushed component left, one component per
// level >= 1, levels strictly deeper towards older data, each level below
// its capacity (else it would have moved down).
void CheckLevelingAtRest(const Snapshot& s, const LevelingParams& params) {
  const std::vector<double> capacity = LevelingCapacities(s, params);
  int previous = kMaxLevel + 1;
  for (const Component& c : s.stack) {
    ASSERT_GE(c.level, 1) << Describe(s);
    ASSERT_LT(c.level, previous) << "two components at one level, or unsorted: " << Describe(s);
    previous = c.level;
    ASSERT_LT(static_cast<double>(c.bytes), capacity[c.level]) << Describe(s);
    if (!params.dynamic_level_sizes) {
      // Independently of LevelingCapacities: M * T^i.
      ASSERT_LT(static_cast<double>(c.bytes), kM * std::pow(params.size_ratio, c.level));
    }
  }
}

class LevelingSim : public ::testing::TestWithParam<std::tuple<double, bool>> {};

TEST_P(LevelingSim, InvariantsOver5000Flushes) {
  const auto [t, dynamic] = GetParam();
  const LevelingParams params = LevelingWith(t, dynamic);
  auto policy = NewLevelingPolicy(params);
  ImmediateSim sim(*policy);
  // Between flushes and merges a level only grows while below its capacity,
  // by at most what the level above holds, so level i never exceeds
  // bound(i) = capacity(i) + bound(i-1), bound(0) = M (one flush). With an
  // integer T every size is a multiple of M and the tighter
  // capacity * (1 + 1/T) holds (static sizes).
  sim.set_observer([&](const Snapshot& s) {
    if (dynamic) return;
    for (const Component& c : s.stack) {
      double bound = kM;
      for (int j = 1; j <= c.level; ++j) bound += kM * std::pow(t, j);
      ASSERT_LE(static_cast<double>(c.bytes), bound) << Describe(s);
      if (c.level >= 1 && t == std::floor(t)) {
        ASSERT_LE(static_cast<double>(c.bytes), kM * std::pow(t, c.level) * (1 + 1 / t))
            << Describe(s);
      }
    }
  });
  for (int i = 0; i < 5000 && !HasFatalFailure(); ++i) {
    sim.Flush(kM);
    CheckLevelingAtRest(sim.snapshot(), params);
    if (i == 999) Report("leveling T=" + std::to_string(t) + (dynamic ? " dynamic" : "") +
                             " after 1000 flushes", sim.stats());
  }
  EXPECT_EQ(sim.stats().bound_violations, 0u);
  Report("leveling T=" + std::to_string(t) + (dynamic ? " dynamic" : ""), sim.stats());
  // Each level costs about (T+1)/2 writes per byte (the level is rewritten
  // at 1/T, 2/T, ..., T/T of its capacity), plus 1 for the flush; at 5000
  // flushes there are log_T(5000) levels (about 3.7 for T = 10).
  const double levels = std::log(5000.0) / std::log(t);
  EXPECT_GT(sim.stats().WriteAmp(), 1 + (levels - 1) * (t + 1) / 2 * 0.8);
  EXPECT_LT(sim.stats().WriteAmp(), 1 + (levels + 1) * (t + 1));
}

INSTANTIATE_TEST_SUITE_P(Ratios, LevelingSim,
                         ::testing::Combine(::testing::Values(2.0, 4.5, 10.0),
                                            ::testing::Bool()));

TEST(LevelingSimulation, DynamicLevelSizesKeepMoreDataInTheLastLevel) {
  // Average, over the rest states after each of 3000 flushes, of the share
  // of all bytes in the last level.
  auto share = [](bool dynamic, double* write_amp) {
    auto policy = NewLevelingPolicy(LevelingWith(10, dynamic));
    ImmediateSim sim(*policy);
    double sum = 0;
    int n = 0;
    for (int i = 0; i < 3000; ++i) {
      sim.Flush(kM);
      uint64_t total = 0;
      for (const Component& c : sim.snapshot().stack) total += c.bytes;
      sum += static_cast<double>(sim.snapshot().stack.front().bytes) / total;
      ++n;
    }
    *write_amp = sim.stats().WriteAmp();
    return sum / n;
  };
  double wa_static, wa_dynamic;
  const double fixed = share(false, &wa_static);
  const double dynamic = share(true, &wa_dynamic);
  std::cout << "[ measured ] last-level share, 3000 flushes, T=10: static " << fixed
            << " (write amp " << wa_static << "), dynamic " << dynamic << " (write amp "
            << wa_dynamic << ")" << std::endl;
  EXPECT_GT(dynamic, 0.93);
  EXPECT_GT(dynamic, fixed + 0.03);
}

// ---- tiering ----------------------------------------------------------------

class TieringSim : public ::testing::TestWithParam<int> {};

TEST_P(TieringSim, InvariantsOver5000Flushes) {
  const int t = GetParam();
  auto policy = NewTieringPolicy(t);
  ImmediateSim sim(*policy);
  for (int i = 0; i < 5000 && !HasFatalFailure(); ++i) {
    sim.Flush(kM);
    // At rest: levels sorted, at most T-1 components per level, each
    // component of level j holding exactly T^j flushes.
    std::map<int, int> per_level;
    int previous = kMaxLevel + 1;
    for (const Component& c : sim.snapshot().stack) {
      ASSERT_LE(c.level, previous) << Describe(sim.snapshot());
      previous = c.level;
      ASSERT_LE(++per_level[c.level], t - 1) << Describe(sim.snapshot());
      ASSERT_EQ(c.bytes, kM * static_cast<uint64_t>(std::pow(t, c.level)));
    }
    if (i == 999) Report("tiering T=" + std::to_string(t) + " after 1000 flushes", sim.stats());
  }
  EXPECT_EQ(sim.stats().bound_violations, 0u);
  EXPECT_EQ(sim.stats().moves, 0u);
  Report("tiering T=" + std::to_string(t), sim.stats());
  // Every byte is written once per level it passed: between 1 + the number
  // of complete levels and 1 + the depth.
  const double levels = std::log(5000.0) / std::log(t);
  EXPECT_GE(sim.stats().WriteAmp(), std::floor(levels) - 1);
  EXPECT_LE(sim.stats().WriteAmp(), 1 + std::ceil(levels));
}

INSTANTIATE_TEST_SUITE_P(Ratios, TieringSim, ::testing::Values(2, 3, 4, 10));

// ---- size-tiered ------------------------------------------------------------

class SizeTieredSim
    : public ::testing::TestWithParam<std::tuple<double, int, int, bool>> {};

TEST_P(SizeTieredSim, StaysWithinFiftyComponents) {
  const auto [ratio, min, max, exact] = GetParam();
  SizeTieredParams params;
  params.size_ratio = ratio;
  params.min_merge_components = min;
  params.max_merge_components = max;
  params.merge_exact_min = exact;
  auto policy = NewSizeTieredPolicy(params);
  ImmediateSim sim(*policy);
  sim.set_observer([&](const Snapshot& s) {
    for (const Component& c : s.stack) ASSERT_EQ(c.level, 0);
  });
  for (int i = 0; i < 5000 && !HasFatalFailure(); ++i) sim.Flush(kM);
  EXPECT_EQ(sim.stats().bound_violations, 0u);
  EXPECT_LE(sim.stats().max_components, 50u);
  EXPECT_EQ(sim.stats().moves, 0u);
  const std::string name = "size-tiered ratio=" + std::to_string(ratio) + " min=" +
                           std::to_string(min) + " max=" + std::to_string(max) +
                           (exact ? " exact-min" : "");
  Report(name, sim.stats());
  std::cout << "[ measured ] " << name << ": components at the end "
            << sim.snapshot().stack.size() << std::endl;
  // Each merge at least doubles... not quite, but the stack stays
  // logarithmic and bytes are rewritten a logarithmic number of times.
  EXPECT_GT(sim.stats().WriteAmp(), 2);
  EXPECT_LT(sim.stats().WriteAmp(), 1 + 2 * std::log2(5000.0));
}

INSTANTIATE_TEST_SUITE_P(Params, SizeTieredSim,
                         ::testing::Values(std::make_tuple(1.2, 2, 10, false),
                                           std::make_tuple(1.2, 2, 10, true),
                                           std::make_tuple(1.0, 3, 4, false),
                                           std::make_tuple(5.0, 2, 10, false),
                                           std::make_tuple(1.2, 4, 4, true)));

// ---- merges that take time ---------------------------------------------------

struct Named {
  std::string name;
  std::unique_ptr<MergePolicy> policy;
  bool one_merge_per_level;
};

std::vector<Named> AllPolicies() {
  std::vector<Named> all;
  for (bool dynamic : {false, true}) {
    all.push_back({dynamic ? "leveling-dynamic" : "leveling",
                   NewLevelingPolicy(LevelingWith(4, dynamic)), true});
  }
  all.push_back({"tiering", NewTieringPolicy(3), true});
  SizeTieredParams st;
  all.push_back({"size-tiered", NewSizeTieredPolicy(st), false});
  st.merge_exact_min = true;
  all.push_back({"size-tiered-exact", NewSizeTieredPolicy(st), false});
  return all;
}

TEST(ConcurrentSimulation, ContractHoldsWhenMergesTakeTime) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  for (const Named& p : AllPolicies()) {
    SCOPED_TRACE(p.name);
    ConcurrentSim sim(*p.policy, rng(), p.one_merge_per_level);
    // Alternate phases of plenty and of too little merge bandwidth, so the
    // policy sees both a quiet tree and flushes piling up behind long
    // merges.
    for (int phase = 0; phase < 6 && !HasFatalFailure(); ++phase) {
      const uint64_t per_flush = (phase % 2 == 0 ? 40 : 2) * kM;
      for (int i = 0; i < 500 && !HasFatalFailure(); ++i) {
        sim.Flush(kM);
        sim.Progress(std::uniform_int_distribution<uint64_t>(0, 2 * per_flush)(rng));
      }
    }
    sim.Drain();
    if (HasFatalFailure()) return;
    std::cout << "[ measured ] " << p.name << " with slow merges: max components "
              << sim.stats().max_components << ", write amp " << sim.stats().WriteAmp()
              << std::endl;
    const Snapshot& s = sim.snapshot();
    EXPECT_EQ(sim.inflight(), 0u);
    // Once drained, the tree is as the policy wants it at rest.
    EXPECT_TRUE(p.policy->PickMerges(s).empty());
    if (p.name.rfind("leveling", 0) == 0) {
      CheckLevelingAtRest(s, LevelingWith(4, p.name == "leveling-dynamic"));
    }
    uint64_t total = 0;
    for (const Component& c : s.stack) total += c.bytes;
    EXPECT_EQ(total, 3000 * kM) << "merges lost or duplicated data";
  }
}

// ---- random snapshots ---------------------------------------------------------

// A random stack: usually sorted by level like the policies keep it, with
// random sizes and some runs being merged; sometimes arbitrary levels.
Snapshot RandomSnapshot(std::mt19937_64& rng) {
  Snapshot s;
  const int n = std::uniform_int_distribution<int>(0, 30)(rng);
  const bool arbitrary = std::uniform_int_distribution<int>(0, 4)(rng) == 0;
  int level = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int i = 0; i < n; ++i) {
    Component c;
    c.id = static_cast<uint64_t>(i) * 3 + 7;  // ids need not be dense
    if (arbitrary) {
      c.level = std::uniform_int_distribution<int>(0, 5)(rng);
    } else {
      if (level > 0 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) --level;
      c.level = level;
    }
    const int shift = std::uniform_int_distribution<int>(0, 24)(rng);
    c.bytes = std::uniform_int_distribution<uint64_t>(0, 1ull << shift)(rng);
    s.stack.push_back(c);
  }
  // Mark a few random runs as being merged, like earlier ops would have.
  const int runs = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int r = 0; r < runs && n > 0; ++r) {
    const int start = std::uniform_int_distribution<int>(0, n - 1)(rng);
    const int len = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int i = start; i < std::min(n, start + len); ++i) s.stack[i].being_merged = true;
  }
  s.flushes = static_cast<uint64_t>(n);
  return s;
}

TEST(RandomSnapshots, EveryPolicyKeepsTheContract) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  const std::vector<Named> policies = AllPolicies();
  for (int round = 0; round < 3000 && !HasFailure(); ++round) {
    const Snapshot s = RandomSnapshot(rng);
    for (const Named& p : policies) {
      const std::vector<MergeOp> ops = p.policy->PickMerges(s);
      ASSERT_TRUE(test::ValidOps(s, ops)) << p.name;
      // Pure: the same snapshot gives the same ops.
      const std::vector<MergeOp> again = p.policy->PickMerges(s);
      ASSERT_EQ(Describe(ops), Describe(again)) << p.name;
      // No duplicates: once the engine marks the ops, nothing new is due.
      Snapshot marked = s;
      test::MarkBeingMerged(&marked, ops);
      ASSERT_TRUE(p.policy->PickMerges(marked).empty())
          << p.name << " on " << Describe(s) << " after " << Describe(ops);
      ASSERT_GE(p.policy->DefaultMaxComponents(s), 4u) << p.name;
    }
  }
}

}  // namespace
}  // namespace lsm::policy
