// The end of a phase, after its threads have joined: the totals, and the
// open loop's exact window accounting in intended time.
#include <algorithm>

#include "driver/phase_run.h"

namespace lsmbench {
namespace driver {
namespace phase_internal {

void PhaseRun::Finish(const Timeline& tl, const Sampler& s, IntervalStats* interval) {
  // Operations that completed after the final snapshot count in the totals
  // only; the measurements ended with that snapshot.
  const int64_t final_snapshot = s.interval_start;
  TakeSnapshot(NowNs(), s.interval_start, false, interval);
  for (int t = 0; t < kNumOpTypes; t++) result_->total_ops[t] += interval->Ops(t);
  if (open_loop_) {
    // Open loop, these are the requests that were in flight at the end: the
    // slowest ones when the engine was stalled then. Their latencies are
    // exact, and leaving them out would flatter the tail.
    for (int t = 0; t < kNumOpTypes; t++) result_->latency[t].Merge(interval->latency[t]);
  }
  for (int q = 0; q < kNumQueryTypes; q++) {
    result_->total_query_ops[q] += interval->query[q].count();
  }
  result_->metrics_end = interval->engine;
  uint64_t errors = 0;
  for (const auto& w : writers_) errors += w->errors.load();
  for (const auto& q : queries_) errors += q->errors.load();
  result_->errors = errors;
  result_->next_insert_id = generator_.key_count();
  if (config_.phase == Phase::kLoad) {
    result_->next_insert_id = std::max<uint64_t>(
        config_.insert_start, std::min<uint64_t>(next_seq_.load(), seq_limit_));
  }
  if (open_loop_) FinishOpenLoop(tl, s, final_snapshot);
}

void PhaseRun::FinishOpenLoop(const Timeline& tl, const Sampler& s, int64_t final_snapshot) {
  // Exact window accounting in intended time: [warm-up end, stop).
  const int64_t stop_time = s.stop_time != 0 ? s.stop_time : std::min(final_snapshot, tl.end_ns);
  const int64_t window_end_rel = std::max(stop_time - start_ns_, window_begin_rel_);
  result_->exact_window_s = static_cast<double>(window_end_rel - window_begin_rel_) * 1e-9;
  const uint64_t arrivals_before_window = s.counted_window_start
                                              ? s.arrivals_before_window
                                              : counter_->CountUpTo(window_end_rel - 1);
  const uint64_t arrived_by_stop = counter_->CountUpTo(window_end_rel - 1);
  result_->window_arrivals = arrived_by_stop - arrivals_before_window;
  uint64_t completed_in_window = 0, completed = 0;
  for (const auto& w : writers_) completed_in_window += w->window_completed.load();
  for (int t = 0; t < kNumOpTypes; t++) completed += result_->total_ops[t];
  result_->window_arrivals_completed = completed_in_window;
  result_->total_arrivals = arrived_by_stop;
  result_->final_queue_length = s.last_queue;
  result_->final_backlog = arrived_by_stop > completed ? arrived_by_stop - completed : 0;
  const int64_t next = queue_->PeekNext();
  if (next >= 0 && start_ns_ + next <= final_snapshot) {
    result_->oldest_queued_age_s = static_cast<double>(final_snapshot - start_ns_ - next) * 1e-9;
  }
  CensorUnfinished(final_snapshot);
}

void PhaseRun::CensorUnfinished(int64_t final_snapshot) {
  // A request that arrived before the final snapshot and never completed
  // (still queued when the phase ended early or at its cap, or claimed but
  // not started) has waited at least until then. Leaving it out would make
  // a phase look better the longer its queue grew: it enters the latency
  // histograms at its wait so far, a lower bound.
  auto censor = [&](uint64_t seq, int64_t intended) {
    const int64_t waited = final_snapshot - (start_ns_ + intended);
    if (waited < 0) return false;
    const int type = generator_.TypeOf(seq);
    result_->latency[type].Record(static_cast<uint64_t>(waited));
    result_->censored_ops[type]++;
    return true;
  };
  for (const auto& w : writers_) {
    // Claimed before the phase was ended early, for a time after that end: it never arrived.
    if (w->abandoned_intended >= 0 && queue_->BeforeEnd(w->abandoned_intended)) {
      censor(w->abandoned_seq, w->abandoned_intended);
    }
  }
  // Every writer has joined: the rest of the queue is ours to drain.
  uint64_t seq = 0;
  int64_t intended = 0;
  while (queue_->Claim(&seq, &intended) && censor(seq, intended)) {
  }
}

}  // namespace phase_internal
}  // namespace driver
}  // namespace lsmbench
