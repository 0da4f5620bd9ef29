// Bounded-depth stack policies (Mao et al. 2019, Sec. III): bigtable,
// exploring, constant, minlatency and binomial. Each keeps at most k
// components once its decision for a flush is applied; the exact rules are in
// POLICIES.md next to this file.
//
// Shared conventions, so that the engine (which flushes first and merges
// afterwards, possibly while more flushes arrive) and lsm-sim (which applies
// every merge at once) run the same decisions:
// - the flushed component is already the newest of the stack when the policy
//   is asked ("the memtable" of the paper is stack.back());
// - merge outputs are level 1, flushes level 0 (exploring uses this to make
//   one decision per flush);
// - a decision whose run contains a component being merged waits: the policy
//   is asked again when that merge completes;
// - DefaultMaxComponents is k + 1: the flushed component may join a full stack
//   while its merge runs, the next flush waits (writers stall), so the engine
//   never holds more than k + 1 and never deadlocks (every policy proposes a
//   merge whenever more than k components exist and none is being merged).
#ifndef LSM_POLICY_BOUNDED_DEPTH_H_
#define LSM_POLICY_BOUNDED_DEPTH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace lsm::policy {

// The output level of every merge of these policies.
inline constexpr int kBoundedMergeLevel = 1;

// Defaults and ranges are the options' (lsm/options.def).
struct ExploringParams {
  int k = Options().sstable_bound;             // >= 1
  double ratio = Options().exploring_ratio;    // lambda > 0
  int min_run = Options().exploring_min;       // C >= 2
  int max_run = Options().exploring_max;       // D >= C
};

// The five names, in the order PolicyNames lists them.
std::vector<std::string> BoundedDepthPolicyNames();

// sstable_bound and the exploring_* options (checked by CheckOptions).
ExploringParams ResolveBoundedDepth(const Options& options);

// The bounded-depth policy called `name` with k = params.k, or nullptr when
// `name` is not one of BoundedDepthPolicyNames().
std::unique_ptr<MergePolicy> NewBoundedDepthPolicy(const std::string& name,
                                                   const ExploringParams& params);

std::unique_ptr<MergePolicy> NewBigtablePolicy(int k);
std::unique_ptr<MergePolicy> NewConstantPolicy(int k);
std::unique_ptr<MergePolicy> NewExploringPolicy(const ExploringParams& params);
std::unique_ptr<MergePolicy> NewMinLatencyPolicy(int k);
std::unique_ptr<MergePolicy> NewBinomialPolicy(int k);

// The paper's B(m, k, t): the stack depth of node t in the binary search tree
// tau*(m, k); 0 for t = 0. Requires t < C(m + k, k) (else returns k).
uint64_t StackDepth(uint64_t m, uint64_t k, uint64_t t);

// How many components MINLATENCY / BINOMIAL leave after flush t >= 1 (in
// [1, k]): the t-th flush merges the i-th oldest component with all newer
// ones, the flushed one included.
uint64_t MinLatencyTarget(uint64_t k, uint64_t t);
uint64_t BinomialTarget(uint64_t k, uint64_t t);

}  // namespace lsm::policy

#endif  // LSM_POLICY_BOUNDED_DEPTH_H_
