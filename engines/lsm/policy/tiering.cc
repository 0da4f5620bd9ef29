// Tiering (Luo & Carey Sec. 2.1, full merges): up to T components per level;
// T components of level i are merged into one component of level i+1.
#include <algorithm>

#include "policy/levels.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

class TieringPolicy final : public MergePolicy {
 public:
  explicit TieringPolicy(int size_ratio) : t_(static_cast<size_t>(size_ratio)) {}

  const char* Name() const override { return "tiering"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;

  // Twice the expected number of components (T per level), Sec. 5.1.1.
  uint64_t DefaultMaxComponents(const Snapshot& snapshot) const override {
    return 2 * static_cast<uint64_t>(t_) * LevelCount(snapshot);
  }

  // Twice the T components a level holds before it is merged.
  uint64_t DefaultMaxComponentsPerLevel() const override { return 2 * static_cast<uint64_t>(t_); }

 private:
  const size_t t_;
};

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
    ops.push_back(MergeOp{IdsAt(snapshot, oldest), static_cast<int>(i) + 1});
  }
  return ops;
}

std::unique_ptr<MergePolicy> NewTieringPolicy(int size_ratio) {
  return std::make_unique<TieringPolicy>(size_ratio);
}

}  // namespace lsm::policy
