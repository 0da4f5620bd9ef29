// The policy registry: names, parameter validation and construction.
#include "policy/policy.h"

#include <cmath>
#include <cstdio>

#include "policy/policies.h"

namespace lsm::policy {

namespace {

constexpr const char* kLeveling = "leveling";
constexpr const char* kTiering = "tiering";
constexpr const char* kSizeTiered = "size-tiered";

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

std::vector<std::string> PolicyNames() { return {kLeveling, kTiering, kSizeTiered}; }

Status NewMergePolicy(const PolicyOptions& options, std::unique_ptr<MergePolicy>* policy) {
  policy->reset();
  const std::string& name = options.name;
  if (name != kLeveling && name != kTiering && name != kSizeTiered) {
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

  double ratio = 0;
  Status s;
  if (name == kLeveling) {
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
