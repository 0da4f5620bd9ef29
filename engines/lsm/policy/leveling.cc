// Leveling (Luo & Carey Sec. 2.1, full merges): one component per level
// >= 1, level i holding up to M * T^i bytes; flushed components are merged
// into level 1 at once and a full level is merged into the next one.
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

// Appends a merge of every component of levels `a` and `b` (either may be
// empty) into output_level and marks both levels busy, unless their
// components are not one contiguous run of the stack (a stack these policies
// never produce; merging a non-contiguous set would reorder data by age).
void AddMerge(const Snapshot& snapshot, LevelInfo* a, LevelInfo* b, int output_level,
              std::vector<MergeOp>* ops) {
  std::vector<size_t> run = a->positions;
  if (b != a) run.insert(run.end(), b->positions.begin(), b->positions.end());
  std::sort(run.begin(), run.end());
  if (!IsContiguous(run)) return;
  ops->push_back(MergeOp{IdsAt(snapshot, run), output_level});
  a->busy = true;
  b->busy = true;
}

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

  std::vector<MergeOp> ops;
  // Deepest first, so that a level moving down makes the level above wait:
  // a full level must not merge into a level that is itself being merged.
  for (int i = deepest; i >= 1; --i) {
    LevelInfo& level = levels[i];
    if (level.positions.empty() || level.busy) continue;
    if (full(i) && i < kMaxLevel) {
      LevelInfo& next = levels[i + 1];
      if (next.busy) continue;  // wait for the next level's merge
      // With no component at level i+1 this is a single-input op: the
      // component only changes level (the engine may do that without I/O).
      AddMerge(snapshot, &next, &level, i + 1, &ops);
    } else if (level.positions.size() > 1) {
      // Several components at one level >= 1 only arise from a snapshot
      // written by another policy; restore one component per level.
      AddMerge(snapshot, &level, &level, i, &ops);
    }
  }

  // Flushed components go into level 1 unless level 1 is busy or full (it
  // must move down first) or an earlier level-0 merge is still running.
  LevelInfo& l0 = levels[0];
  LevelInfo& l1 = levels[1];
  if (!l0.positions.empty() && !l0.busy && !l1.busy && !full(1)) {
    AddMerge(snapshot, &l1, &l0, 1, &ops);
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
