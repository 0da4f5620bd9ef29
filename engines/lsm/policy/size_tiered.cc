// Size-tiered (Luo & Carey Sec. 5.3; HBase's ratio-based selection, which
// the Bigtable-style policies share): no levels, merges chosen by size.
//
// The rule, oldest first over the candidates (the components younger than
// the youngest one being merged, HBase's "longest prefix in which no
// component is being merged"): the first start s whose window
// W = [s, s + max) (cut at the stack's end; exactly min long with
// merge_exact_min) has at least min components and
//     bytes(s) <= ratio * (bytes of the other components of W)
// is merged whole. The paper words this as "the younger components' total is
// T times larger than the oldest"; its Figure 18 example only comes out with
// the inequality above (128MB, 64MB, 64MB merge with ratio 1.2:
// 128 <= 1.2 * 128, while 128 >= 1.2 * 128 is false), which is also HBase's
// test (skip the oldest file while size > ratio * sum of the newer ones).
#include <algorithm>

#include "policy/policies.h"

namespace lsm::policy {

namespace {

class SizeTieredPolicy final : public MergePolicy {
 public:
  explicit SizeTieredPolicy(const SizeTieredParams& params) : params_(params) {}

  const char* Name() const override { return "size-tiered"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override;

  uint64_t DefaultMaxComponents(const Snapshot&) const override {
    return kSizeTieredMaxComponents;
  }

  // No levels: every component is at level 0, so the local bound is the
  // global one.
  uint64_t DefaultMaxComponentsPerLevel() const override { return kSizeTieredMaxComponents; }

 private:
  // The first qualifying window starting at or after `begin`, as
  // [*start, *end); false if none.
  bool FindWindow(const Snapshot& snapshot, size_t begin, size_t* start, size_t* end) const;

  const SizeTieredParams params_;
};

bool SizeTieredPolicy::FindWindow(const Snapshot& snapshot, size_t begin, size_t* start,
                                  size_t* end) const {
  const std::vector<Component>& stack = snapshot.stack;
  const size_t n = stack.size();
  const size_t min = static_cast<size_t>(params_.min_merge_components);
  const size_t width = static_cast<size_t>(params_.merge_exact_min ? params_.min_merge_components
                                                                   : params_.max_merge_components);
  for (size_t s = begin; s < n; ++s) {
    const size_t e = s + std::min(width, n - s);
    // Later windows are never longer: nothing from here on can qualify.
    if (e - s < min) return false;
    long double younger = 0;
    for (size_t k = s + 1; k < e; ++k) younger += stack[k].bytes;
    if (static_cast<long double>(stack[s].bytes) <= params_.size_ratio * younger) {
      *start = s;
      *end = e;
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<MergeOp> SizeTieredPolicy::PickMerges(const Snapshot& snapshot) const {
  const std::vector<Component>& stack = snapshot.stack;
  size_t begin = 0;
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].being_merged) begin = i + 1;
  }
  // One execution of the paper's policy creates one merge; the engine would
  // run it again at once, now seeing that merge's inputs as being merged,
  // and so on. Doing those executions here hands every merge that is due to
  // the scheduler in one call (Figure 18: both merges).
  std::vector<MergeOp> ops;
  size_t start, end;
  while (FindWindow(snapshot, begin, &start, &end)) {
    MergeOp op;
    op.output_level = 0;
    for (size_t k = start; k < end; ++k) op.inputs.push_back(stack[k].id);
    ops.push_back(std::move(op));
    begin = end;
  }
  return ops;
}

std::unique_ptr<MergePolicy> NewSizeTieredPolicy(const SizeTieredParams& params) {
  return std::make_unique<SizeTieredPolicy>(params);
}

}  // namespace lsm::policy
