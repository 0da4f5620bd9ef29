// EXPLORING (HBase's default as Mao et al. Sec. III describe it): with the
// flushed component as the newest, consider every contiguous run of C..D
// components whose largest is at most lambda times the sum of the others;
// merge the longest such run (ties: the smaller total, then the older run)
// while at most k components exist, else the one of minimum average size
// (ties: the older, then the shorter run). With no such run and more than k
// components, merge the C contiguous components of minimum total.
//
// One decision per flush: the policy acts only while the flushed component
// is still the newest and nothing was created after it (see Due), so the
// engine asking again after the merge completes changes nothing -- unless
// more than k components would remain, which it never leaves alone.
#include <algorithm>

#include "policy/bounded_depth.h"
#include "policy/stack_runs.h"

namespace lsm::policy {

namespace {

class ExploringPolicy final : public MergePolicy {
 public:
  explicit ExploringPolicy(const ExploringParams& params) : p_(params) {}

  const char* Name() const override { return "exploring"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;

  uint64_t DefaultMaxComponents(const Snapshot&) const override { return Bound() + 1; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return Bound() + 1; }

 private:
  uint64_t Bound() const { return static_cast<uint64_t>(p_.k); }

  // The newest component is a flush no decision has run for yet: it is
  // level 0 and no merge output was created after it (ids grow with
  // creation).
  static bool Due(const Snapshot& snapshot) {
    const std::vector<Component>& stack = snapshot.stack;
    if (stack.empty() || stack.back().level != 0) return false;
    for (const Component& c : stack) {
      if (c.id > stack.back().id) return false;
    }
    return true;
  }

  const ExploringParams p_;
};

std::vector<MergeOp> ExploringPolicy::PickMerges(const Snapshot& snapshot) const {
  const std::vector<Component>& stack = snapshot.stack;
  const size_t n = stack.size();
  // One merge at a time: a decision waits until no merge is in flight
  // (asked again at completion, a flush is still due if that merge was
  // created before it). Over the bound, a merge is due whatever the flush.
  if (FirstFree(snapshot) != 0) return {};
  const bool stuck = n > Bound();
  if (!stuck && !Due(snapshot)) return {};
  const size_t begin = 0;
  const size_t min_run = static_cast<size_t>(p_.min_run);
  const size_t max_run = static_cast<size_t>(p_.max_run);

  bool found = false;
  size_t best_i = 0, best_len = 0;
  unsigned __int128 best_sum = 0;
  for (size_t i = begin; i < n; ++i) {
    unsigned __int128 sum = 0;
    uint64_t largest = 0;
    for (size_t j = i; j < n && j - i < max_run; ++j) {
      sum += stack[j].bytes;
      largest = std::max(largest, stack[j].bytes);
      const size_t len = j - i + 1;
      if (len < min_run) continue;
      const long double others = static_cast<long double>(sum - largest);
      if (static_cast<long double>(largest) > static_cast<long double>(p_.ratio) * others) continue;
      bool better;
      if (!found) {
        better = true;
      } else if (stuck) {
        // Smaller average: sum / len < best_sum / best_len, exactly.
        better = sum * best_len < best_sum * len;
      } else {
        better = len > best_len || (len == best_len && sum < best_sum);
      }
      if (better) {
        found = true;
        best_i = i;
        best_len = len;
        best_sum = sum;
      }
    }
  }
  if (found) return MergeRun(snapshot, best_i, best_i + best_len);
  // Nothing qualifies and the stack is over its bound: the cheapest C (fewer
  // when fewer are free, so that a C above k + 1 cannot leave the stack
  // stuck over its bound).
  const size_t width = std::min(min_run, n - begin);
  if (!stuck || width < 2) return {};
  unsigned __int128 window = 0;
  for (size_t j = begin; j < begin + width; ++j) window += stack[j].bytes;
  best_i = begin;
  best_sum = window;
  for (size_t i = begin + 1; i + width <= n; ++i) {
    window += stack[i + width - 1].bytes;
    window -= stack[i - 1].bytes;
    if (window < best_sum) {
      best_sum = window;
      best_i = i;
    }
  }
  return MergeRun(snapshot, best_i, best_i + width);
}

}  // namespace

std::unique_ptr<MergePolicy> NewExploringPolicy(const ExploringParams& params) {
  return std::make_unique<ExploringPolicy>(params);
}

}  // namespace lsm::policy
