// Helpers the policies share: a per-level view of a Snapshot and the check
// that a set of stack positions is one contiguous run. Pure functions.
#ifndef LSM_POLICY_LEVELS_H_
#define LSM_POLICY_LEVELS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "policy/policy.h"

namespace lsm::policy {

// The deepest level a policy ever creates. A component claiming a deeper
// level is accounted at this level, so a corrupt snapshot can neither make a
// policy allocate without bound nor push data down forever.
inline constexpr int kMaxLevel = 64;

// What a policy needs to know about one level.
struct LevelInfo {
  std::vector<size_t> positions;  // indexes into Snapshot::stack, oldest first
  uint64_t bytes = 0;             // total size of the level's components
  bool busy = false;              // some component of the level is being merged
};

// One entry per level 0 .. DeepestLevel(snapshot) (levels clamped to
// [0, kMaxLevel]); empty levels have no positions.
std::vector<LevelInfo> DescribeLevels(const Snapshot& snapshot);

// The deepest level holding a component, 0 for an empty stack.
int DeepestLevel(const Snapshot& snapshot);

// L of the paper's component constraint (2*L for leveling, 2*T*L for
// tiering): the number of levels from level 0 down to the deepest level
// holding data, so at least 1. Counting down to the deepest level, rather
// than counting only the levels that hold data right now, keeps the bound
// from dropping while a level is momentarily empty (after it moved down, or
// when level 0 has just been merged).
uint64_t LevelCount(const Snapshot& snapshot);

// True iff the (ascending) positions form one run p, p+1, ..., p+n-1 and are
// not empty.
bool IsContiguous(const std::vector<size_t>& sorted_positions);

// The ids of the components at the given stack positions, in stack order.
std::vector<uint64_t> IdsAt(const Snapshot& snapshot, const std::vector<size_t>& positions);

}  // namespace lsm::policy

#endif  // LSM_POLICY_LEVELS_H_
