#include "driver/runner.h"

#include <immintrin.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "driver/arrival.h"
#include "driver/op_generator.h"

namespace lsmbench {
namespace driver {

namespace {

constexpr int64_t kTickNs = 10'000'000;       // sampler wake-up period
constexpr int64_t kMaxSleepNs = 20'000'000;   // writers re-check for stop this often
constexpr uint64_t kClosedLoopBatch = 64;     // sequence numbers claimed at once

void SleepUntil(int64_t t_ns) {
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
                       config.workload.zipf_theta, config.seed ^ 0x71756572) {}

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

}  // namespace

const char* QueryTypeName(int type) {
  return type == kQueryGet ? "get" : type == kQueryScan ? "scan" : "secondary";
}

bool QueryReported(const QuerySpec& queries, int type) {
  return queries.threads > 0 && (type != kQuerySecondary || queries.secondary > 0);
}

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t IntervalStats::MixOps() const {
  uint64_t n = 0;
  for (int t = 0; t < kNumOpTypes; t++) n += Ops(t);
  return n;
}

void IntervalStats::WriteLatency(Histogram* out, bool processing_only) const {
  out->Clear();
  for (int t = kInsert; t <= kDelete; t++) {
    out->Merge(processing_only ? processing[t] : latency[t]);
  }
}

namespace {

void PhaseRun::RecordError(const Status& s) {
  std::lock_guard<std::mutex> l(error_mu_);
  if (result_->error.ok()) result_->error = s;
  failed_.store(true, std::memory_order_relaxed);
}

bool PhaseRun::Execute(const Op& op, std::string* key, std::string* value_buf) {
  generator_.FormatKey(op.id, key->data());
  Status s;
  switch (op.type) {
    case kInsert:
    case kUpdate:
      s = records_ ? adapter_->PutRecord(*key, op.fields, op.value)
                   : adapter_->Put(*key, op.value);
      break;
    case kDelete:
      s = adapter_->Delete(*key);
      break;
    case kRead:
      s = adapter_->Get(*key, value_buf);
      if (s.IsNotFound()) s = Status::OK();
      break;
    case kScan: {
      size_t returned = 0;
      s = adapter_->Scan(*key, op.scan_length, &returned);
      break;
    }
  }
  if (!s.ok()) {
    RecordError(s);
    return false;
  }
  return true;
}

bool PhaseRun::WaitUntil(int64_t target_ns) {
  for (;;) {
    const int64_t now = NowNs();
    const int64_t remaining = target_ns - now;
    if (remaining <= 0) return true;
    if (stop_.load(std::memory_order_relaxed)) return false;
    if (remaining > spin_ns_) {
      // Early for the request: no cost in looking whether the phase has
      // ended before it (rather than sleeping until then for nothing).
      if (ended_early_.load(std::memory_order_relaxed) &&
          !queue_->BeforeEnd(target_ns - start_ns_)) {
        return false;
      }
      SleepUntil(now + std::min(remaining - spin_ns_, kMaxSleepNs));
      continue;
    }
    while (NowNs() < target_ns) _mm_pause();
    return true;
  }
}

void PhaseRun::WriterClosedLoop(int index) {
  WriterStats& stats = *writers_[index];
  std::string key(generator_.key_size(), '\0');
  std::string value_buf;
  const bool load = config_.phase == Phase::kLoad;
  Op op;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t base = next_seq_.fetch_add(kClosedLoopBatch, std::memory_order_relaxed);
    if (base >= seq_limit_) break;
    const uint64_t end = std::min(base + kClosedLoopBatch, seq_limit_);
    for (uint64_t seq = base; seq < end; seq++) {
      if (stop_.load(std::memory_order_relaxed)) break;
      if (load) {
        generator_.MakeLoad(seq, &op);  // the load inserts ids 0..N-1
      } else {
        generator_.Make(seq, &op);
      }
      const int64_t t0 = NowNs();
      stats.started.store(stats.started.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
      if (!Execute(op, &key, &value_buf)) {
        stats.errors.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      const int64_t t1 = NowNs();
      stats.latency[op.type].Record(static_cast<uint64_t>(t1 - t0));
      if (hooks_.on_op) {
        hooks_.on_op({index, seq, op.type, t0 - start_ns_, t0 - start_ns_, t1 - start_ns_});
      }
    }
    if (failed_.load(std::memory_order_relaxed)) break;
  }
  writers_done_.fetch_add(1);
}

void PhaseRun::WriterOpenLoop(int index) {
  WriterStats& stats = *writers_[index];
  // Precise wake-ups: the default 50 us timer slack would show as latency.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::string key(generator_.key_size(), '\0');
  std::string value_buf;
  Op op;
  uint64_t seq = 0;
  int64_t intended = 0;
  while (!stop_.load(std::memory_order_relaxed) && queue_->Claim(&seq, &intended)) {
    const int64_t intended_abs = start_ns_ + intended;
    if (!WaitUntil(intended_abs)) {
      stats.abandoned_seq = seq;
      stats.abandoned_intended = intended;
      break;
    }
    // The phase may have ended early since this request was claimed, before
    // its intended time. One relaxed load per request; the queue's lock only
    // once the phase has ended early.
    if (ended_early_.load(std::memory_order_relaxed) && !queue_->BeforeEnd(intended)) break;
    const int64_t t0 = NowNs();
    stats.started.store(stats.started.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
    generator_.Make(seq, &op);
    if (!Execute(op, &key, &value_buf)) {
      stats.errors.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    const int64_t t1 = NowNs();
    stats.latency[op.type].Record(static_cast<uint64_t>(t1 - intended_abs));
    stats.processing[op.type].Record(static_cast<uint64_t>(t1 - t0));
    if (intended >= window_begin_rel_ && intended < window_end_rel_) {
      stats.window_completed.store(stats.window_completed.load(std::memory_order_relaxed) + 1,
                                   std::memory_order_relaxed);
    }
    if (hooks_.on_op) {
      hooks_.on_op({index, seq, op.type, intended, t0 - start_ns_, t1 - start_ns_});
    }
  }
  writers_done_.fetch_add(1);
}

void PhaseRun::QueryLoop(int index) {
  QueryStats& stats = *queries_[index];
  std::string key(generator_.key_size(), '\0');
  std::string value_buf;
  Rng rng(Hash64(config_.seed ^ 0x7175657279, static_cast<uint64_t>(index)));
  // A 64-bit draw below get_threshold is a point lookup, below scan_threshold
  // a scan, otherwise a secondary query.
  const QuerySpec& q = config_.queries;
  auto threshold = [](double share) {
    return share >= 1.0 ? UINT64_MAX : static_cast<uint64_t>(std::ldexp(share, 64));
  };
  const uint64_t get_threshold = threshold(q.get);
  const uint64_t scan_threshold = threshold(q.get + q.scan);
  Op op;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t r = rng.Next();
    const int qtype = r < get_threshold    ? kQueryGet
                      : r < scan_threshold ? kQueryScan
                                           : kQuerySecondary;
    const int64_t t0 = NowNs();
    bool ok = true;
    if (qtype == kQuerySecondary) {
      generator_.MakeSecondaryQuery(q.selectivity, &rng, &op);
      size_t returned = 0;
      Status s = adapter_->QuerySecondary(static_cast<int>(q.field), op.range_low,
                                          op.range_high, &returned);
      if (!s.ok()) {
        RecordError(s);
        ok = false;
      }
    } else {
      generator_.MakeQuery(qtype == kQueryGet ? kRead : kScan, q.scan_length, query_chooser_,
                           &rng, &op);
      ok = Execute(op, &key, &value_buf);
    }
    if (!ok) {
      stats.errors.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    stats.latency[qtype].Record(static_cast<uint64_t>(NowNs() - t0));
  }
}

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

void PhaseRun::Run() {
  auto interval = std::make_unique<IntervalStats>();
  SetUpStats(interval.get());
  Timeline timeline = PlanTimeline();
  StartRecording();
  std::vector<std::thread> threads = StartThreads();
  // The sampler. States: running until the end (or a stop), then, open
  // loop with drain_s > 0, draining: writers finish the requests that
  // arrived before the end, for at most drain_s.
  SleepUntil(start_ns_);
  Sampler sampler;
  sampler.interval_start = start_ns_;
  sampler.interval_end = start_ns_ + timeline.interval_ns;
  sampler.next_progress =
      config_.progress_s > 0 ? start_ns_ + SecondsToNs(config_.progress_s) : INT64_MAX;
  while (!sampler.stopping) {
    bool end_of_running = false;
    const int64_t now = Tick(&timeline, &sampler, &end_of_running);
    if (end_of_running || (sampler.draining ? sampler.stopping
                                            : (now >= sampler.interval_end || sampler.stopping))) {
      CloseInterval(timeline, now, end_of_running, &sampler, interval.get());
    }
  }
  for (auto& t : threads) t.join();
  Finish(timeline, sampler, interval.get());
}

void PhaseRun::SetUpStats(IntervalStats* interval) {
  const int nw = static_cast<int>(config_.threads);
  const int nq = static_cast<int>(config_.queries.threads);
  for (int i = 0; i < nw; i++) {
    writers_.push_back(std::make_unique<WriterStats>());
    for (int t = 0; t < kNumOpTypes; t++) {
      tracked_.push_back({&writers_[i]->latency[t], Histogram(), &interval->latency[t]});
      if (open_loop_) {
        tracked_.push_back({&writers_[i]->processing[t], Histogram(), &interval->processing[t]});
      }
    }
  }
  for (int i = 0; i < nq; i++) {
    queries_.push_back(std::make_unique<QueryStats>());
    for (int q = 0; q < kNumQueryTypes; q++) {
      tracked_.push_back({&queries_[i]->latency[q], Histogram(), &interval->query[q]});
    }
  }
}

PhaseRun::Timeline PhaseRun::PlanTimeline() {
  Timeline tl;
  tl.interval_ns = int64_t{config_.interval_ms} * 1'000'000;
  spin_ns_ = static_cast<int64_t>(config_.spin_us * 1000);
  start_ns_ = hooks_.start_ns > 0 ? hooks_.start_ns : NowNs() + 20'000'000;
  const int64_t duration_ns =
      config_.duration_s > 0 ? SecondsToNs(config_.duration_s) : INT64_MAX / 2;
  tl.end_ns = start_ns_ + duration_ns;  // earlier if the phase is ended early
  tl.drain_ns = open_loop_ ? SecondsToNs(config_.drain_s) : 0;
  // The warm-up ends on an interval boundary so that intervals are either
  // entirely in the window or entirely out of it.
  const int64_t warmup_ns = SecondsToNs(config_.warmup_s);
  const int64_t warmup_intervals = (warmup_ns + tl.interval_ns - 1) / tl.interval_ns;
  tl.window_start_ns = start_ns_ + warmup_intervals * tl.interval_ns;
  window_begin_rel_ = tl.window_start_ns - start_ns_;
  window_end_rel_ = duration_ns;

  const uint64_t max_requests = config_.max_ops > 0 ? config_.max_ops : UINT64_MAX;
  if (config_.phase == Phase::kLoad) {
    seq_limit_ = std::min<uint64_t>(config_.workload.record_count, max_requests);
  } else if (!open_loop_) {
    seq_limit_ = max_requests;
  } else {
    queue_ = std::make_unique<ArrivalQueue>(NewArrivalProcess(config_.arrival, config_.seed),
                                            duration_ns, max_requests);
    counter_ = std::make_unique<ArrivalCounter>(
        NewArrivalProcess(config_.arrival, config_.seed), duration_ns, max_requests);
  }
  return tl;
}

void PhaseRun::StartRecording() {
  result_->open_loop = open_loop_;
  result_->metrics_window_start = adapter_->GetMetrics();
  usable_cpus_ = UsableCpus();
  last_process_ = ReadProcessUsage();
  result_->usable_cpus = usable_cpus_;
  // The window's usage: from its first interval's start to its last one's end.
  result_->process_window_start = result_->process_window_end = last_process_;
}

std::vector<std::thread> PhaseRun::StartThreads() {
  std::vector<std::thread> threads;
  for (int i = 0; i < static_cast<int>(config_.threads); i++) {
    threads.emplace_back([this, i] {
      SleepUntil(start_ns_);
      if (open_loop_) {
        WriterOpenLoop(i);
      } else {
        WriterClosedLoop(i);
      }
    });
  }
  for (int i = 0; i < static_cast<int>(config_.queries.threads); i++) {
    threads.emplace_back([this, i] {
      SleepUntil(start_ns_);
      QueryLoop(i);
    });
  }
  return threads;
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

}  // namespace

void RunPhase(const RunConfig& config, KvAdapter* adapter, const RunHooks& hooks,
              RunResult* result) {
  PhaseRun run(config, adapter, hooks, result);
  run.Run();
}

}  // namespace driver
}  // namespace lsmbench
