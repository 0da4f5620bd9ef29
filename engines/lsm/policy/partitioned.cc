// Partitioned leveling (LevelDB; Luo & Carey Sec. 6): level 0 holds flushed
// components; every level i >= 1 is one sorted run range-partitioned into
// files of about partition_bytes, holding up to level1_bytes * T^(i-1).
// A merge takes the level-0 files (all, or exactly l0_trigger of them) or one
// file of a full level i >= 1, plus the files of the next level whose key
// ranges overlap it. The exact rules are in POLICIES.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "policy/levels.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

// Key ranges [smallest, largest], inclusive.
bool Overlaps(const Component& c, const std::string& smallest, const std::string& largest) {
  return !(c.largest < smallest || c.smallest > largest);
}

struct Runs {
  uint64_t level0 = 0;  // level-0 components, each a sorted run
  uint64_t deeper = 0;  // levels >= 1 holding data, one run each
};

Runs CountRuns(const Snapshot& snapshot) {
  Runs runs;
  std::vector<bool> seen;
  for (const Component& c : snapshot.stack) {
    if (c.level == 0) {
      runs.level0++;
      continue;
    }
    const size_t level = static_cast<size_t>(std::clamp(c.level, 1, kMaxLevel));
    if (seen.size() <= level) seen.resize(level + 1, false);
    if (!seen[level]) runs.deeper++;
    seen[level] = true;
  }
  return runs;
}

class PartitionedPolicy final : public MergePolicy {
 public:
  explicit PartitionedPolicy(const PartitionedParams& params) : params_(params) {}

  const char* Name() const override { return "partitioned"; }
  bool Partitioned() const override { return true; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;
  double Urgency(const Snapshot& snapshot, int output_level) const override;

  // Level 0 up to l0_stop, plus one sorted run per level >= 1 holding data:
  // with the default, the global constraint is LevelDB's level-0 stop.
  uint64_t DefaultMaxComponents(const Snapshot& snapshot) const override {
    return static_cast<uint64_t>(params_.l0_stop) + CountRuns(snapshot).deeper;
  }
  // Only level 0 can hold more than one run.
  uint64_t DefaultMaxComponentsPerLevel() const override {
    return static_cast<uint64_t>(params_.l0_stop);
  }

  uint64_t ConstrainedCount(const Snapshot& snapshot, bool local) const override {
    const Runs runs = CountRuns(snapshot);
    if (local) return std::max<uint64_t>(runs.level0, runs.deeper > 0 ? 1 : 0);
    return runs.level0 + runs.deeper;
  }

  Status CheckStackShape(const Snapshot& snapshot, const std::string& dir) const override;

 private:
  double Capacity(int level) const {
    return static_cast<double>(params_.level1_bytes) * std::pow(params_.size_ratio, level - 1);
  }
  // LevelDB's score of a level: level 0's files over l0_trigger, a deeper
  // level's bytes over its capacity; >= 1 means full. 0 for an empty level.
  double Score(const std::vector<LevelInfo>& levels, int i) const {
    if (i < 0 || i >= static_cast<int>(levels.size()) || levels[i].positions.empty()) return 0;
    return i == 0 ? static_cast<double>(levels[0].positions.size()) / params_.l0_trigger
                  : static_cast<double>(levels[i].bytes) / Capacity(i);
  }
  // Appends the merge of level 0 into level 1, if its files are free.
  void PickLevel0(const Snapshot& snapshot, const std::vector<LevelInfo>& levels, double score,
                  std::vector<MergeOp>* ops) const;
  // Appends the merge of one file of level i into level i + 1: the first
  // candidate (in the policy's preference order) whose inputs are all free.
  void PickFile(const Snapshot& snapshot, const std::vector<LevelInfo>& levels, int i,
                double score, std::vector<MergeOp>* ops) const;

  const PartitionedParams params_;
};

// The positions of level `next`'s files overlapping [smallest, largest];
// false when one of them is being merged.
bool OverlappingFree(const Snapshot& snapshot, const std::vector<LevelInfo>& levels, int next,
                     const std::string& smallest, const std::string& largest,
                     std::vector<size_t>* positions) {
  if (next >= static_cast<int>(levels.size())) return true;
  for (size_t p : levels[next].positions) {
    const Component& c = snapshot.stack[p];
    if (!Overlaps(c, smallest, largest)) continue;
    if (c.being_merged) return false;
    positions->push_back(p);
  }
  return true;
}

MergeOp MakeOp(const Snapshot& snapshot, std::vector<size_t> positions, int output_level,
               uint64_t max_output_bytes, double score) {
  std::sort(positions.begin(), positions.end());
  MergeOp op;
  op.inputs = IdsAt(snapshot, positions);
  op.output_level = output_level;
  op.max_output_bytes = max_output_bytes;
  op.score = score;
  return op;
}

void PartitionedPolicy::PickLevel0(const Snapshot& snapshot, const std::vector<LevelInfo>& levels,
                                   double score, std::vector<MergeOp>* ops) const {
  // Level 0 is oldest first in the stack; exact mode takes the oldest
  // l0_trigger files, so the remaining (newer) ones stay above the output.
  std::vector<size_t> inputs = levels[0].positions;
  if (params_.l0_merge_exact && inputs.size() > static_cast<size_t>(params_.l0_trigger)) {
    inputs.resize(static_cast<size_t>(params_.l0_trigger));
  }
  std::string smallest = snapshot.stack[inputs.front()].smallest;
  std::string largest = snapshot.stack[inputs.front()].largest;
  for (size_t p : inputs) {
    smallest = std::min(smallest, snapshot.stack[p].smallest);
    largest = std::max(largest, snapshot.stack[p].largest);
  }
  if (!OverlappingFree(snapshot, levels, 1, smallest, largest, &inputs)) return;
  ops->push_back(MakeOp(snapshot, std::move(inputs), 1, params_.partition_bytes, score));
}

void PartitionedPolicy::PickFile(const Snapshot& snapshot, const std::vector<LevelInfo>& levels,
                                 int i, double score, std::vector<MergeOp>* ops) const {
  // Candidates in key order, then rotated or ranked.
  std::vector<size_t> candidates = levels[i].positions;
  std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
    return snapshot.stack[a].smallest < snapshot.stack[b].smallest;
  });
  if (params_.choose_best) {
    // Fewest overlapping bytes in the next level; ties keep key order.
    std::vector<uint64_t> overlap(snapshot.stack.size(), 0);
    for (size_t p : candidates) {
      if (i + 1 >= static_cast<int>(levels.size())) break;
      for (size_t q : levels[i + 1].positions) {
        const Component& c = snapshot.stack[q];
        if (Overlaps(c, snapshot.stack[p].smallest, snapshot.stack[p].largest)) {
          overlap[p] += c.bytes;
        }
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](size_t a, size_t b) { return overlap[a] < overlap[b]; });
  } else {
    const std::string cursor = static_cast<size_t>(i) < snapshot.round_robin_cursor.size()
                                   ? snapshot.round_robin_cursor[static_cast<size_t>(i)]
                                   : std::string();
    auto after = std::find_if(candidates.begin(), candidates.end(), [&](size_t p) {
      return cursor.empty() || snapshot.stack[p].smallest > cursor;
    });
    std::rotate(candidates.begin(), after, candidates.end());
  }
  for (size_t p : candidates) {
    const Component& file = snapshot.stack[p];
    if (file.being_merged) continue;
    std::vector<size_t> inputs{p};
    if (!OverlappingFree(snapshot, levels, i + 1, file.smallest, file.largest, &inputs)) continue;
    ops->push_back(MakeOp(snapshot, std::move(inputs), i + 1, params_.partition_bytes, score));
    return;
  }
}

}  // namespace

