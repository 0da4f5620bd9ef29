// CONSTANT (AsterixDB before 0.9.4, Mao et al. Sec. III).
#include "policy/bounded_depth.h"
#include "policy/stack_runs.h"

namespace lsm::policy {

namespace {

// CONSTANT (AsterixDB before 0.9.4): with fewer than k older components the
// flushed one stays; otherwise everything is merged into one.
class ConstantPolicy final : public MergePolicy {
 public:
  explicit ConstantPolicy(int k) : k_(static_cast<size_t>(k)) {}

  const char* Name() const override { return "constant"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override {
    const size_t n = snapshot.stack.size();
    if (n <= k_) return {};
    return MergeRun(snapshot, 0, n);
  }

  uint64_t DefaultMaxComponents(const Snapshot&) const override { return k_ + 1; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return k_ + 1; }

 private:
  const size_t k_;
};

}  // namespace

std::unique_ptr<MergePolicy> NewConstantPolicy(int k) {
  return std::make_unique<ConstantPolicy>(k);
}

}  // namespace lsm::policy
