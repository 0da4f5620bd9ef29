// Registration and parameter checks of the bounded-depth policies.
#include "policy/bounded_depth.h"

#include <cmath>
#include <cstdio>

namespace lsm::policy {

namespace {

std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

Status IntInRange(const char* field, int value, int low, int high, const std::string& low_text) {
  if (value >= low && value <= high) return Status::OK();
  return Status::InvalidArgument(
      std::string(field) + " must be in [" + low_text + ", " + std::to_string(high) + "]",
      "got " + std::to_string(value));
}

}  // namespace

std::vector<std::string> BoundedDepthPolicyNames() {
  return {"bigtable", "exploring", "constant", "minlatency", "binomial"};
}

Status ResolveBoundedDepth(const PolicyOptions& o, ExploringParams* params) {
  Status s = IntInRange("sstable_bound", o.sstable_bound, kMinSstableBound, kMaxSstableBound,
                        std::to_string(kMinSstableBound));
  if (!s.ok()) return s;
  if (!(std::isfinite(o.exploring_ratio) && o.exploring_ratio > 0 &&
        o.exploring_ratio <= kMaxExploringRatio)) {
    return Status::InvalidArgument(
        "exploring_ratio must be in (0, " + Number(kMaxExploringRatio) + "]",
        "got " + Number(o.exploring_ratio));
  }
  s = IntInRange("exploring_min", o.exploring_min, 2, kMaxSstableBound, "2");
  if (!s.ok()) return s;
  s = IntInRange("exploring_max", o.exploring_max, o.exploring_min, kMaxSstableBound,
                 "exploring_min (" + std::to_string(o.exploring_min) + ")");
  if (!s.ok()) return s;
  params->k = o.sstable_bound;
  params->ratio = o.exploring_ratio;
  params->min_run = o.exploring_min;
  params->max_run = o.exploring_max;
  return Status::OK();
}

std::unique_ptr<MergePolicy> NewBoundedDepthPolicy(const std::string& name,
                                                   const ExploringParams& params) {
  if (name == "bigtable") return NewBigtablePolicy(params.k);
  if (name == "exploring") return NewExploringPolicy(params);
  if (name == "constant") return NewConstantPolicy(params.k);
  if (name == "minlatency") return NewMinLatencyPolicy(params.k);
  if (name == "binomial") return NewBinomialPolicy(params.k);
  return nullptr;
}

}  // namespace lsm::policy
