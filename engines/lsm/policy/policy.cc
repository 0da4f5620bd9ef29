// The policy registry: names, parameter validation and construction.
#include "policy/policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "policy/bounded_depth.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

constexpr const char* kLeveling = "leveling";
constexpr const char* kTiering = "tiering";
constexpr const char* kSizeTiered = "size-tiered";
constexpr const char* kPartitioned = "partitioned";
constexpr const char* kRoundRobin = "round-robin";
constexpr const char* kChooseBest = "choose-best";

std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

// The size ratio to use, or InvalidArgument naming the allowed range.
Status ResolveRatio(const std::string& name, double requested, double fallback, double low,
                    bool integer, double* ratio) {
  if (requested == 0) {
    *ratio = fallback;
    return Status::OK();
  }
  const bool in_range = std::isfinite(requested) && requested >= low && requested <= kMaxRatio;
  if (!in_range || (integer && requested != std::floor(requested))) {
    return Status::InvalidArgument(
        "size_ratio for " + name + " must be 0 (the default, " + Number(fallback) + ") or " +
            (integer ? "an integer " : "") + "in [" + Number(low) + ", " + Number(kMaxRatio) + "]",
        "got " + Number(requested));
  }
  *ratio = requested;
  return Status::OK();
}

}  // namespace

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names = {kLeveling, kTiering, kSizeTiered, kPartitioned};
  for (std::string& n : BoundedDepthPolicyNames()) names.push_back(std::move(n));
  return names;
}

std::vector<std::string> PartitionPickNames() { return {kRoundRobin, kChooseBest}; }

uint64_t MergePolicy::ConstrainedCount(const Snapshot& snapshot, bool local) const {
  if (!local) return snapshot.stack.size();
  std::vector<uint64_t> per_level;
  uint64_t most = 0;
  for (const Component& c : snapshot.stack) {
    const size_t level = static_cast<size_t>(std::max(c.level, 0));
    if (per_level.size() <= level) per_level.resize(level + 1, 0);
    most = std::max(most, ++per_level[level]);
  }
  return most;
}

Status MergePolicy::CheckStackShape(const Snapshot&, const std::string&) const {
  return Status::OK();
}

namespace {

// Checks the partitioned leveling parameters (whatever the policy, like the
// others) and resolves level1_bytes.
Status ResolvePartitioned(const PolicyOptions& o, PartitionedParams* params) {
  if (o.partition_bytes < kMinPartitionBytes) {
    return Status::InvalidArgument("partition_bytes must be >= " +
                                       std::to_string(kMinPartitionBytes),
                                   "got " + std::to_string(o.partition_bytes));
  }
  if (o.l0_trigger < 1 || o.l0_trigger > kMaxL0Files) {
    return Status::InvalidArgument("l0_trigger must be in [1, " + std::to_string(kMaxL0Files) + "]",
                                   "got " + std::to_string(o.l0_trigger));
  }
  if (o.l0_stop < o.l0_trigger || o.l0_stop > kMaxL0Files) {
    return Status::InvalidArgument("l0_stop must be in [l0_trigger (" +
                                       std::to_string(o.l0_trigger) + "), " +
                                       std::to_string(kMaxL0Files) + "]",
                                   "got " + std::to_string(o.l0_stop));
  }
  if (o.partition_pick != kRoundRobin && o.partition_pick != kChooseBest) {
    return Status::InvalidArgument("partition_pick: unknown value '" + o.partition_pick + "'",
                                   "choose from: round-robin, choose-best");
  }
  params->partition_bytes = o.partition_bytes;
  params->level1_bytes = o.level1_bytes > 0
                             ? o.level1_bytes
                             : static_cast<uint64_t>(o.l0_trigger) * o.memtable_bytes;
  params->l0_trigger = o.l0_trigger;
  params->l0_stop = o.l0_stop;
  params->choose_best = o.partition_pick == kChooseBest;
  params->l0_merge_exact = o.l0_merge_exact;
  return Status::OK();
}

}  // namespace

Status NewMergePolicy(const PolicyOptions& options, std::unique_ptr<MergePolicy>* policy) {
  policy->reset();
  const std::string& name = options.name;
  const std::vector<std::string> known = PolicyNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string names;
    for (const std::string& n : PolicyNames()) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown merge policy '" + name + "' (choose from: " + names +
                                   ")");
  }
  // Every parameter is checked whatever the policy, so a bad value is
  // reported even where it would be ignored today.
  if (options.memtable_bytes == 0) {
    return Status::InvalidArgument("memtable_bytes must be >= 1", "got 0");
  }
  if (options.min_merge_components < 2) {
    return Status::InvalidArgument("min_merge_components must be >= 2",
                                   "got " + std::to_string(options.min_merge_components));
  }
  if (options.max_merge_components < options.min_merge_components) {
    return Status::InvalidArgument("max_merge_components must be >= min_merge_components (" +
                                       std::to_string(options.min_merge_components) + ")",
                                   "got " + std::to_string(options.max_merge_components));
  }

  PartitionedParams partitioned;
  Status s = ResolvePartitioned(options, &partitioned);
  if (!s.ok()) return s;
  ExploringParams bounded;
  s = ResolveBoundedDepth(options, &bounded);
  if (!s.ok()) return s;
  if (std::unique_ptr<MergePolicy> p = NewBoundedDepthPolicy(name, bounded)) {
    *policy = std::move(p);
    return Status::OK();
  }

  double ratio = 0;
  if (name == kPartitioned) {
    s = ResolveRatio(name, options.size_ratio, kLevelingDefaultRatio, kMinLevelingRatio, false,
                     &ratio);
    if (!s.ok()) return s;
    partitioned.size_ratio = ratio;
    *policy = NewPartitionedPolicy(partitioned);
  } else if (name == kLeveling) {
    s = ResolveRatio(name, options.size_ratio, kLevelingDefaultRatio, kMinLevelingRatio, false,
                     &ratio);
    if (!s.ok()) return s;
    LevelingParams params;
    params.size_ratio = ratio;
    params.memtable_bytes = options.memtable_bytes;
    params.dynamic_level_sizes = options.dynamic_level_sizes;
    *policy = NewLevelingPolicy(params);
  } else if (name == kTiering) {
    s = ResolveRatio(name, options.size_ratio, kTieringDefaultRatio, kMinTieringRatio, true,
                     &ratio);
    if (!s.ok()) return s;
    *policy = NewTieringPolicy(static_cast<int>(ratio));
  } else {
    s = ResolveRatio(name, options.size_ratio, kSizeTieredDefaultRatio, kMinSizeTieredRatio, false,
                     &ratio);
    if (!s.ok()) return s;
    SizeTieredParams params;
    params.size_ratio = ratio;
    params.min_merge_components = options.min_merge_components;
    params.max_merge_components = options.max_merge_components;
    params.merge_exact_min = options.merge_exact_min;
    *policy = NewSizeTieredPolicy(params);
  }
  return Status::OK();
}

}  // namespace lsm::policy
