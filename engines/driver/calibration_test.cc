// Calibration of the measuring instrument against the `null` engine, whose
// service times and pauses are known, so the right answers follow from
// queueing theory. These tests measure time: they run on the optimized build
// (ctest label `driver`) and check properties with margins that a loaded
// two-core machine cannot break (scheduling noise only ever adds latency, and
// an arrival may fall on either side of a window boundary); the precise
// figures are benchmarks (engines/driver/bench-driver.sh).
#include <gtest/gtest.h>
#include <sched.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "adapters/adapter.h"
#include "driver/run_config.h"
#include "driver/runner.h"
#include "driver/runner_test_util.h"

namespace lsmbench {
namespace driver {
namespace {

constexpr int64_t kMs = 1'000'000;

// The precision tests check the harness's arithmetic (latency from intended
// arrival, Poisson queueing), not how well it competes for CPU on a loaded
// machine. When permitted (root or CAP_SYS_NICE), the calling thread and the
// threads it creates run under SCHED_FIFO for the scope, so other processes
// cannot preempt a busy-waiting service or a wake-up. The kernel's RT
// throttling still leaves CPU to everyone else. Without the permission the
// tests run at normal priority and rely on their retries.
class RealtimeScope {
 public:
  RealtimeScope() {
    sched_param p{};
    p.sched_priority = 1;
    ok_ = sched_setscheduler(0, SCHED_FIFO, &p) == 0;
    if (!ok_) printf("(real-time scheduling not permitted: running at normal priority)\n");
  }
  ~RealtimeScope() {
    if (!ok_) return;
    sched_param p{};
    p.sched_priority = 0;
    sched_setscheduler(0, SCHED_OTHER, &p);
  }

