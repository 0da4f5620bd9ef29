// The sampling thread of a phase: its ticks, the intervals it closes, the
// snapshots they take, and ending a phase early.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/phase_run.h"

namespace lsmbench {
namespace driver {
namespace phase_internal {

uint64_t PhaseRun::StartedTotal() const {
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->started.load(std::memory_order_relaxed);
  return n;
}

void PhaseRun::TakeSnapshot(int64_t now, int64_t interval_start, bool measured,
                            IntervalStats* out) {
  for (int t = 0; t < kNumOpTypes; t++) {
    out->latency[t].Clear();
    out->processing[t].Clear();
  }
  for (int q = 0; q < kNumQueryTypes; q++) out->query[q].Clear();
  Histogram cumulative, delta;
  for (auto& tr : tracked_) {
    tr.source->SnapshotCounts(&cumulative);
    uint64_t mn = 0, mx = 0;
    tr.source->TakeIntervalExtremes(&mn, &mx);
    Histogram::Delta(cumulative, tr.previous, mn, mx, &delta);
    tr.target->Merge(delta);
    tr.previous = cumulative;
  }
  if (!open_loop_) {
    // Closed loop: the latency is the processing time.
    for (int t = 0; t < kNumOpTypes; t++) out->processing[t] = out->latency[t];
  }
  uint64_t errors = 0;
  for (const auto& w : writers_) errors += w->errors.load(std::memory_order_relaxed);
  for (const auto& q : queries_) errors += q->errors.load(std::memory_order_relaxed);
  out->errors = errors;
  out->t_start_s = static_cast<double>(interval_start - start_ns_) * 1e-9;
  out->t_end_s = static_cast<double>(now - start_ns_) * 1e-9;
  out->measured = measured;
  out->open_loop = open_loop_;
  out->engine = adapter_->GetMetrics();
  out->process_start = last_process_;
  out->process_end = ReadProcessUsage();
  out->usable_cpus = usable_cpus_;
  last_process_ = out->process_end;
  // An event that completed after `now` (while this snapshot was taken)
  // belongs to the next interval.
  std::vector<EngineEvent> arrived = adapter_->TakeEvents();
  pending_events_.insert(pending_events_.end(), arrived.begin(), arrived.end());
  out->events.clear();
  std::vector<EngineEvent> later;
  for (EngineEvent& e : pending_events_) {
    if (e.end_ns > now) {
      later.push_back(e);
      continue;
    }
    e.start_ns -= start_ns_;
    e.end_ns -= start_ns_;
    if (e.sealed_ns != 0) e.sealed_ns -= start_ns_;
    out->events.push_back(e);
  }
  pending_events_ = std::move(later);
}

int64_t PhaseRun::EndNow() {
  // Set before the end is chosen: a writer that still sees false read its
  // clock (at or after its request's intended time) before the end was read
  // from the clock, so that request is before the end.
  ended_early_.store(true);
  if (!open_loop_) return NowNs();
  const int64_t end_rel = queue_->EndNow([this] { return NowNs() - start_ns_; });
  // The sampler has counted arrivals only up to its earlier clock readings.
  counter_->EndAt(end_rel);
  // window_end_rel_ (the writers' test for the exact window) stays: no
  // request at or after the new end is executed any more.
  return start_ns_ + end_rel;
}

void PhaseRun::Progress(const IntervalStats& s, int64_t now) {
  if (!hooks_.on_progress) return;
  Histogram write;
  s.WriteLatency(&write, false);
  const double secs = s.duration_s() > 0 ? s.duration_s() : 1;
  char line[256];
  const std::string& phase = PhaseNames()[static_cast<int>(config_.phase)];
  int n = snprintf(line, sizeof(line), "[lsm-driver] %s %.0f s", phase.c_str(),
                   static_cast<double>(now - start_ns_) * 1e-9);
  if (config_.duration_s > 0) {
    n += snprintf(line + n, sizeof(line) - n, "/%.0f s", config_.duration_s);
  }
  n += snprintf(line + n, sizeof(line) - n, "  ops/s %.0f  write p99 %.3f ms",
                static_cast<double>(s.MixOps()) / secs,
                static_cast<double>(write.Percentile(0.99)) * 1e-6);
  if (open_loop_) {
    n += snprintf(line + n, sizeof(line) - n, "  queue %llu",
                  static_cast<unsigned long long>(s.queue_length));
  }
  if (config_.queries.threads > 0) {
    snprintf(line + n, sizeof(line) - n, "  queries/s %.0f",
             static_cast<double>(s.query[kQueryGet].count() + s.query[kQueryScan].count() +
                                 s.query[kQuerySecondary].count()) /
                 secs);
  }
  hooks_.on_progress(line);
}

int64_t PhaseRun::Tick(Timeline* tl, Sampler* s, bool* end_of_running) {
  const int64_t wake = s->draining
                           ? std::min(NowNs() + kTickNs, tl->end_ns + tl->drain_ns)
                           : std::min({NowNs() + kTickNs, s->interval_end, tl->end_ns});
  SleepUntil(wake);
  int64_t now = NowNs();

  if (hooks_.stop_signal != nullptr && hooks_.stop_signal->load() != 0) {
    result_->interrupted = true;
    s->stopping = true;
  }
  // Ended early: from here on, exactly as if the duration ended now.
  if (!s->draining && !ended_early_.load() && hooks_.end_signal != nullptr &&
      hooks_.end_signal->load() != 0) {
    const int64_t end = EndNow();
    if (end < tl->end_ns) {
      tl->end_ns = end;
      result_->ended_early = true;
      result_->ended_at_s = static_cast<double>(end - start_ns_) * 1e-9;
    }
    now = NowNs();  // at or after the new end
  }
  if (failed_.load()) s->stopping = true;
  const bool all_done = writers_done_.load() == static_cast<int>(config_.threads);
  if (!s->draining) {
    if (now >= tl->end_ns) {
      *end_of_running = true;
      if (tl->drain_ns > 0 && !all_done) {
        s->draining = true;
      } else {
        s->stopping = true;
      }
    }
    // Closed loop: every writer ran out of work. Open loop: only when the
    // request limit was reached; an exhausted arrival profile (a trace
    // ending at rate 0) keeps the run going until its duration.
    if (all_done &&
        (!open_loop_ || (config_.max_ops > 0 && queue_->claimed() >= config_.max_ops))) {
      s->stopping = true;
      *end_of_running = true;
    }
  } else if (all_done || now >= tl->end_ns + tl->drain_ns) {
    s->stopping = true;
  }
  if (s->stopping) {
    stop_.store(true);
    now = NowNs();
  }
  if (*end_of_running) s->stop_time = std::min(now, tl->end_ns);
  if (open_loop_) {
    if (!s->counted_window_start && now >= tl->window_start_ns) {
      s->arrivals_before_window =
          window_begin_rel_ > 0 ? counter_->CountUpTo(window_begin_rel_ - 1) : 0;
      s->counted_window_start = true;
    }
    const uint64_t started = StartedTotal();  // before counting: started <= arrived
    const uint64_t arrived = counter_->CountUpTo(now - start_ns_);
    s->last_queue = arrived > started ? arrived - started : 0;
    s->queue_max = std::max(s->queue_max, s->last_queue);
  }
  return now;
}

void PhaseRun::CloseInterval(const Timeline& tl, int64_t now, bool end_of_running, Sampler* s,
                             IntervalStats* interval) {
  const bool is_drain = s->draining && !end_of_running;
  const bool measured =
      s->interval_start >= tl.window_start_ns || (is_drain && s->window_started);
  TakeSnapshot(now, s->interval_start, measured, interval);
  interval->index = s->index++;
  interval->drain = is_drain;
  if (open_loop_) {
    const uint64_t arrived = counter_->CountUpTo(now - start_ns_);
    interval->arrivals = arrived - s->arrivals_at_interval_start;
    s->arrivals_at_interval_start = arrived;
    interval->queue_length = s->last_queue;
    interval->queue_max = s->queue_max;
    result_->max_queue_length = std::max(result_->max_queue_length, s->queue_max);
    if (measured) {
      result_->window_max_queue_length = std::max(result_->window_max_queue_length, s->queue_max);
    }
    s->queue_max = s->last_queue;
  }
  for (int t = 0; t < kNumOpTypes; t++) result_->total_ops[t] += interval->Ops(t);
  for (int q = 0; q < kNumQueryTypes; q++) {
    result_->total_query_ops[q] += interval->query[q].count();
  }
  if (measured) {
    for (int t = 0; t < kNumOpTypes; t++) {
      result_->latency[t].Merge(interval->latency[t]);
      result_->processing[t].Merge(interval->processing[t]);
    }
    for (int q = 0; q < kNumQueryTypes; q++) result_->query[q].Merge(interval->query[q]);
  }
  if (is_drain) {
    result_->drain_ops = interval->MixOps();
    result_->drain_s = interval->duration_s();
  } else if (measured) {
    if (!s->window_started) {
      s->window_started = true;
      result_->window_start_s = interval->t_start_s;
      result_->process_window_start = interval->process_start;
    }
    result_->window_end_s = interval->t_end_s;
    result_->process_window_end = interval->process_end;
    result_->metrics_window_end = interval->engine;
    result_->window_intervals++;
    for (int t = 0; t < kNumOpTypes; t++) result_->window_ops[t] += interval->Ops(t);
    for (int q = 0; q < kNumQueryTypes; q++) {
      result_->window_query_ops[q] += interval->query[q].count();
    }
    // A short last interval (a run stopped early) would make the spread
    // of per-interval throughput look worse than it is.
    const double secs = interval->duration_s();
    if (secs >= 0.5 * static_cast<double>(tl.interval_ns) * 1e-9) {
      result_->interval_throughput.push_back(static_cast<double>(interval->MixOps()) / secs);
      result_->interval_write_throughput.push_back(static_cast<double>(interval->WriteOps()) /
                                                   secs);
      // No write completed although writes were pending: a stall. (Open
      // loop: idle periods of a bursty arrival process are not stalls.)
      const bool pending = !open_loop_ || interval->arrivals > 0 || interval->queue_max > 0;
      if (interval->WriteOps() == 0 && pending) result_->zero_write_intervals++;
    }
  } else {
    // The window's engine metrics start where the warm-up ends.
    result_->metrics_window_start = interval->engine;
  }
  result_->metrics_end = interval->engine;
  result_->intervals = s->index;
  result_->elapsed_s = interval->t_end_s;
  if (hooks_.on_interval) hooks_.on_interval(*interval);
  if (now >= s->next_progress || s->stopping || end_of_running) {
    Progress(*interval, now);
    while (s->next_progress <= now) s->next_progress += SecondsToNs(config_.progress_s);
  }
  s->interval_start = now;
  while (s->interval_end <= now) s->interval_end += tl.interval_ns;
}

}  // namespace phase_internal
}  // namespace driver
}  // namespace lsmbench
