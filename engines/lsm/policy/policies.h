// The concrete merge policies behind NewMergePolicy (policy.h), for callers
// that hold already validated parameters (NewMergePolicy validates, then
// calls these), and the leveling capacities for tests and lsm-sim.
// The exact rules are in POLICIES.md next to this file.
#ifndef LSM_POLICY_POLICIES_H_
#define LSM_POLICY_POLICIES_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "policy/policy.h"

namespace lsm::policy {

// Defaults used when Options::size_ratio is 0 (CheckOptions has the least
// ratio each policy accepts).
inline constexpr double kLevelingDefaultRatio = 10;
inline constexpr double kTieringDefaultRatio = 3;
inline constexpr double kSizeTieredDefaultRatio = 1.2;  // HBase's default

// DefaultMaxComponents: leveling never goes below this floor so that a
// one- or two-level tree can still absorb the flushes that arrive while
// level 1 is being merged down.
inline constexpr uint64_t kLevelingMinMaxComponents = 4;
inline constexpr uint64_t kSizeTieredMaxComponents = 50;  // the paper's setting

// The Params structs are the options a policy reads, resolved (0 replaced by
// the policy's default); their defaults are the options' (options.def).
struct LevelingParams {
  double size_ratio = kLevelingDefaultRatio;  // T >= 2
  uint64_t memtable_bytes = Options().memtable_bytes;  // M >= 1
  bool dynamic_level_sizes = Options().dynamic_level_sizes;
  bool full_level_waits = Options().full_level_waits;
};

struct SizeTieredParams {
  double size_ratio = kSizeTieredDefaultRatio;  // >= 1
  int min_merge_components = Options().min_merge_components;  // >= 2
  int max_merge_components = Options().max_merge_components;  // >= min
  bool merge_exact_min = Options().merge_exact_min;
};

struct PartitionedParams {
  double size_ratio = kLevelingDefaultRatio;  // T >= 2 between levels >= 1
  uint64_t partition_bytes = Options().partition_bytes;
  uint64_t level1_bytes = 128 << 20;  // >= 1 (resolved, never 0 here)
  int l0_trigger = Options().l0_trigger;
  int l0_stop = Options().l0_stop;  // >= l0_trigger
  bool choose_best = false;         // false: round-robin
  bool l0_merge_exact = Options().l0_merge_exact;
};

std::unique_ptr<MergePolicy> NewLevelingPolicy(const LevelingParams& params);
std::unique_ptr<MergePolicy> NewPartitionedPolicy(const PartitionedParams& params);
// T >= 2. unbounded_depth: Options::tiering_unbounded_depth.
std::unique_ptr<MergePolicy> NewTieringPolicy(int size_ratio, bool unbounded_depth = false);
std::unique_ptr<MergePolicy> NewSizeTieredPolicy(const SizeTieredParams& params);

// The byte capacity of every level 0 .. DeepestLevel(snapshot) + 1 under
// leveling (index = level; index 0 is 0 because level 0 is bounded by count,
// not bytes: any flushed component is merged into level 1 at once). A level
// i >= 1 is full when its bytes reach capacities[i].
//   static:  capacity(i) = M * T^i
//   dynamic: with d the deepest level >= 1 holding data, and d >= 2,
//            capacity(i) = max(bytes(d) / T^(d-i), M * T^(i-1)) for 1 <= i < d,
//            capacity(i) = M * T^i for i >= d (the last level only moves
//            down, deepening the tree, when it reaches its static capacity).
std::vector<double> LevelingCapacities(const Snapshot& snapshot, const LevelingParams& params);

}  // namespace lsm::policy

#endif  // LSM_POLICY_POLICIES_H_
