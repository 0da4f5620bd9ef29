// MINLATENCY and BINOMIAL (Mathieu et al., as Mao et al. Sec. III define
// them): static policies whose t-th flush merges the i-th oldest component
// with all newer ones (the flushed one included), leaving i components, i a
// function of k and t alone through the stack depth B(m, k, t) of the binary
// search tree tau*(m, k):
//   B(m, k, 0) = 0;
//   B(m, k, t) = B(m - 1, k, t)                          if t < C(m + k - 1, k)
//              = 1 + B(m, k - 1, t - C(m + k - 1, k))    otherwise.
//   MINLATENCY: m' = min{m : C(m + k, m) > t}, i = B(m', k, t).
//   BINOMIAL:   T(m) = sum_{j=1..m} C(j + min(j, k) - 1, j),
//               m' = min{m : T(m) >= t},
//               i = 1 + B(m', min(m', k) - 1, t - T(m' - 1) - 1).
// t is Snapshot::flushes; the engine counts the flushes since Open.
#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#include "policy/bounded_depth.h"
#include "policy/stack_runs.h"

namespace lsm::policy {

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > kMax - b ? kMax : a + b; }

// The smallest m >= 1 with pred(m), for a predicate monotone in m (false
// then true); pred must become true before m overflows.
template <typename Pred>
uint64_t SmallestM(Pred pred) {
  uint64_t hi = 1;
  while (!pred(hi)) hi *= 2;
  uint64_t lo = hi / 2 + 1;  // pred(hi / 2) is false (or hi == 1)
  if (hi == 1) return 1;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

// BINOMIAL's T(m) for one k, with its first k terms precomputed; beyond k
// the terms are C(j + k - 1, k - 1), whose sum telescopes (hockey stick):
// sum_{j=k+1..m} C(j + k - 1, k - 1) = C(m + k, k) - C(2k, k).
class BinomialTotals {
 public:
  explicit BinomialTotals(uint64_t k) : k_(k), prefix_(1, 0) {
    for (uint64_t j = 1; j <= k; ++j) {
      prefix_.push_back(SaturatingAdd(prefix_.back(), Choose(2 * j - 1, j)));
    }
  }

  uint64_t operator()(uint64_t m) const {
    if (m <= k_) return prefix_[m];
    const uint64_t all = Choose(m + k_, k_);
    if (all == kMax) return kMax;
    return SaturatingAdd(prefix_[k_], all - Choose(2 * k_, k_));
  }

 private:
  const uint64_t k_;
  std::vector<uint64_t> prefix_;  // T(0) .. T(k)
};

uint64_t MinLatencyTargetImpl(uint64_t k, uint64_t t) {
  const uint64_t m = SmallestM([&](uint64_t m) { return Choose(m + k, m) > t; });
  return std::clamp<uint64_t>(StackDepth(m, k, t), 1, k);
}

uint64_t BinomialTargetImpl(const BinomialTotals& totals, uint64_t k, uint64_t t) {
  const uint64_t m = SmallestM([&](uint64_t m) { return totals(m) >= t; });
  const uint64_t depth = 1 + StackDepth(m, std::min(m, k) - 1, t - totals(m - 1) - 1);
  return std::clamp<uint64_t>(depth, 1, k);
}

// The last (t, target) a policy computed: the engine and lsm-sim ask again
// after applying a decision, with the same t. One relaxed atomic word keeps
// the policy safe to share between threads (t < 2^52, target < 2^12).
class TargetCache {
 public:
  template <typename Compute>
  uint64_t Get(uint64_t t, Compute compute) const {
    const uint64_t packed = word_.load(std::memory_order_relaxed);
    if (packed != 0 && packed >> 12 == t) return packed & 0xfff;
    const uint64_t target = compute();
    if (t < (1ull << 52)) word_.store(t << 12 | target, std::memory_order_relaxed);
    return target;
  }

 private:
  mutable std::atomic<uint64_t> word_{0};
};

// Leaves target components: merges positions [target - 1, end).
std::vector<MergeOp> MergeDownTo(const Snapshot& snapshot, uint64_t target) {
  const size_t n = snapshot.stack.size();
  if (n <= target) return {};
  return MergeRun(snapshot, static_cast<size_t>(target - 1), n);
}

class MinLatencyPolicy final : public MergePolicy {
 public:
  explicit MinLatencyPolicy(int k) : k_(static_cast<uint64_t>(k)) {}

  const char* Name() const override { return "minlatency"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override {
    if (snapshot.flushes == 0 || snapshot.stack.size() <= 1) return {};
    const uint64_t t = snapshot.flushes;
    return MergeDownTo(snapshot, cache_.Get(t, [&] { return MinLatencyTargetImpl(k_, t); }));
  }

  uint64_t DefaultMaxComponents(const Snapshot&) const override { return k_ + 1; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return k_ + 1; }

 private:
  const uint64_t k_;
  const TargetCache cache_;
};

class BinomialPolicy final : public MergePolicy {
 public:
  explicit BinomialPolicy(int k) : k_(static_cast<uint64_t>(k)), totals_(k_) {}

  const char* Name() const override { return "binomial"; }

  std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const override {
    if (snapshot.flushes == 0 || snapshot.stack.size() <= 1) return {};
    const uint64_t t = snapshot.flushes;
    return MergeDownTo(snapshot,
                       cache_.Get(t, [&] { return BinomialTargetImpl(totals_, k_, t); }));
  }

  uint64_t DefaultMaxComponents(const Snapshot&) const override { return k_ + 1; }
  uint64_t DefaultMaxComponentsPerLevel() const override { return k_ + 1; }

 private:
  const uint64_t k_;
  const BinomialTotals totals_;
  const TargetCache cache_;
};

}  // namespace

uint64_t StackDepth(uint64_t m, uint64_t k, uint64_t t) {
  uint64_t depth = 0;
  while (t > 0) {
    if (k == 0 || m == 0) return depth + k;  // t out of range for tau*(m, k)
    // The first branch only lowers m: jump to the largest m' <= m with
    // C(m' + k - 1, k) <= t (m' = 1 qualifies: C(k, k) = 1 <= t).
    if (t < Choose(m + k - 1, k)) {
      uint64_t lo = 1, hi = m - 1;
      while (lo < hi) {
        const uint64_t mid = hi - (hi - lo) / 2;
        if (Choose(mid + k - 1, k) <= t) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      m = lo;
    }
    t -= Choose(m + k - 1, k);
    --k;
    ++depth;
  }
  return depth;
}

uint64_t MinLatencyTarget(uint64_t k, uint64_t t) { return MinLatencyTargetImpl(k, t); }

uint64_t BinomialTarget(uint64_t k, uint64_t t) {
  return BinomialTargetImpl(BinomialTotals(k), k, t);
}

std::unique_ptr<MergePolicy> NewMinLatencyPolicy(int k) {
  return std::make_unique<MinLatencyPolicy>(k);
}

std::unique_ptr<MergePolicy> NewBinomialPolicy(int k) {
  return std::make_unique<BinomialPolicy>(k);
}

}  // namespace lsm::policy
