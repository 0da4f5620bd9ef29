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

// Defaults used when PolicyOptions::size_ratio is 0.
inline constexpr double kLevelingDefaultRatio = 10;
inline constexpr double kTieringDefaultRatio = 3;
inline constexpr double kSizeTieredDefaultRatio = 1.2;  // HBase's default

// Allowed size_ratio ranges (inclusive). Leveling and tiering degenerate
// below 2 (T = 1 would move data down forever or merge single components
// forever); tiering counts components, so its T is an integer.
inline constexpr double kMinLevelingRatio = 2;
inline constexpr double kMinTieringRatio = 2;
inline constexpr double kMinSizeTieredRatio = 1;
inline constexpr double kMaxRatio = 1000;

// DefaultMaxComponents: leveling never goes below this floor so that a
// one- or two-level tree can still absorb the flushes that arrive while
// level 1 is being merged down.
inline constexpr uint64_t kLevelingMinMaxComponents = 4;
inline constexpr uint64_t kSizeTieredMaxComponents = 50;  // the paper's setting

struct LevelingParams {
  double size_ratio = kLevelingDefaultRatio;  // T >= 2
  uint64_t memtable_bytes = 32 << 20;         // M >= 1
  bool dynamic_level_sizes = false;
};

struct SizeTieredParams {
  double size_ratio = kSizeTieredDefaultRatio;  // >= 1
  int min_merge_components = 2;                 // >= 2
  int max_merge_components = 10;                // >= min
  bool merge_exact_min = false;
};

// Defaults and ranges of partitioned leveling (LevelDB's 4 / 12).
inline constexpr int kDefaultL0Trigger = 4;
inline constexpr int kDefaultL0Stop = 12;
inline constexpr int kMaxL0Files = 1000;
inline constexpr uint64_t kMinPartitionBytes = 4096;

struct PartitionedParams {
  double size_ratio = kLevelingDefaultRatio;  // T >= 2 between levels >= 1
  uint64_t partition_bytes = 8 << 20;         // >= kMinPartitionBytes
  uint64_t level1_bytes = 128 << 20;          // >= 1 (resolved, never 0 here)
  int l0_trigger = kDefaultL0Trigger;         // >= 1
  int l0_stop = kDefaultL0Stop;               // >= l0_trigger
  bool choose_best = false;                   // false: round-robin
  bool l0_merge_exact = false;
};

std::unique_ptr<MergePolicy> NewLevelingPolicy(const LevelingParams& params);
std::unique_ptr<MergePolicy> NewPartitionedPolicy(const PartitionedParams& params);
std::unique_ptr<MergePolicy> NewTieringPolicy(int size_ratio);  // T >= 2
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
