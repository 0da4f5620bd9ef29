// Test-only helpers for the policy tests: snapshot builders, the check of the
// MergeOp contract, and two small stack simulators. The simulators stand in
// for the engine only as far as the policy contract goes (flushes append,
// a merge's output replaces its inputs); they are not lsm-sim.
#ifndef LSM_POLICY_POLICY_TEST_UTIL_H_
#define LSM_POLICY_POLICY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "policy/levels.h"
#include "policy/policy.h"

namespace lsm::policy::test {

// One component per (level, bytes) pair, oldest first, ids 1, 2, ...
inline Snapshot MakeStack(const std::vector<std::pair<int, uint64_t>>& level_bytes) {
  Snapshot s;
  uint64_t id = 1;
  for (const auto& [level, bytes] : level_bytes) {
    Component c;
    c.id = id++;
    c.level = level;
    c.bytes = bytes;
    c.entries = bytes;
    s.stack.push_back(c);
  }
  s.flushes = s.stack.size();
  return s;
}

inline std::vector<uint64_t> Ids(std::initializer_list<uint64_t> ids) { return ids; }

inline std::string Describe(const Snapshot& s) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < s.stack.size(); ++i) {
    const Component& c = s.stack[i];
    out << (i ? " " : "") << "#" << c.id << ":L" << c.level << ":" << c.bytes
        << (c.being_merged ? "*" : "");
  }
  out << "]";
  return out.str();
}

inline std::string Describe(const std::vector<MergeOp>& ops) {
  std::ostringstream out;
  for (const MergeOp& op : ops) {
    out << "{";
    for (size_t i = 0; i < op.inputs.size(); ++i) out << (i ? "," : "") << op.inputs[i];
    out << "->L" << op.output_level << "}";
  }
  return out.str();
}

// The MergeOp contract of policy.h: every op's inputs are existing ids
// forming a contiguous run of the stack, oldest first, none being merged;
// no two ops share an input; the output level is in range.
inline ::testing::AssertionResult ValidOps(const Snapshot& s, const std::vector<MergeOp>& ops) {
  std::map<uint64_t, size_t> position;
  for (size_t i = 0; i < s.stack.size(); ++i) position[s.stack[i].id] = i;
  std::set<uint64_t> used;
  for (const MergeOp& op : ops) {
    auto fail = [&](const std::string& why) {
      return ::testing::AssertionFailure()
             << why << " in ops " << Describe(ops) << " on " << Describe(s);
    };
    if (op.inputs.empty()) return fail("empty op");
    if (op.output_level < 0 || op.output_level > kMaxLevel) return fail("bad output level");
    size_t expected = 0;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      auto it = position.find(op.inputs[k]);
      if (it == position.end()) return fail("unknown id " + std::to_string(op.inputs[k]));
      if (k > 0 && it->second != expected) return fail("non-contiguous or unordered inputs");
      expected = it->second + 1;
      if (s.stack[it->second].being_merged) return fail("input being merged");
      if (!used.insert(op.inputs[k]).second) return fail("input shared by two ops");
    }
  }
  return ::testing::AssertionSuccess();
}

inline void MarkBeingMerged(Snapshot* s, const std::vector<MergeOp>& ops) {
  std::set<uint64_t> inputs;
  for (const MergeOp& op : ops) inputs.insert(op.inputs.begin(), op.inputs.end());
  for (Component& c : s->stack) {
    if (inputs.count(c.id)) c.being_merged = true;
  }
}

// Replaces op's inputs by one component with id new_id. The inputs must be
// a contiguous run (checked: the engine relies on it at completion too).
inline ::testing::AssertionResult ApplyOp(Snapshot* s, const MergeOp& op, uint64_t new_id) {
  auto first = std::find_if(s->stack.begin(), s->stack.end(),
                            [&](const Component& c) { return c.id == op.inputs.front(); });
  if (first == s->stack.end()) return ::testing::AssertionFailure() << "input gone";
  const size_t start = static_cast<size_t>(first - s->stack.begin());
  if (start + op.inputs.size() > s->stack.size()) {
    return ::testing::AssertionFailure() << "run past the stack's end";
  }
  Component out;
  out.id = new_id;
  out.level = op.output_level;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const Component& in = s->stack[start + k];
    if (in.id != op.inputs[k]) {
      return ::testing::AssertionFailure() << "run no longer contiguous at completion";
    }
    out.bytes += in.bytes;
    out.entries += in.entries;
  }
  s->stack.erase(s->stack.begin() + start, s->stack.begin() + start + op.inputs.size());
  s->stack.insert(s->stack.begin() + start, out);
  return ::testing::AssertionSuccess();
}

