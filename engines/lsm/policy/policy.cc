// The policy registry: names and construction from the (checked) engine options.
#include "policy/policy.h"

#include <algorithm>

#include "lsm/option_table.h"
#include "policy/bounded_depth.h"
#include "policy/policies.h"

namespace lsm::policy {

namespace {

// The size ratio to use: the policy's default for 0 (CheckOptions has
// checked the others).
double ResolveRatio(double requested, double fallback) {
  return requested == 0 ? fallback : requested;
}

}  // namespace

std::vector<std::string> PolicyNames() {
  return std::vector<std::string>(kMergePolicyNames.begin(), kMergePolicyNames.end());
}

std::vector<std::string> PartitionPickNames() {
  return std::vector<std::string>(kPartitionPickNames.begin(), kPartitionPickNames.end());
}

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

PartitionedParams ResolvePartitioned(const Options& o) {
  PartitionedParams params;
  params.size_ratio = ResolveRatio(o.size_ratio, kLevelingDefaultRatio);
  params.partition_bytes = o.partition_bytes;
  params.level1_bytes = o.level1_bytes > 0
                            ? o.level1_bytes
                            : static_cast<uint64_t>(o.l0_trigger) * o.memtable_bytes;
  params.l0_trigger = o.l0_trigger;
  params.l0_stop = o.l0_stop;
  params.choose_best = o.partition_pick == PartitionPick::kChooseBest;
  params.l0_merge_exact = o.l0_merge_exact;
  return params;
}

}  // namespace

Status NewMergePolicy(const Options& options, std::unique_ptr<MergePolicy>* policy) {
  policy->reset();
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  *policy = NewCheckedMergePolicy(options);
  return Status::OK();
}

std::unique_ptr<MergePolicy> NewCheckedMergePolicy(const Options& options) {
  const PolicyKind kind = options.merge_policy;
  if (std::unique_ptr<MergePolicy> p =
          NewBoundedDepthPolicy(ToString(kind), ResolveBoundedDepth(options))) {
    return p;
  }
  if (kind == PolicyKind::kPartitioned) return NewPartitionedPolicy(ResolvePartitioned(options));
  if (kind == PolicyKind::kLeveling) {
    LevelingParams params;
    params.size_ratio = ResolveRatio(options.size_ratio, kLevelingDefaultRatio);
    params.memtable_bytes = options.memtable_bytes;
    params.dynamic_level_sizes = options.dynamic_level_sizes;
    params.full_level_waits = options.full_level_waits;
    return NewLevelingPolicy(params);
  }
  if (kind == PolicyKind::kTiering) {
    return NewTieringPolicy(
        static_cast<int>(ResolveRatio(options.size_ratio, kTieringDefaultRatio)),
        options.tiering_unbounded_depth);
  }
  SizeTieredParams params;
  params.size_ratio = ResolveRatio(options.size_ratio, kSizeTieredDefaultRatio);
  params.min_merge_components = options.min_merge_components;
  params.max_merge_components = options.max_merge_components;
  params.merge_exact_min = options.merge_exact_min;
  return NewSizeTieredPolicy(params);
}

}  // namespace lsm::policy
