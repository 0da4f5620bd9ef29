#include "env/io_budget.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace lsm {

namespace {

thread_local IoPriority tls_io_priority = IoPriority::kUser;

// Longer gaps add nothing (the bucket is capped) and would only risk
// overflow in the multiplication below.
constexpr uint64_t kMaxRefillGapMicros = 10'000'000;

}  // namespace

void SetThreadIoPriority(IoPriority pri) { tls_io_priority = pri; }
IoPriority ThreadIoPriority() { return tls_io_priority; }

IoBudget::IoBudget(uint64_t bytes_per_sec, uint64_t refill_period_micros, uint64_t burst_micros)
    : refill_period_micros_(std::max<uint64_t>(refill_period_micros, 1)),
      burst_micros_(std::max(burst_micros, refill_period_micros_ + 1)),
      rate_(bytes_per_sec),
      last_refill_(NowMicros()) {}

uint64_t IoBudget::NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

double IoBudget::OverflowLocked(uint64_t now) const {
  const double rate = static_cast<double>(rate_.load(std::memory_order_relaxed));
  if (now <= last_refill_ || rate == 0) return 0;
  const double cap = rate * static_cast<double>(burst_micros_) / 1e6;
  const double accrued = tokens_ + static_cast<double>(now - last_refill_) * rate / 1e6;
  return accrued > cap ? accrued - cap : 0;
}

void IoBudget::RefillLocked(uint64_t now) {
  const uint64_t rate = rate_.load(std::memory_order_relaxed);
  if (now <= last_refill_) return;
  if (rate == 0) {
    last_refill_ = now;
    tokens_ = 0;  // no debt carries over from before an unlimited period
    return;
  }
  const uint64_t gap = std::min(now - last_refill_, kMaxRefillGapMicros);
  unused_bytes_ += OverflowLocked(now);
  last_refill_ = now;
  const double cap = static_cast<double>(rate) * static_cast<double>(burst_micros_) / 1e6;
  tokens_ = std::min(cap, tokens_ + static_cast<double>(gap) * static_cast<double>(rate) / 1e6);
}

IoBudget::Waiter* IoBudget::NextLocked() const {
  for (const auto& queue : waiters_) {
    if (!queue.empty()) return queue.front();
  }
  return nullptr;
}

// Admits waiters in priority order while the bucket is not negative. The
// granting thread charges them on their behalf, so the budget is spent at
// the right time however long the granted threads take to wake up: with
// one grant per wakeup instead, two threads alternating through the FIFO
// would need a context switch per request and could fall behind the budget.
void IoBudget::GrantLocked() {
  Waiter* const old_next = NextLocked();
  const bool unlimited = rate_.load(std::memory_order_relaxed) == 0;
  for (auto& queue : waiters_) {
    while (!queue.empty() && (unlimited || tokens_ >= 0)) {
      Waiter* w = queue.front();
      queue.pop_front();
      if (!unlimited) tokens_ -= static_cast<double>(w->bytes);
      w->granted = true;
      w->cv.notify_one();
    }
  }
  // The new first waiter takes over the timed wait for the refill.
  Waiter* const next = NextLocked();
  if (next != nullptr && next != old_next) next->cv.notify_one();
}

void IoBudget::Count(int pri, uint64_t bytes, uint64_t wait_micros) {
  requests_[pri].fetch_add(1, std::memory_order_relaxed);
  granted_bytes_[pri].fetch_add(bytes, std::memory_order_relaxed);
  if (wait_micros > 0) wait_micros_[pri].fetch_add(wait_micros, std::memory_order_relaxed);
}

void IoBudget::Request(uint64_t bytes, IoPriority pri) {
  const int p = static_cast<int>(pri);
  if (pri == IoPriority::kUser || rate_.load(std::memory_order_relaxed) == 0) {
    Count(p, bytes, 0);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t start = NowMicros();
  Waiter self;
  self.bytes = bytes;
  waiters_[p].push_back(&self);
  RefillLocked(start);
  GrantLocked();
  const bool waits = !self.granted;
  while (!self.granted) {
    if (NextLocked() == &self) {
      // The first waiter sleeps until the debt is repaid, but at least one
      // refill period so that a saturated budget costs ~1/period wakeups
      // (each admitting a period's worth of requests), not one per request.
      const uint64_t rate = rate_.load(std::memory_order_relaxed);
      const double deficit_micros = -tokens_ * 1e6 / static_cast<double>(rate);
      const uint64_t sleep = std::max<uint64_t>(
          refill_period_micros_, static_cast<uint64_t>(std::ceil(deficit_micros)));
      self.cv.wait_for(lock, std::chrono::microseconds(sleep));
      RefillLocked(NowMicros());
      GrantLocked();
    } else {
      // Woken when granted or when it becomes the first waiter.
      self.cv.wait(lock);
    }
  }
  const uint64_t end = waits ? NowMicros() : start;
  lock.unlock();
  Count(p, bytes, end - start);
}

void IoBudget::SetBytesPerSecond(uint64_t bytes_per_sec) {
  std::lock_guard<std::mutex> lock(mu_);
  RefillLocked(NowMicros());  // settle the time so far at the old rate
  rate_.store(bytes_per_sec, std::memory_order_relaxed);
  GrantLocked();  // everyone if now unlimited
  // A first waiter asleep on the old rate's deficit recomputes it.
  if (Waiter* next = NextLocked()) next->cv.notify_one();
}

void IoBudget::CountSync(IoPriority pri, uint64_t micros) {
  sync_micros_[static_cast<int>(pri)].fetch_add(micros, std::memory_order_relaxed);
}

IoBudgetStats IoBudget::GetStats() const {
  IoBudgetStats s;
  for (int i = 0; i < kNumIoPriorities; i++) {
    s.requests[i] = requests_[i].load(std::memory_order_relaxed);
    s.granted_bytes[i] = granted_bytes_[i].load(std::memory_order_relaxed);
    s.wait_micros[i] = wait_micros_[i].load(std::memory_order_relaxed);
    s.sync_micros[i] = sync_micros_[i].load(std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(mu_);
  s.unused_bytes = static_cast<uint64_t>(unused_bytes_ + OverflowLocked(NowMicros()));
  return s;
}

double IoBudget::AvailableBytesForTesting() {
  std::lock_guard<std::mutex> lock(mu_);
  RefillLocked(NowMicros());
  return tokens_;
}

}  // namespace lsm
