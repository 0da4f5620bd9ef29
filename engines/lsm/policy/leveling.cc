// Leveling (Luo & Carey Sec. 2.1, full merges): one component per level
// >= 1 (two while one moves down), level i holding up to M * T^i bytes;
// flushed components are merged into level 1 at once and a full level is
// merged into the next one. With full_level_waits, the component beside one
// moving down takes merges only until it is full (policy/POLICIES.md).
#include <algorithm>
#include <cmath>

#include "policy/levels.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

class LevelingPolicy final : public MergePolicy {
 public:
  explicit LevelingPolicy(const LevelingParams& params) : params_(params) {}

  const char* Name() const override { return "leveling"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;

  // Twice the expected number of components (one per level), Sec. 5.1.1.
  uint64_t DefaultMaxComponents(const Snapshot& snapshot) const override {
    return std::max(kLevelingMinMaxComponents, 2 * LevelCount(snapshot));
  }

  // bLSM's local constraint: at most two components per level.
  uint64_t DefaultMaxComponentsPerLevel() const override { return 2; }

 private:
  const LevelingParams params_;
};

}  // namespace

std::vector<MergeOp> LevelingPolicy::PickMerges(const Snapshot& snapshot) const {
  std::vector<LevelInfo> levels = DescribeLevels(snapshot);
  const std::vector<double> capacity = LevelingCapacities(snapshot, params_);
  // One empty level below the deepest: the target when the deepest fills.
  levels.resize(levels.size() + 1);
  const int deepest = static_cast<int>(levels.size()) - 2;
  auto full = [&](int i) {
    return !levels[i].positions.empty() && static_cast<double>(levels[i].bytes) >= capacity[i];
  };
  // Positions that are inputs already: of merges in flight, or of merges
  // created earlier in this call.
  std::vector<bool> taken(snapshot.stack.size(), false);
  for (size_t p = 0; p < snapshot.stack.size(); ++p) taken[p] = snapshot.stack[p].being_merged;
  // Merges every component of `from` with the components of level `into`
  // that are not inputs already, into level `into`; nothing when that is
  // not one contiguous run (never so for stacks these policies make).
  std::vector<MergeOp> ops;
  // Whether a merge into level `into` may be made: with full_level_waits,
  // not while the level's component moves down and the new one beside it
  // is full already (then the merge waits for the move to end).
  auto may_merge_into = [&](int into) {
    if (!params_.full_level_waits || !levels[into].busy) return true;
    uint64_t filling = 0;
    for (size_t p : levels[into].positions) {
      if (!taken[p]) filling += snapshot.stack[p].bytes;
    }
    return static_cast<double>(filling) < capacity[into];
  };
  auto merge_into = [&](int from, int into) {
    std::vector<size_t> run = levels[from].positions;
    if (into != from) {
      for (size_t p : levels[into].positions) {
        if (!taken[p]) run.push_back(p);
      }
    }
    std::sort(run.begin(), run.end());
    if (!IsContiguous(run)) return;
    ops.push_back(MergeOp{IdsAt(snapshot, run), into});
    for (size_t p : run) taken[p] = true;
    levels[from].busy = true;
    levels[into].busy = true;
  };

  // Deepest first. A full level merges into the next one; when the next
  // level's component is itself moving down, into a new component of the
  // next level beside it (bLSM's C_i and C'_i, Luo & Carey Sec. 2-5: a
  // level then briefly holds two components), so that merges of different
  // levels run concurrently and the scheduler chooses among them.
  for (int i = deepest; i >= 1; --i) {
    LevelInfo& level = levels[i];
    if (level.positions.empty() || level.busy) continue;
    if (full(i) && i < kMaxLevel) {
      // With nothing free at level i+1 this is a single-input op: the
      // component only changes level (the engine does that without I/O).
      if (may_merge_into(i + 1)) merge_into(i, i + 1);
    } else if (level.positions.size() > 1) {
      // Several components at one level >= 1 that are all at rest only
      // arise from a snapshot written by another policy; restore one
      // component per level.
      merge_into(i, i);
    }
  }

  // Flushed components go into level 1 (into a new level-1 component while
  // level 1's is moving down), unless a level-0 merge is still running or a
  // full level 1 could not start moving down.
  if (!levels[0].positions.empty() && !levels[0].busy && (levels[1].busy || !full(1)) &&
      may_merge_into(1)) {
    merge_into(0, 1);
  }
  // List the shallowest (usually smallest) merge first, as tiering does.
  std::reverse(ops.begin(), ops.end());
  return ops;
}

std::vector<double> LevelingCapacities(const Snapshot& snapshot, const LevelingParams& params) {
  const int deepest = DeepestLevel(snapshot);
  const double t = params.size_ratio;
  const double m = static_cast<double>(params.memtable_bytes);
  std::vector<double> capacity(static_cast<size_t>(deepest) + 2, 0.0);
  for (int i = 1; i <= deepest + 1; ++i) capacity[i] = m * std::pow(t, i);
  if (params.dynamic_level_sizes && deepest >= 2) {
    // Size the upper levels from the last one (RocksDB's
    // level_compaction_dynamic_level_bytes), so that the last level holds
    // about T/(T+1) of the data instead of as little as 1/(T+1) right after
    // the tree deepened. The floor M*T^(i-1) is where the dynamic sizes
    // start right after the last level moved down; it keeps level 1 from
    // shrinking below one memory component when data is deleted.
    uint64_t last_bytes = 0;
    for (const Component& c : snapshot.stack) {
      if (std::clamp(c.level, 0, kMaxLevel) == deepest) last_bytes += c.bytes;
    }
    for (int i = 1; i < deepest; ++i) {
      capacity[i] = std::max(static_cast<double>(last_bytes) / std::pow(t, deepest - i),
                             m * std::pow(t, i - 1));
    }
  }
  return capacity;
}

std::unique_ptr<MergePolicy> NewLevelingPolicy(const LevelingParams& params) {
  return std::make_unique<LevelingPolicy>(params);
}

}  // namespace lsm::policy
