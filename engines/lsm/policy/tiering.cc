// Tiering (Luo & Carey Sec. 2.1, full merges): up to T components per level;
// T components of level i are merged into one component of level i+1 --
// except at the deepest level once the data no longer fills it: there the T
// components merge among themselves, so the tree's depth is the data's
// (POLICIES.md has the rule and the sources it follows).
#include <algorithm>

#include "policy/levels.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

// The deepest level d stays the last once less than this share of the
// entries flushed into its merging components is still live. T^d flushes of
// updates drawn uniformly from unique data of N flushes keep
// N(1 - e^(-T^d/N)) entries, a share of (1 - e^(-x))/x with x = T^d/N: the
// share falls below 1 - 1/e exactly when x > 1, i.e. when a level-d
// component's capacity, T^d flushes, exceeds the data. Skewed updates keep
// less and stop a level earlier; a growing key space keeps more and deepens.
constexpr double kLastLevelLiveShare = 0.6321205588285577;  // 1 - 1/e

class TieringPolicy final : public MergePolicy {
 public:
  TieringPolicy(int size_ratio, bool unbounded_depth)
      : t_(static_cast<size_t>(size_ratio)), unbounded_depth_(unbounded_depth) {}

  const char* Name() const override { return "tiering"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;

  // Twice the expected number of components (T per level), Sec. 5.1.1.
  uint64_t DefaultMaxComponents(const Snapshot& snapshot) const override {
    return 2 * static_cast<uint64_t>(t_) * LevelCount(snapshot);
  }

  // Twice the T components a level holds before it is merged.
  uint64_t DefaultMaxComponentsPerLevel() const override { return 2 * static_cast<uint64_t>(t_); }

 private:
  // True when the components at `positions` (of the deepest level) hold
  // too little of what was flushed into them to fill a deeper level.
  static bool DataFitsThisLevel(const Snapshot& snapshot, const std::vector<size_t>& positions);

  const size_t t_;
  const bool unbounded_depth_;
};

bool TieringPolicy::DataFitsThisLevel(const Snapshot& snapshot,
                                      const std::vector<size_t>& positions) {
  double live = 0, flushed = 0;
  for (size_t p : positions) {
    const Component& c = snapshot.stack[p];
    live += static_cast<double>(c.entries);
    flushed += static_cast<double>(std::max(c.flushed_entries, c.entries));
  }
  return flushed > 0 && live < kLastLevelLiveShare * flushed;
}

}  // namespace

std::vector<MergeOp> TieringPolicy::PickMerges(const Snapshot& snapshot) const {
  const std::vector<LevelInfo> levels = DescribeLevels(snapshot);
  std::vector<MergeOp> ops;
  const size_t last = std::min(levels.size(), static_cast<size_t>(kMaxLevel));
  for (size_t i = 0; i < last; ++i) {
    const LevelInfo& level = levels[i];
    // One merge per level at a time: while the oldest T of a level are being
    // merged, the components that arrive meanwhile wait for the next round.
    // This also keeps the stack sorted by level, so each level's components
    // stay one contiguous run.
    if (level.busy || level.positions.size() < t_) continue;
    const std::vector<size_t> oldest(level.positions.begin(), level.positions.begin() + t_);
    if (!IsContiguous(oldest)) continue;  // a stack no policy here produces
    int output_level = static_cast<int>(i) + 1;
    // Only the deepest level can be the last: a level above it always has a
    // deeper one to merge into. Level 0 (flushes) always merges down.
    const bool deepest = i + 1 == levels.size();
    if (!unbounded_depth_ && deepest && i >= 1 && DataFitsThisLevel(snapshot, oldest)) {
      output_level = static_cast<int>(i);
    }
    ops.push_back(MergeOp{IdsAt(snapshot, oldest), output_level});
  }
  return ops;
}

std::unique_ptr<MergePolicy> NewTieringPolicy(int size_ratio, bool unbounded_depth) {
  return std::make_unique<TieringPolicy>(size_ratio, unbounded_depth);
}

}  // namespace lsm::policy
