// BIGTABLE (Mao et al. Sec. III, after Mathieu et al.): with fewer than k
// older components the flushed one simply stays; otherwise it is merged with
// the i newest older ones, i minimal such that afterwards every component is
// longer than the sum of all newer ones.
#include "policy/bounded_depth.h"
#include "policy/stack_runs.h"

namespace lsm::policy {

namespace {

class BigtablePolicy final : public MergePolicy {
 public:
  explicit BigtablePolicy(int k) : k_(static_cast<size_t>(k)) {}

  const char* Name() const override { return "bigtable"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override {
    const std::vector<Component>& stack = snapshot.stack;
    const size_t n = stack.size();
    if (n <= k_) return {};
    // Merging a suffix leaves the sums of newer components seen by the older
    // ones unchanged, so the run must start at the oldest component that is
    // not longer than everything newer; at least two components merge so
    // that the count drops.
    uint64_t newer = 0;
    size_t start = n - 2;
    for (size_t i = n - 1; i > 0; --i) {
      newer += stack[i].bytes;
      if (stack[i - 1].bytes <= newer) start = i - 1;
    }
    return MergeRun(snapshot, start, n);
  }

  uint64_t DefaultMaxComponents(const Snapshot&) const override { return k_ + 1; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return k_ + 1; }

 private:
  const size_t k_;
};

}  // namespace

std::unique_ptr<MergePolicy> NewBigtablePolicy(int k) {
  return std::make_unique<BigtablePolicy>(k);
}

}  // namespace lsm::policy
