// IoBudget on its own: debt, the burst cap, strict priority, unlimited mode.
// The rate calibration through the Env is in io_budget_env_test.cc.
#include "env/io_budget.h"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace lsm {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr int kFlush = static_cast<int>(IoPriority::kFlush);
constexpr int kMerge = static_cast<int>(IoPriority::kMerge);
constexpr int kUser = static_cast<int>(IoPriority::kUser);

void SleepMillis(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(IoBudgetTest, ThreadPriorityIsThreadLocalAndScoped) {
  EXPECT_EQ(ThreadIoPriority(), IoPriority::kUser);
  {
    ScopedIoPriority scope(IoPriority::kMerge);
    EXPECT_EQ(ThreadIoPriority(), IoPriority::kMerge);
    IoPriority other = IoPriority::kFlush;
    std::thread([&] { other = ThreadIoPriority(); }).join();
    EXPECT_EQ(other, IoPriority::kUser);
    {
      ScopedIoPriority inner(IoPriority::kFlush);
      EXPECT_EQ(ThreadIoPriority(), IoPriority::kFlush);
    }
    EXPECT_EQ(ThreadIoPriority(), IoPriority::kMerge);
  }
  EXPECT_EQ(ThreadIoPriority(), IoPriority::kUser);
}

TEST(IoBudgetTest, UnlimitedNeverBlocks) {
  IoBudget budget(0);
  EXPECT_TRUE(budget.unlimited());
  // At any finite rate these would take hours.
  budget.Request(uint64_t{1} << 40, IoPriority::kMerge);
  budget.Request(uint64_t{1} << 40, IoPriority::kFlush);
  budget.Request(uint64_t{1} << 40, IoPriority::kMerge);
  IoBudgetStats s = budget.GetStats();
  EXPECT_EQ(s.requests[kMerge], 2u);
  EXPECT_EQ(s.requests[kFlush], 1u);
  EXPECT_EQ(s.granted_bytes[kMerge], uint64_t{2} << 40);
  EXPECT_EQ(s.wait_micros[kMerge], 0u);
  EXPECT_EQ(s.wait_micros[kFlush], 0u);
}

TEST(IoBudgetTest, UserRequestsAreNotCharged) {
  IoBudget budget(1 * kKiB);
  budget.Request(100 * kMiB, IoPriority::kUser);  // would be 100000 s of debt
  EXPECT_GE(budget.AvailableBytesForTesting(), 0.0);
  IoBudgetStats s = budget.GetStats();
  EXPECT_EQ(s.granted_bytes[kUser], 100 * kMiB);
  EXPECT_EQ(s.wait_micros[kUser], 0u);
  // The bucket is untouched, so a background request is admitted at once.
  budget.Request(1, IoPriority::kMerge);
  EXPECT_EQ(budget.GetStats().wait_micros[kMerge], 0u);
}

TEST(IoBudgetTest, LargeRequestGoesIntoDebtAndDelaysTheNext) {
  IoBudget budget(1 * kMiB);
  budget.Request(512 * kKiB, IoPriority::kMerge);  // admitted at once, in debt
  EXPECT_EQ(budget.GetStats().wait_micros[kMerge], 0u);
  EXPECT_LT(budget.AvailableBytesForTesting(), -400.0 * kKiB);
  budget.Request(1, IoPriority::kMerge);  // waits ~0.5 s for the debt
  uint64_t waited = budget.GetStats().wait_micros[kMerge];
  std::printf("waited %.3f s for 512 KiB of debt at 1 MiB/s\n", waited / 1e6);
  EXPECT_GE(waited, 400'000u);
  EXPECT_LT(waited, 5'000'000u);
}

TEST(IoBudgetTest, IdleTimeIsNotSavedBeyondTheBurst) {
  // Burst 10 ms at 1 MiB/s: at most 10486 bytes may accumulate.
  IoBudget budget(1 * kMiB, /*refill_period_micros=*/1000, /*burst_micros=*/10000);
  SleepMillis(300);
  double available = budget.AvailableBytesForTesting();
  EXPECT_GT(available, 5000.0);  // it does refill
  EXPECT_LE(available, 0.01 * kMiB + 1);
}

// Every byte of budget that accrues is either granted, still in the bucket,
// or counted as unused: accrued = granted + unused + bucket. The accrual is
// bracketed by clock reads just outside and just inside the budget's own
// span, so scheduling delays move both bounds, never break them.
TEST(IoBudgetTest, AccruedBudgetIsGrantedUnusedOrInTheBucket) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const double rate = 1.0 * kMiB;
  const Clock::time_point outer_start = Clock::now();
  IoBudget budget(1 * kMiB, /*refill_period_micros=*/1000, /*burst_micros=*/10000);
  const Clock::time_point inner_start = Clock::now();
  SleepMillis(100);                                // ~90 KiB expire unspent
  budget.Request(300 * kKiB, IoPriority::kMerge);  // into debt
  budget.Request(1, IoPriority::kFlush);           // waits ~0.3 s: nothing expires
  SleepMillis(50);
  const Clock::time_point inner_end = Clock::now();
  const double bucket = budget.AvailableBytesForTesting();
  const IoBudgetStats s = budget.GetStats();
  const Clock::time_point outer_end = Clock::now();
  const double granted = static_cast<double>(s.granted_bytes[kMerge] + s.granted_bytes[kFlush]);
  const double accrued = granted + static_cast<double>(s.unused_bytes) + bucket;
  std::printf("unused %.0f bytes, accrued %.0f in [%.0f, %.0f]\n",
              static_cast<double>(s.unused_bytes), accrued,
              rate * seconds(inner_start, inner_end), rate * seconds(outer_start, outer_end));
  EXPECT_GE(s.unused_bytes, static_cast<uint64_t>(0.08 * kMiB));  // the first sleep, at least
  EXPECT_GE(accrued + 2, rate * seconds(inner_start, inner_end));
  EXPECT_LE(accrued - 2, rate * seconds(outer_start, outer_end));
}

// Strict priority: a flush request that arrives after a waiting merge
// request is served first. FIFO would serve the merge first.
TEST(IoBudgetTest, WaitingFlushIsServedBeforeWaitingMerges) {
  IoBudget budget(1 * kMiB);
  budget.Request(256 * kKiB, IoPriority::kMerge);  // ~250 ms of debt
  std::mutex mu;
  std::string order;
  auto requester = [&](IoPriority pri, uint64_t bytes, char tag) {
    return std::thread([&budget, &mu, &order, pri, bytes, tag] {
      budget.Request(bytes, pri);
      std::lock_guard<std::mutex> l(mu);
      order.push_back(tag);
    });
  };
  // Each grant leaves ~50 ms of debt, so the next one is admitted clearly
  // later and the order recorded after Request returns is unambiguous.
  std::thread m1 = requester(IoPriority::kMerge, 50 * kKiB, 'M');
  SleepMillis(40);
  std::thread m2 = requester(IoPriority::kMerge, 1, 'm');
  SleepMillis(40);
  std::thread f = requester(IoPriority::kFlush, 50 * kKiB, 'F');
  m1.join();
  m2.join();
  f.join();
  EXPECT_EQ(order, "FMm");
}

TEST(IoBudgetTest, BecomingUnlimitedReleasesWaiters) {
  IoBudget budget(1 * kKiB);
  budget.Request(100 * kMiB, IoPriority::kMerge);  // ~1 day of debt
  std::thread waiter([&] { budget.Request(1, IoPriority::kMerge); });
  SleepMillis(50);
  budget.SetBytesPerSecond(0);
  waiter.join();  // hangs if waiters are not woken
  EXPECT_TRUE(budget.unlimited());
  // Back to a rate: the old debt does not carry over.
  budget.SetBytesPerSecond(1 * kMiB);
  budget.Request(1, IoPriority::kMerge);
  EXPECT_GE(budget.AvailableBytesForTesting(), -1.0 * kKiB);
}

}  // namespace
}  // namespace lsm
