// Registration of the bounded-depth policies (their options are checked by CheckOptions).
#include "policy/bounded_depth.h"

namespace lsm::policy {

std::vector<std::string> BoundedDepthPolicyNames() {
  return {"bigtable", "exploring", "constant", "minlatency", "binomial"};
}

ExploringParams ResolveBoundedDepth(const Options& o) {
  ExploringParams params;
  params.k = o.sstable_bound;
  params.ratio = o.exploring_ratio;
  params.min_run = o.exploring_min;
  params.max_run = o.exploring_max;
  return params;
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
