// The phase's machinery behind RunPhase (runner.h), shared by its three
// parts: runner.cc (set-up, the writer and query threads: the hot paths),
// phase_sampler.cc (the sampling thread: ticks, intervals, ending early) and
// phase_finish.cc (the totals and the open loop's window accounting after the
// threads have joined). Internal to the driver.
#ifndef LSMBENCH_DRIVER_PHASE_RUN_H_
#define LSMBENCH_DRIVER_PHASE_RUN_H_

#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver/arrival.h"
#include "driver/op_generator.h"
#include "driver/runner.h"

namespace lsmbench {
namespace driver {
namespace phase_internal {

constexpr int64_t kTickNs = 10'000'000;       // sampler wake-up period
constexpr int64_t kMaxSleepNs = 20'000'000;   // writers re-check for stop this often
constexpr uint64_t kClosedLoopBatch = 64;     // sequence numbers claimed at once

inline void SleepUntil(int64_t t_ns) {
  struct timespec ts;
  ts.tv_sec = t_ns / 1'000'000'000;
  ts.tv_nsec = t_ns % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// Per-writer measurements: written by the writer only, read by the sampler.
struct WriterStats {
  RecordingHistogram latency[kNumOpTypes];
  RecordingHistogram processing[kNumOpTypes];
  alignas(64) std::atomic<uint64_t> started{0};
  // Open loop: completed requests whose intended time is in the window.
  std::atomic<uint64_t> window_completed{0};
  std::atomic<uint64_t> errors{0};
  // Open loop: a request claimed but never started because the phase
  // stopped first (-1: none). Read after the writer has joined.
  uint64_t abandoned_seq = 0;
  int64_t abandoned_intended = -1;
};

struct QueryStats {
  RecordingHistogram latency[kNumQueryTypes];
  std::atomic<uint64_t> errors{0};
};

// The sampler's previous cumulative snapshot of one recording histogram.
struct Tracked {
  RecordingHistogram* source;
  Histogram previous;
  Histogram* target;  // interval histogram this one merges into
};

class PhaseRun {
 public:
  PhaseRun(const RunConfig& config, KvAdapter* adapter, const RunHooks& hooks, RunResult* result)
      : config_(config),
        adapter_(adapter),
        hooks_(hooks),
        result_(result),
        open_loop_(config.phase == Phase::kRunning),
        records_(config.workload.secondary_fields > 0),
        generator_(config.workload, config.seed, config.insert_start),
        query_chooser_(config.queries.distribution, config.workload.record_count,
                       config.workload.zipf_theta, config.seed ^ 0x71756572,
                       config.workload.ScrambledZipfianItems()) {}

  // The phase: set up, start the threads, sample every interval until the phase stops, then
  // the totals. Each part below is one stage of that life.
  void Run();

 private:
  // The phase's clock, fixed before any thread starts (absolute ns); end_ns moves earlier
  // when the phase is ended early.
  struct Timeline {
    int64_t interval_ns = 0;
    int64_t end_ns = 0;
    int64_t drain_ns = 0;
    int64_t window_start_ns = 0;
  };
  // What the sampler carries from one tick to the next.
  struct Sampler {
    int64_t interval_start = 0;
    int64_t interval_end = 0;
    int64_t next_progress = 0;
    int64_t stop_time = 0;  // when the running part ended (0: not yet)
    uint64_t arrivals_at_interval_start = 0;
    uint64_t queue_max = 0;
    uint64_t last_queue = 0;
    bool counted_window_start = false;
    uint64_t arrivals_before_window = 0;
    int index = 0;
    bool window_started = false;
    bool draining = false;
    bool stopping = false;
  };

  // Per-thread histograms and the interval histograms they feed.
  void SetUpStats(IntervalStats* interval);
  // The start, end, drain and measurement window; the closed loop's request limit or the open
  // loop's arrivals.
  Timeline PlanTimeline();
  // The engine's metrics and the process's usage at the start.
  void StartRecording();
  std::vector<std::thread> StartThreads();
  // Sleeps to the next tick and decides: stop, end of the running part (*end_of_running),
  // drain; the open loop's queue. Returns the time of the tick.
  int64_t Tick(Timeline* timeline, Sampler* sampler, bool* end_of_running);
  // The interval that ends now, into the result and the hooks.
  void CloseInterval(const Timeline& timeline, int64_t now, bool end_of_running,
                     Sampler* sampler, IntervalStats* interval);
  // After the threads are joined: the totals, and the open loop's window accounting.
  void Finish(const Timeline& timeline, const Sampler& sampler, IntervalStats* interval);
  void FinishOpenLoop(const Timeline& timeline, const Sampler& sampler, int64_t final_snapshot);
  void CensorUnfinished(int64_t final_snapshot);
  void WriterClosedLoop(int index);
  void WriterOpenLoop(int index);
  void QueryLoop(int index);
  // Executes op; false (and the run stops) on an engine error.
  bool Execute(const Op& op, std::string* key, std::string* value_buf);
  void RecordError(const Status& s);
  void TraceEnded();
  // Busy-waits the last spin_ns_ before target, sleeps before that. False
  // when the run stops first, or the phase ended early before target.
  bool WaitUntil(int64_t target_ns);
  // Ends the phase now (RunHooks::end_signal); returns the new end (absolute).
  int64_t EndNow();

  void TakeSnapshot(int64_t now, int64_t interval_start, bool measured, IntervalStats* out);
  uint64_t StartedTotal() const;
  void Progress(const IntervalStats& s, int64_t now);

  const RunConfig& config_;
  KvAdapter* const adapter_;
  const RunHooks& hooks_;
  RunResult* const result_;
  const bool open_loop_;
  const bool records_;  // writes carry secondary fields (PutRecord)
  OpGenerator generator_;
  KeyChooser query_chooser_;

  int64_t start_ns_ = 0;
  int64_t spin_ns_ = 0;
  // Open loop: the exact window in intended time, relative to the start.
  int64_t window_begin_rel_ = 0;
  int64_t window_end_rel_ = INT64_MAX;
  std::atomic<bool> stop_{false};
  // The phase was ended early: open-loop writers check their claimed
  // request against the queue's new end (see EndNow).
  std::atomic<bool> ended_early_{false};
  std::atomic<bool> failed_{false};
  std::atomic<int> writers_done_{0};
  std::atomic<uint64_t> next_seq_{0};  // closed loop
  uint64_t seq_limit_ = UINT64_MAX;    // closed loop
  std::unique_ptr<ArrivalQueue> queue_;
  std::unique_ptr<ArrivalCounter> counter_;  // sampler's copy of the arrivals

  std::vector<std::unique_ptr<WriterStats>> writers_;
  std::vector<std::unique_ptr<QueryStats>> queries_;
  std::vector<Tracked> tracked_;
  ProcessUsage last_process_;  // at the previous snapshot
  int usable_cpus_ = 1;
  std::vector<EngineEvent> pending_events_;  // told by the engine, not yet in an interval

  std::mutex error_mu_;
};

}  // namespace phase_internal
}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_PHASE_RUN_H_
