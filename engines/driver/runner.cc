#include "driver/runner.h"

#include <immintrin.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>

#include "driver/phase_run.h"

namespace lsmbench {
namespace driver {

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
  for (int t = 0; t < kNumOpTypes; t++) {
    if (!IsWrite(t)) continue;
    out->Merge(processing_only ? processing[t] : latency[t]);
  }
}

namespace phase_internal {

// The writers' and queries' hot paths are `inline`: defined and used only in this file, they
// are then as free to inline and specialize as file-local code, which they were before the
// runner was split in three (bench-driver.sh: without it the open-loop ceiling was ~5 %
// lower, engines/BENCHMARKS.md).

void PhaseRun::TraceEnded() {
  // Only a replayed trace runs out of operations; a read error fails the phase.
  const Status s = generator_.status();
  if (!s.ok()) RecordError(s);
}

void PhaseRun::RecordError(const Status& s) {
  std::lock_guard<std::mutex> l(error_mu_);
  if (result_->error.ok()) result_->error = s;
  failed_.store(true, std::memory_order_relaxed);
}

inline bool PhaseRun::Execute(const Op& op, std::string* key_buf, std::string* value_buf) {
  const std::string* key = key_buf;
  if (op.has_raw_key) {
    key = &op.raw_key;  // a replayed trace's key
  } else {
    generator_.FormatKey(op.id, key_buf->data());
  }
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
    case kReadModifyWrite:
      s = adapter_->Get(*key, value_buf);
      if (s.ok() || s.IsNotFound()) {
        s = records_ ? adapter_->PutRecord(*key, op.fields, op.value)
                     : adapter_->Put(*key, op.value);
      }
      break;
  }
  if (!s.ok()) {
    RecordError(s);
    return false;
  }
  return true;
}

inline bool PhaseRun::WaitUntil(int64_t target_ns) {
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

inline void PhaseRun::WriterClosedLoop(int index) {
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
      } else if (!generator_.Make(seq, &op)) {
        TraceEnded();
        break;
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

inline void PhaseRun::WriterOpenLoop(int index) {
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
    if (!generator_.Make(seq, &op)) {
      TraceEnded();
      break;
    }
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

inline void PhaseRun::QueryLoop(int index) {
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
  int64_t duration_ns = config_.duration_s > 0 ? SecondsToNs(config_.duration_s) : INT64_MAX / 2;
  const ArrivalSpec& arrival = config_.arrival;
  if (open_loop_ && arrival.process == ArrivalSpec::Process::kReplay && arrival.replay &&
      !arrival.replay_repeat) {
    // A replay ends with its trace (just after its last op's time): the window
    // is the trace's, not the time the phase would have waited beyond it.
    const double end_s = static_cast<double>(arrival.replay->span_us) / 1e6 / arrival.ReplaySpeed();
    duration_ns = std::min(duration_ns, SecondsToNs(end_s + 1e-3));
  }
  tl.end_ns = start_ns_ + duration_ns;  // earlier if the phase is ended early
  tl.drain_ns = open_loop_ ? SecondsToNs(config_.drain_s) : 0;
  // The warm-up ends on an interval boundary so that intervals are either
  // entirely in the window or entirely out of it.
  const int64_t warmup_ns = SecondsToNs(config_.warmup_s);
  const int64_t warmup_intervals = (warmup_ns + tl.interval_ns - 1) / tl.interval_ns;
  tl.window_start_ns = start_ns_ + warmup_intervals * tl.interval_ns;
  window_begin_rel_ = tl.window_start_ns - start_ns_;
  window_end_rel_ = duration_ns;

  uint64_t max_requests = config_.max_ops > 0 ? config_.max_ops : UINT64_MAX;
  if (config_.workload.trace && !config_.workload.rocksdb_trace_repeat &&
      config_.phase != Phase::kLoad) {
    max_requests = std::min(max_requests, config_.workload.trace->ops);  // a replay ends with it
  }
  generator_.SetStop(&stop_);
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

}  // namespace phase_internal

void RunPhase(const RunConfig& config, KvAdapter* adapter, const RunHooks& hooks,
              RunResult* result) {
  phase_internal::PhaseRun run(config, adapter, hooks, result);
  run.Run();
}

}  // namespace driver
}  // namespace lsmbench
