// Runs one phase against an open adapter and measures it.
//
// Threads: `threads` writers issue the workload mix (closed loop for load and
// testing, open loop for running), optional query threads issue point
// lookups and scans in a closed loop, and the calling thread samples: every
// 10 ms it checks for the end of the run and samples the queue length, and
// at every interval boundary it snapshots the per-thread histograms into an
// interval record and hands it to the caller.
#ifndef LSMBENCH_DRIVER_RUNNER_H_
#define LSMBENCH_DRIVER_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "driver/histogram.h"
#include "driver/process_usage.h"
#include "driver/run_config.h"
#include "driver/workload.h"

namespace lsmbench {
namespace driver {

enum QueryType : int { kQueryGet = 0, kQueryScan, kQuerySecondary, kNumQueryTypes };
const char* QueryTypeName(int type);  // "get", "scan", "secondary"
// Whether the run's outputs report query type `type`: get and scan always
// (with query threads), secondary queries when they have a share.
bool QueryReported(const QuerySpec& queries, int type);

// Monotonic clock in nanoseconds.
int64_t NowNs();

// One interval's measurements. Latency: intended arrival (open loop) or
// start (closed loop) to completion; processing: start to completion. An
// operation belongs to the interval in which it completed.
struct IntervalStats {
  int index = 0;
  double t_start_s = 0, t_end_s = 0;  // actual snapshot times since the start
  bool measured = false;              // inside the measured window
  bool drain = false;                 // open loop: completions after the end
  Histogram latency[kNumOpTypes];
  Histogram processing[kNumOpTypes];
  Histogram query[kNumQueryTypes];
  bool open_loop = false;
  uint64_t arrivals = 0;      // open loop: intended arrivals in the interval
  uint64_t queue_length = 0;  // open loop: arrived, not started, at the end
  uint64_t queue_max = 0;     // open loop: max over the 10 ms samples
  uint64_t errors = 0;
  Metrics engine;             // adapter metrics at the end of the interval
  // The process's usage at the interval's start and end snapshots, and the
  // CPUs it may run on.
  ProcessUsage process_start, process_end;
  int usable_cpus = 1;
  // Flushes and merges completed in the interval; times are relative to the
  // start, like t_start_s (ns).
  std::vector<EngineEvent> events;

  double duration_s() const { return t_end_s - t_start_s; }
  uint64_t Ops(int type) const { return latency[type].count(); }
  uint64_t WriteOps() const {
    return Ops(kInsert) + Ops(kUpdate) + Ops(kDelete) + Ops(kReadModifyWrite);
  }
  uint64_t MixOps() const;
  // Merged latency (or processing) histogram of the write types.
  void WriteLatency(Histogram* out, bool processing_only) const;
};

// Everything the summary needs; the window is the set of measured intervals.
struct RunResult {
  bool interrupted = false;
  // The phase was ended early (RunHooks::end_signal) this long after the
  // start, before its duration had elapsed.
  bool ended_early = false;
  double ended_at_s = 0;
  Status error;                 // first engine failure, if any
  double elapsed_s = 0;         // start to final snapshot
  int intervals = 0;
  int window_intervals = 0;
  double window_start_s = 0, window_end_s = 0;  // snapshot times
  // Operations completed in the window (throughput uses these).
  uint64_t window_ops[kNumOpTypes] = {};
  uint64_t window_query_ops[kNumQueryTypes] = {};
  // Latencies of the operations completed in the window and, open loop,
  // during the drain that follows it.
  Histogram latency[kNumOpTypes];
  Histogram processing[kNumOpTypes];
  Histogram query[kNumQueryTypes];
  uint64_t total_ops[kNumOpTypes] = {};         // whole run, incl. warm-up and tail
  uint64_t total_query_ops[kNumQueryTypes] = {};
  std::vector<double> interval_throughput;       // mix ops/s per measured interval
  std::vector<double> interval_write_throughput; // write ops/s per measured interval
  // Measured intervals in which no write completed although writes were
  // pending (closed loop: always; open loop: arrivals or a queue).
  uint64_t zero_write_intervals = 0;
  uint64_t errors = 0;
  // Open loop. The exact window is [warm-up end, end of arrivals) in
  // intended time (the arrivals end at the duration, or where the phase was
  // ended early); its arrivals are counted exactly.
  bool open_loop = false;
  double exact_window_s = 0;
  uint64_t window_arrivals = 0;             // intended arrivals in the exact window
  uint64_t window_arrivals_completed = 0;   // ... of which completed (incl. drain)
  uint64_t drain_ops = 0;                   // completed during the drain
  double drain_s = 0;                       // time the drain took
  uint64_t total_arrivals = 0;      // up to the final snapshot
  uint64_t max_queue_length = 0;    // whole run
  uint64_t window_max_queue_length = 0;
  uint64_t final_queue_length = 0;  // arrived, not started, at the final snapshot
  uint64_t final_backlog = 0;       // arrived, not completed, at the final snapshot
  double oldest_queued_age_s = 0;   // age of the oldest unclaimed arrival then
  // Arrived before the final snapshot but never completed: in `latency` at
  // their wait until the final snapshot (lower bounds), counted here.
  uint64_t censored_ops[kNumOpTypes] = {};
  // Engine metrics at the start of the window, at its end (the last measured
  // interval's snapshot: before any drain) and at the end of the run.
  Metrics metrics_window_start, metrics_window_end, metrics_end;
  // The process's usage at the window's first and last snapshots (not the
  // final one, which comes after it).
  ProcessUsage process_window_start, process_window_end;
  int usable_cpus = 1;
  uint64_t next_insert_id = 0;
};

// What a writer did, for tests that need every operation.
struct OpTrace {
  int thread;
  uint64_t seq;
  int type;
  int64_t intended_ns, start_ns, end_ns;  // relative to the run's start
};

struct RunHooks {
  std::function<void(const IntervalStats&)> on_interval;
  std::function<void(const std::string&)> on_progress;  // one line, no newline
  // Nonzero: stop now and report what was measured as interrupted.
  const std::atomic<int>* stop_signal = nullptr;
  // Nonzero: end the phase now, as if its duration had elapsed at this
  // moment; not an interruption. The closed loop stops. The open loop's
  // arrivals end here: no request intended at or after this moment is
  // executed, the drain (drain_s) finishes only those that arrived before,
  // and the exact window ends here. Seen by the sampler within 10 ms.
  const std::atomic<int>* end_signal = nullptr;
  // Tests only: called by writer threads for every completed operation.
  std::function<void(const OpTrace&)> on_op;
  // Absolute NowNs() time of the start; 0: shortly after the call.
  int64_t start_ns = 0;
};

// Runs config's phase on adapter (already open; not closed here).
void RunPhase(const RunConfig& config, KvAdapter* adapter, const RunHooks& hooks,
              RunResult* result);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_RUNNER_H_