struct SimStats {
  uint64_t flushes = 0;
  uint64_t flushed_bytes = 0;
  uint64_t merge_bytes = 0;  // output bytes of ops with >= 2 inputs
  uint64_t move_bytes = 0;   // output bytes of single-input ops (level changes)
  uint64_t merges = 0;
  uint64_t moves = 0;
  uint64_t max_components = 0;
  uint64_t bound_violations = 0;  // states with more components than the bound

  // Bytes written per byte flushed, counting flushes, merges and moves (as
  // if every move rewrote its component).
  double WriteAmp() const {
    return static_cast<double>(flushed_bytes + merge_bytes + move_bytes) / flushed_bytes;
  }
  // The same if the engine performs single-input ops as metadata changes.
  double WriteAmpWithoutMoves() const {
    return static_cast<double>(flushed_bytes + merge_bytes) / flushed_bytes;
  }
};

// The simulator the brief asks for: every flush adds one level-0 component
// and every op is applied immediately (output bytes = sum of the inputs),
// until the policy proposes nothing more.
class ImmediateSim {
 public:
  explicit ImmediateSim(const MergePolicy& policy) : policy_(policy) {}

  // Optional check of every intermediate state (after each op).
  void set_observer(std::function<void(const Snapshot&)> observer) {
    observer_ = std::move(observer);
  }

  void Flush(uint64_t bytes) {
    Component c;
    c.id = next_id_++;
    c.level = 0;
    c.bytes = bytes;
    c.entries = bytes;
    snapshot_.stack.push_back(c);
    snapshot_.flushes = ++stats_.flushes;
    stats_.flushed_bytes += bytes;
    Observe();
    for (int round = 0;; ++round) {
      // A policy that keeps proposing ops forever is a bug.
      ASSERT_LT(round, 10000) << "runaway merging on " << Describe(snapshot_);
      const std::vector<MergeOp> ops = policy_.PickMerges(snapshot_);
      if (ops.empty()) break;
      ASSERT_TRUE(ValidOps(snapshot_, ops));
      for (const MergeOp& op : ops) {
        const uint64_t id = next_id_++;
        ASSERT_TRUE(ApplyOp(&snapshot_, op, id));
        const uint64_t out = Find(id).bytes;
        if (op.inputs.size() == 1) {
          stats_.move_bytes += out;
          stats_.moves++;
        } else {
          stats_.merge_bytes += out;
          stats_.merges++;
        }
        Observe();
      }
    }
  }

  const Snapshot& snapshot() const { return snapshot_; }
  const SimStats& stats() const { return stats_; }

 private:
  const Component& Find(uint64_t id) const {
    for (const Component& c : snapshot_.stack) {
      if (c.id == id) return c;
    }
    static const Component kNone;
    return kNone;
  }

  void Observe() {
    const uint64_t n = snapshot_.stack.size();
    stats_.max_components = std::max(stats_.max_components, n);
    if (n > policy_.DefaultMaxComponents(snapshot_)) stats_.bound_violations++;
    if (observer_) observer_(snapshot_);
  }

  const MergePolicy& policy_;
  Snapshot snapshot_;
  SimStats stats_;
  uint64_t next_id_ = 1;
  std::function<void(const Snapshot&)> observer_;
};

// A simulator where merges take time, so the policy sees being_merged
// components: each in-flight merge needs as many work units as its input
// bytes, Progress hands out work in a random order, and every flush and
// every completion calls PickMerges, as the engine does. Checks after every
// call: the op contract, that asking again at once (with the new ops marked
// being merged) proposes nothing (no duplicate merges), and optionally that
// no level has two merges in flight (leveling and tiering).
class ConcurrentSim {
 public:
  ConcurrentSim(const MergePolicy& policy, uint64_t seed, bool one_merge_per_level)
      : policy_(policy), rng_(seed), one_merge_per_level_(one_merge_per_level) {}

  void Flush(uint64_t bytes) {
    Component c;
    c.id = next_id_++;
    c.bytes = bytes;
    c.entries = bytes;
    snapshot_.stack.push_back(c);
    snapshot_.flushes++;
    stats_.flushes++;
    stats_.flushed_bytes += bytes;
    Pick();
  }

