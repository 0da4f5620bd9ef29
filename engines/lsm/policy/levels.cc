#include "policy/levels.h"

#include <algorithm>

namespace lsm::policy {

namespace {

int ClampLevel(int level) { return std::clamp(level, 0, kMaxLevel); }

}  // namespace

int DeepestLevel(const Snapshot& snapshot) {
  int deepest = 0;
  for (const Component& c : snapshot.stack) deepest = std::max(deepest, ClampLevel(c.level));
  return deepest;
}

uint64_t LevelCount(const Snapshot& snapshot) {
  return static_cast<uint64_t>(DeepestLevel(snapshot)) + 1;
}

std::vector<LevelInfo> DescribeLevels(const Snapshot& snapshot) {
  std::vector<LevelInfo> levels(static_cast<size_t>(DeepestLevel(snapshot)) + 1);
  for (size_t i = 0; i < snapshot.stack.size(); ++i) {
    const Component& c = snapshot.stack[i];
    LevelInfo& level = levels[static_cast<size_t>(ClampLevel(c.level))];
    level.positions.push_back(i);
    level.bytes += c.bytes;
    level.busy = level.busy || c.being_merged;
  }
  return levels;
}

bool IsContiguous(const std::vector<size_t>& sorted_positions) {
  if (sorted_positions.empty()) return false;
  return sorted_positions.back() - sorted_positions.front() + 1 == sorted_positions.size();
}

std::vector<uint64_t> IdsAt(const Snapshot& snapshot, const std::vector<size_t>& positions) {
  std::vector<uint64_t> ids;
  ids.reserve(positions.size());
  for (size_t p : positions) ids.push_back(snapshot.stack[p].id);
  return ids;
}

}  // namespace lsm::policy
