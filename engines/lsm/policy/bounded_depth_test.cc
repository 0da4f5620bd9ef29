// The bounded-depth policies: golden first decisions for small k (worked out
// by hand from the definitions in Mao et al. Sec. III, shown as the stack of
// component sizes after each unit flush), the recurrence B against a literal
// transcription, and properties on random flush sizes: never more than k
// components once a flush's decision is applied, the stack stays ordered by
// flush time, bytes are accounted exactly, and the engine's way of asking
// (merges in flight, asked again on completion) neither duplicates merges
// nor gets stuck.
#include "policy/bounded_depth.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "policy/policy_test_util.h"
#include "policy/stack_runs.h"
#include "options/option_test_util.h"

namespace lsm::policy {
namespace {

using test::Describe;
using test::ImmediateSim;
using test::MakeStack;

std::unique_ptr<MergePolicy> Make(const std::string& name, int k) {
  Options o;
  o.merge_policy = lsm::test::Named<lsm::PolicyKind>(name);
  o.sstable_bound = k;
  std::unique_ptr<MergePolicy> p;
  Status s = NewMergePolicy(o, &p);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return p;
}

std::vector<uint64_t> Sizes(const Snapshot& s) {
  std::vector<uint64_t> sizes;
  for (const Component& c : s.stack) sizes.push_back(c.bytes);
  return sizes;
}

// The stacks after each of the first flushes of size 1.
std::vector<std::vector<uint64_t>> UnitRun(const MergePolicy& policy, int flushes) {
  ImmediateSim sim(policy);
  std::vector<std::vector<uint64_t>> stacks;
  for (int t = 0; t < flushes; ++t) {
    sim.Flush(1);
    stacks.push_back(Sizes(sim.snapshot()));
  }
  return stacks;
}

using Stacks = std::vector<std::vector<uint64_t>>;

// ------------------------------------------------------------ golden

TEST(BoundedDepthGolden, BigtableK2) {
  // t3: [1,1,1]: the oldest 1 is not longer than 1+1, so all merge. t5:
  // [3,1,1]: 3 > 2 stays, 1 <= 1 merges. t9: [6,2,1]: every component is
  // longer than the newer ones, so the two newest merge (the count must drop).
  // t12: [6,5,1]: 6 <= 6, all merge.
  EXPECT_EQ(UnitRun(*Make("bigtable", 2), 12),
            (Stacks{{1}, {1, 1}, {3}, {3, 1}, {3, 2}, {6}, {6, 1}, {6, 2}, {6, 3}, {6, 4},
                    {6, 5}, {12}}));
}

TEST(BoundedDepthGolden, ConstantK3) {
  EXPECT_EQ(UnitRun(*Make("constant", 3), 9),
            (Stacks{{1}, {1, 1}, {1, 1, 1}, {4}, {4, 1}, {4, 1, 1}, {7}, {7, 1}, {7, 1, 1}}));
}

TEST(BoundedDepthGolden, ExploringK3) {
  // lambda 1.2, C 2, D 10. t2: [1,1] qualifies (1 <= 1.2). t3: [2,1] does
  // not (2 > 1.2). t4: the longest qualifying run is all of [2,1,1]
  // (2 <= 2.4). t7: [4,2,1] has no qualifying run and 3 <= k: nothing. t8:
  // [4,2,1,1] is over k: of [4,2,1,1] (avg 2), [2,1,1] (4/3), [1,1] (1) the
  // least average wins. t9: [4,2,2,1]: [2,2,1] (5/3) beats [2,2] (2).
  EXPECT_EQ(UnitRun(*Make("exploring", 3), 9),
            (Stacks{{1}, {2}, {2, 1}, {4}, {4, 1}, {4, 2}, {4, 2, 1}, {4, 2, 2}, {4, 5}}));
}

TEST(BoundedDepthGolden, MinLatencyK2AndK3) {
  // Targets (components left) k = 2: 1 2 | 1 2 2 | 1 2 2 2 | 1: the stack
  // fills to k, then the newest merges until everything merges (lazy).
  EXPECT_EQ(UnitRun(*Make("minlatency", 2), 10),
            (Stacks{{1}, {1, 1}, {3}, {3, 1}, {3, 2}, {6}, {6, 1}, {6, 2}, {6, 3}, {10}}));
  // k = 3: t4 = C(4,3) merges all; t7 leaves 2 (B(2,3,7) = 1 + B(2,2,3) = 2);
  // t10 = C(5,3) merges all.
  EXPECT_EQ(UnitRun(*Make("minlatency", 3), 10),
            (Stacks{{1}, {1, 1}, {1, 1, 1}, {4}, {4, 1}, {4, 1, 1}, {4, 3}, {4, 3, 1}, {4, 3, 2},
                    {10}}));
}

TEST(BoundedDepthGolden, BinomialSmallK) {
  // k = 10 (small-n regime, T = 1, 4, 14): blocks of C(2d-1, d) flushes;
  // each block starts by merging everything (t = 2, 5, 15), and stays below k.
  EXPECT_EQ(UnitRun(*Make("binomial", 10), 15),
            (Stacks{{1}, {2}, {2, 1}, {2, 2}, {5}, {5, 1}, {5, 1, 1}, {5, 3}, {5, 3, 1},
                    {5, 3, 2}, {5, 6}, {5, 6, 1}, {5, 6, 2}, {5, 6, 3}, {15}}));
  // k = 2: T = 1, 4, 8, 13: never more than 2 components.
  EXPECT_EQ(UnitRun(*Make("binomial", 2), 9),
            (Stacks{{1}, {2}, {2, 1}, {2, 2}, {5}, {5, 1}, {5, 2}, {5, 3}, {9}}));
}

// ------------------------------------------------------------ B and targets

// The recurrence as the paper writes it.
uint64_t LiteralB(uint64_t m, uint64_t k, uint64_t t) {
  if (t == 0) return 0;
  const uint64_t c = Choose(m + k - 1, k);
  if (t < c) return LiteralB(m - 1, k, t);
  return 1 + LiteralB(m, k - 1, t - c);
}

TEST(BoundedDepthStatic, StackDepthMatchesTheRecurrence) {
  for (uint64_t m = 1; m <= 9; ++m) {
    for (uint64_t k = 1; k <= 7; ++k) {
      const uint64_t n = Choose(m + k, k) - 1;
      uint64_t deepest = 0;
      for (uint64_t t = 0; t <= n; ++t) {
        ASSERT_EQ(StackDepth(m, k, t), LiteralB(m, k, t)) << m << " " << k << " " << t;
        deepest = std::max(deepest, StackDepth(m, k, t));
      }
      // tau*(m, k) has maximum stack depth k - 1... plus the root's own
      // count as the paper's B counts it: at most k.
      EXPECT_LE(deepest, k);
    }
  }
}

TEST(BoundedDepthStatic, ChooseSaturates) {
  EXPECT_EQ(Choose(5, 2), 10u);
  EXPECT_EQ(Choose(2, 5), 0u);
  EXPECT_EQ(Choose(60, 30), 118264581564861424ull);
  EXPECT_EQ(Choose(200, 100), UINT64_MAX);
}

TEST(BoundedDepthStatic, TargetsStayInOneToK) {
  for (uint64_t k = 1; k <= 12; ++k) {
    for (uint64_t t = 1; t <= 20000; t += (t < 2000 ? 1 : 37)) {
      const uint64_t a = MinLatencyTarget(k, t), b = BinomialTarget(k, t);
      ASSERT_GE(a, 1u);
      ASSERT_LE(a, k);
      ASSERT_GE(b, 1u);
      ASSERT_LE(b, k);
    }
  }
  // Far out, where the binomials are large.
  EXPECT_LE(MinLatencyTarget(2, 4000000000ull), 2u);
  EXPECT_LE(BinomialTarget(10, 1ull << 50), 10u);
  EXPECT_EQ(MinLatencyTarget(1, 12345), 1u);
}

TEST(BoundedDepthStatic, MinLatencyWriteAmpMeetsItsBound) {
  // For n = C(m + k, k) - 1 unit flushes MINLATENCY's schedule is tau*(m, k):
  // every flush is written at most m times (write amplification <= m), and
  // the last flush merges everything.
  for (uint64_t k = 2; k <= 5; ++k) {
    for (uint64_t m = 2; m <= 5; ++m) {
      const uint64_t n = Choose(m + k, k) - 1;
      auto p = Make("minlatency", static_cast<int>(k));
      ImmediateSim sim(*p);
      for (uint64_t t = 0; t < n; ++t) sim.Flush(1);
      EXPECT_LE(sim.stats().WriteAmp(), static_cast<double>(m) + 1e-9) << k << " " << m;
      // The next flush starts tau*(m + 1, k) by merging all into one.
      sim.Flush(1);
      EXPECT_EQ(sim.snapshot().stack.size(), 1u) << k << " " << m;
    }
  }
}

// ------------------------------------------------------------ snapshots

TEST(BoundedDepthSnapshot, WaitsForMergesInFlight) {
  // A full stack whose newest two are being merged: bigtable's run would
  // include them, so nothing happens until that merge completes.
  Snapshot s = MakeStack({{1, 8}, {1, 4}, {1, 2}, {0, 1}, {0, 1}});
  s.stack[2].being_merged = true;
  s.stack[3].being_merged = true;
  EXPECT_TRUE(Make("bigtable", 3)->PickMerges(s).empty()) << Describe(s);
  EXPECT_TRUE(Make("constant", 3)->PickMerges(s).empty());
  // Exploring, even over its bound, runs one merge at a time.
  EXPECT_TRUE(Make("exploring", 3)->PickMerges(s).empty());
  EXPECT_EQ(FirstFree(s), 4u);
  // Once it completes, bigtable acts: 9 > 4+3+1 stays, 4 <= 3+1 starts the
  // run.
  Snapshot done = MakeStack({{1, 9}, {1, 4}, {1, 3}, {0, 1}});
  EXPECT_EQ(Make("bigtable", 3)->PickMerges(done)[0].inputs, (std::vector<uint64_t>{2, 3, 4}));
}

TEST(BoundedDepthSnapshot, ExploringDecidesOncePerFlush) {
  // [3,3,1] with the flush newest: the longest qualifying run is all three.
  Snapshot s = MakeStack({{1, 3}, {1, 3}, {0, 1}});
  auto p = Make("exploring", 6);
  ASSERT_EQ(p->PickMerges(s).size(), 1u);
  EXPECT_EQ(p->PickMerges(s)[0].inputs, (std::vector<uint64_t>{1, 2, 3}));
  // After a merge the newest component is a merge output: [3,3] qualifies
  // but no decision is due.
  Snapshot merged = MakeStack({{1, 3}, {1, 3}});
  EXPECT_TRUE(p->PickMerges(merged).empty());
  // A flush older than the newest id is not due either (a merge output with
  // a larger id exists).
  Snapshot older = MakeStack({{1, 3}, {0, 3}});
  older.stack[0].id = 9;
  EXPECT_TRUE(p->PickMerges(older).empty());
}

TEST(BoundedDepthSnapshot, ExploringStuckTakesTheCheapestC) {
  // k = 2, nothing qualifies (100 > 1.2*11, 10 > 1.2*1): the cheapest two.
  Snapshot s = MakeStack({{1, 100}, {1, 10}, {0, 1}});
  auto ops = Make("exploring", 2)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(ops[0].output_level, kBoundedMergeLevel);
}

TEST(BoundedDepthSnapshot, StaticPoliciesFollowTheFlushCount) {
  // MINLATENCY k = 3, t = 7 leaves 2: the second oldest merges with the rest.
  Snapshot s = MakeStack({{1, 4}, {0, 1}, {0, 1}, {0, 1}});
  s.flushes = 7;
  auto ops = Make("minlatency", 3)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, (std::vector<uint64_t>{2, 3, 4}));
  // t = 8 leaves 3: nothing to do on 3 components.
  Snapshot t8 = MakeStack({{1, 4}, {1, 3}, {0, 1}});
  t8.flushes = 8;
  EXPECT_TRUE(Make("minlatency", 3)->PickMerges(t8).empty());
}

TEST(BoundedDepthFactory, ValidatesTheBoundAndExploringParameters) {
  for (const std::string& name : BoundedDepthPolicyNames()) {
    EXPECT_NE(Make(name, 1), nullptr) << name;
    EXPECT_STREQ(Make(name, 4)->Name(), name.c_str());
  }
  Options o;
  o.merge_policy = lsm::PolicyKind::kBinomial;
  std::unique_ptr<MergePolicy> p;
  o.sstable_bound = 0;
  Status s = NewMergePolicy(o, &p);
  EXPECT_EQ(s.ToString(),
            "Invalid argument: engine option 'sstable_bound': bad value '0' (expected an "
            "integer in [1, 1000])");
  o.sstable_bound = 6;
  o.exploring_ratio = 0;
  EXPECT_TRUE(NewMergePolicy(o, &p).IsInvalidArgument()) << "checked for every policy";
  o.exploring_ratio = 1.2;
  o.exploring_min = 5;
  o.exploring_max = 4;
  s = NewMergePolicy(o, &p);
  EXPECT_EQ(s.ToString(),
            "Invalid argument: engine option 'exploring_min': 5 exceeds exploring_max 4");
  o.exploring_max = 5;
  EXPECT_TRUE(NewMergePolicy(o, &p).ok());
  EXPECT_EQ(p->DefaultMaxComponents(Snapshot()), 7u);
}

// ------------------------------------------------------------ properties

// Every flush is one entry of `ranges`: each component covers a contiguous
// range of flushes, the stack covers 1..t in order (stability).
struct Tracker {
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> range;  // id -> [first, last] flush
};

void RunProperties(const std::string& name, int k, uint64_t seed, int flushes) {
  SCOPED_TRACE(name + " k=" + std::to_string(k) + " seed=" + std::to_string(seed));
  auto policy = Make(name, k);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> size(1, 1000);
  Snapshot s;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> range;
  uint64_t next_id = 1, flushed = 0, written = 0;
  const bool eager = name != "exploring";
  for (int t = 1; t <= flushes; ++t) {
    Component c;
    c.id = next_id++;
    c.bytes = size(rng);
    s.stack.push_back(c);
    s.flushes = static_cast<uint64_t>(t);
    range[c.id] = {static_cast<uint64_t>(t), static_cast<uint64_t>(t)};
    flushed += c.bytes;
    written += c.bytes;
    int merges = 0;
    for (;;) {
      std::vector<MergeOp> ops = policy->PickMerges(s);
      if (ops.empty()) break;
      ASSERT_EQ(ops.size(), 1u);
      ASSERT_TRUE(test::ValidOps(s, ops));
      ASSERT_LT(++merges, 100) << "runaway merging on " << Describe(s);
      const MergeOp& op = ops[0];
      if (eager) {
        ASSERT_EQ(op.inputs.back(), s.stack.back().id) << "an eager merge takes the flush";
      }
      uint64_t in = 0;
      for (const Component& x : s.stack) {
        if (std::find(op.inputs.begin(), op.inputs.end(), x.id) != op.inputs.end()) in += x.bytes;
      }
      const uint64_t id = next_id++;
      range[id] = {range[op.inputs.front()].first, range[op.inputs.back()].second};
      ASSERT_TRUE(test::ApplyOp(&s, op, id));
      uint64_t out = 0;
      for (const Component& x : s.stack) {
        if (x.id == id) out = x.bytes;
      }
      ASSERT_EQ(out, in) << "a merge writes exactly its inputs' bytes";
      written += out;
    }
    if (eager) {
      ASSERT_LE(merges, 1) << "one new component per flush";
    }
    ASSERT_LE(s.stack.size(), static_cast<size_t>(k)) << "t=" << t << " " << Describe(s);
    uint64_t expect_first = 1, held = 0;
    for (const Component& x : s.stack) {
      ASSERT_EQ(range[x.id].first, expect_first) << "stack order broken: " << Describe(s);
      expect_first = range[x.id].second + 1;
      held += x.bytes;
    }
    ASSERT_EQ(expect_first, static_cast<uint64_t>(t) + 1);
    ASSERT_EQ(held, flushed) << "no bytes lost or invented";
  }
  EXPECT_GE(written, flushed);
}

TEST(BoundedDepthProperties, BoundOrderAndBytesOnRandomFlushes) {
  const uint64_t seed = test::TestSeed();
  for (const std::string& name : BoundedDepthPolicyNames()) {
    for (int k : {1, 2, 3, 4, 6, 8}) {
      RunProperties(name, k, seed + static_cast<uint64_t>(k), 1500);
      if (HasFatalFailure()) return;
    }
  }
}

// The engine's way: merges take time, flushes arrive meanwhile, the policy
// is asked after every flush and completion. No duplicate merges (checked by
// ConcurrentSim), and once everything completes the bound holds again.
TEST(BoundedDepthProperties, ConcurrentMergesNeverDuplicateOrStick) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  for (const std::string& name : BoundedDepthPolicyNames()) {
    for (int k : {2, 4, 6}) {
      SCOPED_TRACE(name + " k=" + std::to_string(k));
      auto p = Make(name, k);
      test::ConcurrentSim sim(*p, rng(), /*one_merge_per_level=*/false);
      for (int t = 0; t < 400; ++t) {
        sim.Flush(100 + rng() % 100);
        sim.Progress(rng() % 800);
        if (HasFatalFailure()) return;
      }
      sim.Drain();
      if (HasFatalFailure()) return;
      EXPECT_LE(sim.snapshot().stack.size(), static_cast<size_t>(k)) << Describe(sim.snapshot());
    }
  }
}

}  // namespace
}  // namespace lsm::policy