  // Spends `work` units on in-flight merges, a random one at a time.
  void Progress(uint64_t work) {
    while (work > 0 && !inflight_.empty() && !::testing::Test::HasFatalFailure()) {
      const size_t k = std::uniform_int_distribution<size_t>(0, inflight_.size() - 1)(rng_);
      const uint64_t step = std::min(work, inflight_[k].remaining);
      inflight_[k].remaining -= step;
      work -= step;
      if (inflight_[k].remaining == 0) Complete(k);
    }
  }

  // Completes every merge, including the ones that completions create.
  void Drain() {
    for (int round = 0; !inflight_.empty() && !::testing::Test::HasFatalFailure(); ++round) {
      ASSERT_LT(round, 100000) << "drain does not end";
      Complete(inflight_.size() - 1);
    }
  }

  const Snapshot& snapshot() const { return snapshot_; }
  const SimStats& stats() const { return stats_; }
  size_t inflight() const { return inflight_.size(); }

 private:
  struct Inflight {
    MergeOp op;
    uint64_t remaining;
  };

  void Pick() {
    const std::vector<MergeOp> ops = policy_.PickMerges(snapshot_);
    ASSERT_TRUE(ValidOps(snapshot_, ops));
    MarkBeingMerged(&snapshot_, ops);
    const std::vector<MergeOp> again = policy_.PickMerges(snapshot_);
    ASSERT_TRUE(again.empty()) << "asked again, the policy proposed " << Describe(again)
                               << " after " << Describe(ops) << " on " << Describe(snapshot_);
    for (const MergeOp& op : ops) {
      uint64_t bytes = 0;
      for (const Component& c : snapshot_.stack) {
        if (std::find(op.inputs.begin(), op.inputs.end(), c.id) != op.inputs.end()) {
          bytes += c.bytes;
        }
      }
      inflight_.push_back(Inflight{op, std::max<uint64_t>(bytes, 1)});
    }
    CheckInflight();
    stats_.max_components = std::max<uint64_t>(stats_.max_components, snapshot_.stack.size());
  }

  void Complete(size_t k) {
    const MergeOp op = inflight_[k].op;
    inflight_.erase(inflight_.begin() + k);
    const uint64_t id = next_id_++;
    ASSERT_TRUE(ApplyOp(&snapshot_, op, id)) << Describe(snapshot_);
    for (const Component& c : snapshot_.stack) {
      if (c.id == id) (op.inputs.size() == 1 ? stats_.move_bytes : stats_.merge_bytes) += c.bytes;
    }
    (op.inputs.size() == 1 ? stats_.moves : stats_.merges)++;
    Pick();
  }

  // The simulator's own bookkeeping, and one merge into each level (a
  // level may hold a component moving down while a new one forms).
  void CheckInflight() {
    std::set<uint64_t> inputs;
    std::map<int, int> merges_per_level;
    for (const Inflight& f : inflight_) {
      for (uint64_t id : f.op.inputs) inputs.insert(id);
      merges_per_level[f.op.output_level]++;
    }
    for (const Component& c : snapshot_.stack) {
      ASSERT_EQ(c.being_merged, inputs.count(c.id) == 1) << Describe(snapshot_);
    }
    if (one_merge_per_level_) {
      for (const auto& [level, count] : merges_per_level) {
        ASSERT_EQ(count, 1) << "level " << level << " has " << count << " merges in flight on "
                            << Describe(snapshot_);
      }
    }
  }

  const MergePolicy& policy_;
  std::mt19937_64 rng_;
  const bool one_merge_per_level_;
  Snapshot snapshot_;
  SimStats stats_;
  std::vector<Inflight> inflight_;
  uint64_t next_id_ = 1;
};

// The seed of a randomized test: LSM_TEST_SEED if set, else a fresh one;
// printed so that a failure can be replayed.
inline uint64_t TestSeed() {
  uint64_t seed;
  if (const char* env = std::getenv("LSM_TEST_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }
  std::cout << "[ seed     ] LSM_TEST_SEED=" << seed << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

// Levels of the stack, oldest first (for compact expectations).
inline std::vector<std::pair<int, uint64_t>> Shape(const Snapshot& s) {
  std::vector<std::pair<int, uint64_t>> shape;
  for (const Component& c : s.stack) shape.emplace_back(c.level, c.bytes);
  return shape;
}

}  // namespace lsm::policy::test

#endif  // LSM_POLICY_POLICY_TEST_UTIL_H_
