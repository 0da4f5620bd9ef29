// The I/O bandwidth budget of Luo & Carey (Sec. 3.1): the bytes written by
// flushes and merges are throttled to a fixed rate by a token bucket, with
// flushes served before merges. Threads declare their role through a
// thread-local I/O priority; the Env wrapper in io_budget_env.h charges the
// budget, so the engine core never sleeps for throttling itself.
#ifndef LSM_SRC_ENV_IO_BUDGET_H_
#define LSM_SRC_ENV_IO_BUDGET_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

namespace lsm {

// Who does the I/O. Lower value = served first when waiting for the budget.
enum class IoPriority : int {
  kFlush = 0,  // flushes of memory components
  kMerge = 1,  // merges of disk components
  kUser = 2,   // foreground work (WAL, queries): never charged
};
inline constexpr int kNumIoPriorities = 3;

// The calling thread's I/O priority (thread-local; kUser until set).
void SetThreadIoPriority(IoPriority pri);
IoPriority ThreadIoPriority();

// Sets the calling thread's priority for a scope and restores the old one.
class ScopedIoPriority {
 public:
  explicit ScopedIoPriority(IoPriority pri) : saved_(ThreadIoPriority()) {
    SetThreadIoPriority(pri);
  }
  ~ScopedIoPriority() { SetThreadIoPriority(saved_); }
  ScopedIoPriority(const ScopedIoPriority&) = delete;
  ScopedIoPriority& operator=(const ScopedIoPriority&) = delete;

 private:
  const IoPriority saved_;
};

// Cumulative counters, indexed by static_cast<int>(IoPriority).
struct IoBudgetStats {
  std::array<uint64_t, kNumIoPriorities> requests{};       // Request calls
  std::array<uint64_t, kNumIoPriorities> granted_bytes{};  // bytes passed through
  std::array<uint64_t, kNumIoPriorities> wait_micros{};    // time blocked in Request
  std::array<uint64_t, kNumIoPriorities> sync_micros{};    // time in Syncs (CountSync)
  // Budget that expired unspent: accrued while the bucket was full (nobody
  // asked for it within burst_micros). Where the rate falls short of the
  // budget, this says how much and sync_micros suggests why.
  uint64_t unused_bytes = 0;
};

// A token bucket of bytes, refilled continuously from a monotonic clock at
// bytes_per_sec and capped at burst_micros worth of budget (so idle time is
// not saved up: the long-run rate stays at the budget and bursts are short).
//
// Debt: a request is granted as soon as the bucket is not negative and no
// request of higher (or equal, earlier) priority waits; it then takes all its
// bytes, possibly driving the bucket negative. Later requests wait until the
// debt is repaid. So a request of any size is admitted in one piece, the
// long-run rate is exact, and the rate overshoots the budget by at most one
// request plus the burst. Callers that want a smooth rate charge in chunks
// (the Env wrapper uses 64 KiB).
//
// Strict priority: while a flush request waits, no merge request is granted;
// among equal priorities the order is FIFO (so concurrent merges share the
// budget evenly, the paper's fair scheduler). Flushes can thus starve merges
// if they alone saturate the budget; the paper accepts that, as flushes are
// small and bounded by the incoming write rate. A flush may still wait for
// the debt of one merge request granted just before it arrived.
//
// bytes_per_sec == 0 means unlimited: Request only counts and returns.
// kUser requests are never charged nor delayed.
//
// Thread-safe.
class IoBudget {
 public:
  // refill_period_micros: the shortest sleep of a waiting request. Tokens
  // accrue continuously, but a waiter wakes at most once per period and then
  // lets itself and its followers through in a batch of about one period's
  // worth of bytes, bounding wakeups to ~1/period. Must be below
  // burst_micros, or oversleeping would lose budget. Rates up to 1e11 B/s.
  explicit IoBudget(uint64_t bytes_per_sec, uint64_t refill_period_micros = 1000,
                    uint64_t burst_micros = 10000);
  IoBudget(const IoBudget&) = delete;
  IoBudget& operator=(const IoBudget&) = delete;

  // Blocks until `bytes` may be transferred at priority pri.
  void Request(uint64_t bytes, IoPriority pri);

  // Changes the rate (0 = unlimited) at run time; waiters re-evaluate.
  void SetBytesPerSecond(uint64_t bytes_per_sec);
  uint64_t bytes_per_sec() const { return rate_.load(std::memory_order_relaxed); }
  bool unlimited() const { return bytes_per_sec() == 0; }

  IoBudgetStats GetStats() const;

  // Counts time a thread of priority pri spent making its writes durable:
  // time in which that thread asks for no budget.
  void CountSync(IoPriority pri, uint64_t micros);

  // The bucket's current level in bytes (negative = debt). For tests.
  double AvailableBytesForTesting();

 private:
  // A blocked request. Lives on the requester's stack; guarded by mu_.
  struct Waiter {
    uint64_t bytes;
    bool granted = false;
    std::condition_variable cv;  // signalled when granted or when it becomes next
  };

  static uint64_t NowMicros();
  void RefillLocked(uint64_t now);
  // The budget accrued beyond the cap from last_refill_ to now (not yet in unused_bytes_).
  double OverflowLocked(uint64_t now) const;
  Waiter* NextLocked() const;
  void GrantLocked();
  void Count(int pri, uint64_t bytes, uint64_t wait_micros);

  const uint64_t refill_period_micros_;
  const uint64_t burst_micros_;
  std::atomic<uint64_t> rate_;

  mutable std::mutex mu_;
  double tokens_ = 0;          // guarded by mu_; bytes, negative = debt
  uint64_t last_refill_ = 0;   // guarded by mu_
  // Waiting requests per priority (kFlush, kMerge), FIFO. Guarded by mu_.
  std::array<std::deque<Waiter*>, 2> waiters_;

  std::array<std::atomic<uint64_t>, kNumIoPriorities> requests_{};
  std::array<std::atomic<uint64_t>, kNumIoPriorities> granted_bytes_{};
  std::array<std::atomic<uint64_t>, kNumIoPriorities> wait_micros_{};
  std::array<std::atomic<uint64_t>, kNumIoPriorities> sync_micros_{};
  double unused_bytes_ = 0;  // guarded by mu_
};

}  // namespace lsm

#endif  // LSM_SRC_ENV_IO_BUDGET_H_