std::vector<MergeOp> PartitionedPolicy::PickMerges(const Snapshot& snapshot) const {
  std::vector<LevelInfo> levels = DescribeLevels(snapshot);
  // Scores as LevelDB computes them; every full level whose inputs are free
  // gets a merge, most urgent first. A level touched by a merge in flight
  // (as its source or its output) waits: one merge per level at a time.
  std::vector<std::pair<double, int>> full;
  for (int i = 0; i < static_cast<int>(levels.size()); i++) {
    const double score = Score(levels, i);
    if (score >= 1 && i < kMaxLevel) full.emplace_back(score, i);
  }
  std::stable_sort(full.begin(), full.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<MergeOp> ops;
  for (const auto& [score, i] : full) {
    if (levels[i].busy) continue;
    if (i + 1 < static_cast<int>(levels.size()) && levels[i + 1].busy) continue;
    const size_t before = ops.size();
    if (i == 0) {
      PickLevel0(snapshot, levels, score, &ops);
    } else {
      PickFile(snapshot, levels, i, score, &ops);
    }
    if (ops.size() > before) {
      levels[i].busy = true;
      if (i + 1 < static_cast<int>(levels.size())) levels[i + 1].busy = true;
    }
  }
  return ops;
}

double PartitionedPolicy::Urgency(const Snapshot& snapshot, int output_level) const {
  // A merge out of level i = output_level - 1 holds level i, so the merge of
  // level i - 1 into it cannot be created until this one is done: it is as
  // urgent as the more urgent of the two. Ranked by its own score alone, a
  // waiting merge of a level that stays barely full (level 2 at 1.03) lost
  // to every level-0 merge (up to l0_stop / l0_trigger) forever, while level
  // 1, held, grew to 20 times its capacity (docs/results/luo-carey.md, LC24).
  // LevelDB has no waiting merges: it picks the most urgent level each time.
  const std::vector<LevelInfo> levels = DescribeLevels(snapshot);
  const int source = output_level - 1;
  return std::max(Score(levels, source), Score(levels, source - 1));
}

Status PartitionedPolicy::CheckStackShape(const Snapshot& snapshot, const std::string& dir) const {
  // Each level >= 1 is read as one sorted run; a stack policy's tree
  // (overlapping components in a level, or levels out of order) would be
  // merged wrongly, so switching is refused, not attempted.
  const std::string refused = std::string("merge_policy ") + Name() + " cannot open " + dir;
  std::map<int, std::vector<const Component*>> levels;
  int previous_level = std::numeric_limits<int>::max();
  for (const Component& c : snapshot.stack) {
    if (c.level > previous_level) {
      return Status::InvalidArgument(refused,
                                     "its components were written by a stack policy "
                                     "(levels out of order); use that policy");
    }
    previous_level = c.level;
    if (c.level >= 1) levels[c.level].push_back(&c);
  }
  for (auto& [level, files] : levels) {
    std::sort(files.begin(), files.end(),
              [](const Component* a, const Component* b) { return a->smallest < b->smallest; });
    for (size_t i = 1; i < files.size(); i++) {
      if (files[i]->smallest <= files[i - 1]->largest) {
        return Status::InvalidArgument(refused, "level " + std::to_string(level) +
                                                    " holds overlapping components, written by a "
                                                    "stack policy; use that policy");
      }
    }
  }
  return Status::OK();
}

std::unique_ptr<MergePolicy> NewPartitionedPolicy(const PartitionedParams& params) {
  return std::make_unique<PartitionedPolicy>(params);
}

}  // namespace lsm::policy