 private:
  bool ok_;
};

// A timing measurement may be disturbed by other processes; a wrong harness
// fails every attempt, a disturbed one rarely fails three in a row.
constexpr int kAttempts = 3;

// Luo & Carey's example: 1000 writes/s intended, the engine stalls for 1 s.
// In an open loop every write that arrives during the stall queues, and
// their mean latency is at least 0.5 s.
TEST(CalibrationTest, OpenLoopPauseDelaysEveryWriteThatArrivesDuringIt) {
  const int64_t before = NowNs();
  auto adapter = OpenNull({{"pause_at_ms", "1200"}, {"pause_ms", "1000"}});
  const int64_t after = NowNs();
  ASSERT_LT(after - before, kMs / 2) << "opening the null engine took too long to align";
  // The pause starts 1200 ms after open. Starting the arrivals 200.1 ms
  // after open puts it 1000 ms - (0 .. 0.5 ms) into the run: arrivals
  // 1000..1999 (at 1000.0 .. 1999.0 ms) are exactly those inside it, the
  // first arriving at most 0.6 ms after the pause begins.
  RunConfig config = Config(R"({"engine": "null", "phase": "running", "duration_s": 3,
      "threads": 2, "progress_s": 0, "workload": {"record_count": 1000},
      "arrival": {"process": "constant", "rate": 1000}})");
  RunHooks hooks;
  OpLog log;
  hooks.on_op = log.Hook();
  std::vector<double> interval_p99_ms;
  hooks.on_interval = [&](const IntervalStats& s) {
    Histogram h;
    s.WriteLatency(&h, false);
    interval_p99_ms.push_back(static_cast<double>(h.Percentile(0.99)) / kMs);
  };
  hooks.start_ns = after + 200 * kMs + kMs / 10;
  auto result = std::make_unique<RunResult>();
  RunPhase(config, adapter.get(), hooks, result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();

  double sum_ms = 0;
  int paused = 0, outside_slow = 0;
  for (const OpTrace& op : log.ops()) {
    const double latency_ms = static_cast<double>(op.end_ns - op.intended_ns) / kMs;
    if (op.intended_ns >= 1000 * kMs && op.intended_ns < 2000 * kMs) {
      sum_ms += latency_ms;
      paused++;
    } else if (latency_ms > 100 && op.intended_ns < 990 * kMs) {
      outside_slow++;  // before the pause nothing should wait that long
    }
  }
  // Intended arrival times are computed, not measured: exactly 1000 of them
  // fall inside the pause, whatever the machine's load.
  ASSERT_EQ(paused, 1000);
  const double mean_ms = sum_ms / paused;
  printf("open loop: %d writes arrived during the 1 s pause, mean latency %.1f ms\n", paused,
         mean_ms);
  // Each waits at least until the pause ends (mean 500.5 ms less the < 0.6 ms
  // alignment); noise only adds. A closed-loop measurement would give ~0.
  EXPECT_GE(mean_ms, 500.0);
  // And not wildly more: the queue drains at once (1000 null writes take
  // microseconds; the slack is for a machine that steals the CPU for a while).
  EXPECT_LT(mean_ms, 800.0);
  // Before the pause nothing should wait that long; a few writes may, when
  // another process takes the CPU.
  EXPECT_LE(outside_slow, 10);

  // The window's p99 reflects the stall: a third of the writes waited,
  // the slowest 1 % for nearly the whole second. The window holds 3000
  // arrivals; the last one or two may still be in flight at its end.
  Histogram write;
  for (int t = 0; t < kNumOpTypes; t++) {
    if (IsWrite(t)) write.Merge(result->latency[t]);
  }
  EXPECT_GE(write.count(), 2990u);
  EXPECT_LE(write.count(), 3000u);
  EXPECT_GE(static_cast<double>(write.Percentile(0.99)) / kMs, 900.0);
  double max_interval_p99 = 0;
  for (double p : interval_p99_ms) max_interval_p99 = std::max(max_interval_p99, p);
  EXPECT_GE(max_interval_p99, 900.0);
  EXPECT_EQ(result->final_backlog, 0u);
  EXPECT_GE(result->max_queue_length, 900u);  // the queue built up during the pause
}

// The same pause in a closed loop delays only one write per thread: the
// others are simply never issued.
TEST(CalibrationTest, ClosedLoopPauseDelaysOneWritePerThread) {
  const int64_t before = NowNs();
  auto adapter = OpenNull({{"pause_at_ms", "1200"}, {"pause_ms", "1000"}});
  RunConfig config = Config(R"({"engine": "null", "phase": "testing", "duration_s": 3,
      "threads": 2, "progress_s": 0, "workload": {"record_count": 1000}})");
  RunHooks hooks;
  hooks.start_ns = before + 200 * kMs;
  auto result = std::make_unique<RunResult>();
  RunPhase(config, adapter.get(), hooks, result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  const Histogram& update = result->latency[kUpdate];
  const uint64_t delayed = update.CountAtLeast(500 * kMs);
  printf("closed loop: %llu writes, %llu delayed by the pause, p99 %.3f us\n",
         static_cast<unsigned long long>(update.count()),
         static_cast<unsigned long long>(delayed), update.Percentile(0.99) / 1e3);
  // One write per thread is caught by the pause; no other waits half as long.
  EXPECT_EQ(delayed, 2u);
  EXPECT_GT(update.count(), 10000u);
  // The pause does not reach the p99 (it delays 2 writes of > 10000); the
  // bound leaves room for a loaded machine's scheduling delays.
  EXPECT_LT(update.Percentile(0.99), 100 * kMs);
}

// The dispatcher keeps up with 100k writes/s: the requests that arrived in
// the window are completed (a short drain lets the last few finish).
TEST(CalibrationTest, OpenLoopAchievesTheTargetRate) {
  RealtimeScope realtime;
  for (int attempt = 1; attempt <= kAttempts; attempt++) {
    auto adapter = OpenNull({});
    RunConfig config = Config(R"({"engine": "null", "phase": "running", "duration_s": 5,
        "drain_s": 0.1, "progress_s": 0, "workload": {"record_count": 100000},
        "arrival": {"process": "constant", "rate": 100000}})");
    RunHooks hooks;
    auto result = std::make_unique<RunResult>();
    RunPhase(config, adapter.get(), hooks, result.get());
    ASSERT_TRUE(result->error.ok()) << result->error.ToString();
    const double window = result->exact_window_s;
    const double achieved = result->window_arrivals_completed / window;
    printf("attempt %d, open loop at 100k/s: %llu arrivals in %.3f s, %llu completed: %.0f/s\n",
           attempt, static_cast<unsigned long long>(result->window_arrivals), window,
           static_cast<unsigned long long>(result->window_arrivals_completed), achieved);
    // Exact properties of the arrival process and the recording.
    ASSERT_NEAR(window, 5.0, 1e-9);
    ASSERT_EQ(result->window_arrivals, 500000u);
    ASSERT_EQ(result->latency[kUpdate].count(), result->window_arrivals_completed);
    // Within 5 %: a dispatcher that falls behind loses far more; the 1 %
    // figure on a quiet machine is the benchmark's (bench-driver.sh).
    if (std::fabs(achieved - 100000.0) <= 5000.0) return;
    if (attempt == kAttempts) {
      EXPECT_NEAR(achieved, 100000.0, 5000.0);
    }
  }
}

// M/D/1: Poisson arrivals, a constant service time s, utilization rho. The
// mean time in system is s + rho * s / (2 * (1 - rho)); at rho = 0.5 and
// s = 200 us that is 300 us. On a loaded machine the service itself takes
// longer (the busy-wait is preempted) and waking the writer adds tens of
// microseconds, so the check predicts from the service time the run measured
// and bounds the mean from below tightly and from above loosely: a harness
// that measured from the actual issue time (coordinated omission) would see
// about the service time, one with constant arrivals exactly it (D/D/1), one
// that queued arrivals twice over far more than twice the prediction. The
// precise figure on a quiet machine: bench-driver.sh's md1 case.
TEST(CalibrationTest, PoissonArrivalsAtHalfLoadMatchMD1) {
  RealtimeScope realtime;
  const double s_us = 200, rho = 0.5;
  const double predicted_us = s_us + rho * s_us / (2 * (1 - rho));
  for (int attempt = 1; attempt <= kAttempts; attempt++) {
    auto adapter = OpenNull({{"service_time_us", "200"}});
    RunConfig config = Config(R"({"engine": "null", "phase": "running", "duration_s": 8,
        "warmup_s": 1, "spin_us": 300, "progress_s": 0, "workload": {"record_count": 1000},
        "arrival": {"process": "poisson", "rate": 2500}})");
    config.seed = 1000 + attempt;
    RunHooks hooks;
    auto result = std::make_unique<RunResult>();
    RunPhase(config, adapter.get(), hooks, result.get());
    ASSERT_TRUE(result->error.ok()) << result->error.ToString();
    const Histogram& h = result->latency[kUpdate];
    const double mean_us = h.Mean() / 1e3;
    const double service_us = result->processing[kUpdate].Mean() / 1e3;
    const double measured_rho = 2500 * service_us / 1e6;
    const double from_measured_us =
        measured_rho < 0.95 ? service_us + measured_rho * service_us / (2 * (1 - measured_rho))
                            : 0;
    printf("attempt %d, M/D/1: %llu writes, mean latency %.1f us (predicted %.1f; %.1f from "
           "the measured mean service %.1f us)\n",
           attempt, static_cast<unsigned long long>(h.count()), mean_us, predicted_us,
           from_measured_us, service_us);
    ASSERT_GT(h.count(), 15000u);
    // The busy-wait never ends early, and queueing adds to the service time.
    ASSERT_GE(service_us, s_us * 0.99);
    ASSERT_GT(mean_us, service_us);
    const double low = 0.9 * from_measured_us, high = 2 * from_measured_us;
    if (from_measured_us > 0 && mean_us >= low && mean_us <= high) return;
    if (attempt == kAttempts) {
      EXPECT_GE(mean_us, low);
      EXPECT_LE(mean_us, high);
    }
  }
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
