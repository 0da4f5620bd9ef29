// Helpers of the bounded-depth stack policies (bounded_depth.h): the part of
// the stack a new merge may take and the merge of one run. Pure functions.
#ifndef LSM_POLICY_STACK_RUNS_H_
#define LSM_POLICY_STACK_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "policy/policy.h"

namespace lsm::policy {

// The first stack position younger than every component being merged (0 if
// none is): only positions from here on may join a new merge.
size_t FirstFree(const Snapshot& snapshot);

// The merge of stack positions [begin, end) into one level-kBoundedMergeLevel
// component, or nothing when the run has fewer than two components or
// reaches below FirstFree (the decision then waits for that merge).
std::vector<MergeOp> MergeRun(const Snapshot& snapshot, size_t begin, size_t end);

namespace internal {
// Pascal's triangle for n < kPascalN, r <= kPascalN / 2 (saturated): the
// static policies evaluate dozens of binomials per flush, and lsm-sim's
// speed is theirs.
inline constexpr uint64_t kPascalN = 128;
inline constexpr uint64_t kPascalR = kPascalN / 2 + 1;
extern const uint64_t* const kPascal;
uint64_t ChooseSlow(uint64_t n, uint64_t r);  // r <= n - r
}  // namespace internal

// C(n, r), saturating at UINT64_MAX.
inline uint64_t Choose(uint64_t n, uint64_t r) {
  if (r > n) return 0;
  if (n - r < r) r = n - r;
  if (n < internal::kPascalN) return internal::kPascal[n * internal::kPascalR + r];
  return internal::ChooseSlow(n, r);
}

}  // namespace lsm::policy

#endif  // LSM_POLICY_STACK_RUNS_H_
