#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lsm::sim {

namespace {

// A policy that keeps proposing merges after a flush is broken.
constexpr int kMaxRounds = 100000;

// Completion slack for the floating-point progress of a timed merge.
constexpr double kDoneBytes = 1e-6;

}  // namespace

Status Simulator::Create(const SimOptions& options, std::unique_ptr<Simulator>* sim) {
  sim->reset();
  const double f = options.obsolete_fraction;
  if (!(f >= 0 && f < 1)) {
    return Status::InvalidArgument("obsolete fraction must be in [0, 1)",
                                   "got " + std::to_string(f));
  }
  const TimeModel& t = options.time;
  if (!(std::isfinite(t.bandwidth) && t.bandwidth >= 0)) {
    return Status::InvalidArgument("bandwidth must be >= 0 bytes/s (0: instant merges)");
  }
  if (t.bandwidth > 0 && !(std::isfinite(t.arrival_rate) && t.arrival_rate > 0)) {
    return Status::InvalidArgument("arrival rate must be > 0 bytes/s with a bandwidth");
  }
  if (t.bandwidth == 0 && t.arrival_rate != 0) {
    return Status::InvalidArgument("arrival rate needs a bandwidth (the timed model)");
  }
  std::unique_ptr<policy::MergePolicy> policy;
  Status s = policy::NewMergePolicy(options.engine, &policy);
  if (!s.ok()) return s;
  std::unique_ptr<sched::MergeScheduler> scheduler;
  if (t.bandwidth > 0) {
    if (options.engine.merge_scheduler == SchedulerKind::kIdle) {
      return Status::InvalidArgument("scheduler 'idle' is not simulated",
                                     "choose from: single, fair, greedy, greedy_k");
    }
    s = sched::NewMergeScheduler(options.engine, &scheduler);
    if (!s.ok()) return s;
  }
  sim->reset(new Simulator(options, std::move(policy), std::move(scheduler)));
  return Status::OK();
}

Simulator::Simulator(const SimOptions& options, std::unique_ptr<policy::MergePolicy> policy,
                     std::unique_ptr<sched::MergeScheduler> scheduler)
    : options_(options), policy_(std::move(policy)), scheduler_(std::move(scheduler)) {}

Simulator::~Simulator() = default;

Status Simulator::Flush(uint64_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("flush size must be >= 1 byte");
  return scheduler_ ? FlushTimed(bytes) : FlushInstant(bytes);
}

void Simulator::PushFlush(uint64_t bytes) {
  policy::Component c;
  c.id = next_id_++;
  c.level = 0;
  c.bytes = bytes;
  c.entries = bytes;
  snap_.stack.push_back(std::move(c));
  snap_.flushes++;
  bytes_flushed_ += bytes;
  max_sstables_ = std::max<uint64_t>(max_sstables_, snap_.stack.size());
}

void Simulator::RecordFlush(uint64_t settled) {
  sstables_ = settled;
  sstables_sum_ += settled;
}

Status Simulator::Apply(const policy::MergeOp& op, uint64_t output_id) {
  std::vector<policy::Component>& stack = snap_.stack;
  size_t start = stack.size();
  // Merges are mostly near the top: search from the newest end.
  for (size_t i = stack.size(); i > 0 && !op.inputs.empty(); --i) {
    if (stack[i - 1].id == op.inputs.front()) {
      start = i - 1;
      break;
    }
  }
  const size_t n = op.inputs.size();
  if (start == stack.size() || start + n > stack.size()) {
    return Status::Corruption(std::string("policy ") + policy_->Name() +
                              " proposed a merge of unknown components");
  }
  uint64_t bytes = 0, entries = 0;
  for (size_t k = 0; k < n; ++k) {
    if (stack[start + k].id != op.inputs[k]) {
      return Status::Corruption(std::string("policy ") + policy_->Name() +
                                " proposed a merge of a non-contiguous run");
    }
    bytes += stack[start + k].bytes;
    entries += stack[start + k].entries;
  }
  uint64_t out = bytes;
  if (options_.obsolete_fraction > 0) {
    const double keep = 1 - options_.obsolete_fraction;
    out = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bytes * keep)));
    entries = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(entries * keep)));
  }
  policy::Component& c = stack[start];
  c.id = output_id;
  c.level = op.output_level;
  c.bytes = out;
  c.entries = entries;
  c.being_merged = false;
  stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(start + 1),
              stack.begin() + static_cast<std::ptrdiff_t>(start + n));
  bytes_merged_ += out;
  merges_++;
  if (observer_) {
    observer_(Decision{snap_.flushes, scheduler_ ? now_ : 0, start, n, bytes, out});
  }
  return Status::OK();
}

Status Simulator::FlushInstant(uint64_t bytes) {
  PushFlush(bytes);
  for (int round = 0;; ++round) {
    if (round == kMaxRounds) {
      return Status::Corruption(std::string("policy ") + policy_->Name() + " never stops merging");
    }
    const std::vector<policy::MergeOp> ops = policy_->PickMerges(snap_);
    if (ops.empty()) break;
    for (const policy::MergeOp& op : ops) {
      Status s = Apply(op, next_id_++);
      if (!s.ok()) return s;
    }
  }
  RecordFlush(snap_.stack.size());
  return Status::OK();
}

// ------------------------------------------------------------ timed model

uint64_t Simulator::Limit() const {
  return options_.engine.max_components > 0 ? static_cast<uint64_t>(options_.engine.max_components)
                                          : policy_->DefaultMaxComponents(snap_);
}

Status Simulator::PickTimed() {
  for (const policy::MergeOp& op : policy_->PickMerges(snap_)) {
    uint64_t total = 0;
    size_t found = 0;
    for (policy::Component& c : snap_.stack) {
      if (std::find(op.inputs.begin(), op.inputs.end(), c.id) == op.inputs.end()) continue;
      if (c.being_merged) {
        return Status::Corruption(std::string("policy ") + policy_->Name() +
                                  " proposed a component already being merged");
      }
      c.being_merged = true;
      total += c.bytes;
      found++;
    }
    if (found != op.inputs.size() || found == 0) {
      return Status::Corruption(std::string("policy ") + policy_->Name() +
                                " proposed a merge of unknown components");
    }
    inflight_.push_back(
        Inflight{op, next_merge_id_++, next_id_++, total, static_cast<double>(total)});
  }
  Schedule();
  return Status::OK();
}

void Simulator::Schedule() {
  std::vector<sched::MergeState> states;
  states.reserve(inflight_.size());
  for (const Inflight& m : inflight_) {
    states.push_back({m.id, static_cast<uint64_t>(std::ceil(m.remaining_bytes)), m.total_bytes,
                      m.op.output_level});
  }
  sched::SchedulerContext context;
  context.constraint_pressure = snap_.stack.size() + 1 >= Limit();
  running_ = scheduler_->SelectRunning(states, context);
}

double Simulator::NextCompletion() const {
  double best = std::numeric_limits<double>::infinity();
  if (running_.empty()) return best;
  const double rate = options_.time.bandwidth / static_cast<double>(running_.size());
  for (const Inflight& m : inflight_) {
    if (std::find(running_.begin(), running_.end(), m.id) != running_.end()) {
      best = std::min(best, std::max(0.0, m.remaining_bytes) / rate);
    }
  }
  return best;
}

Status Simulator::Advance(double dt) {
  now_ += dt;
  if (running_.empty()) return Status::OK();
  const double rate = options_.time.bandwidth / static_cast<double>(running_.size());
  for (Inflight& m : inflight_) {
    if (std::find(running_.begin(), running_.end(), m.id) != running_.end()) {
      m.remaining_bytes -= rate * dt;
    }
  }
  // Complete what is done, oldest first; each completion asks the policy
  // again, as the engine does.
  for (;;) {
    auto done = std::find_if(inflight_.begin(), inflight_.end(), [&](const Inflight& m) {
      return m.remaining_bytes <= kDoneBytes &&
             std::find(running_.begin(), running_.end(), m.id) != running_.end();
    });
    if (done == inflight_.end()) break;
    const Inflight m = *done;
    inflight_.erase(done);
    Status s = Apply(m.op, m.output_id);
    if (!s.ok()) return s;
    s = PickTimed();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status Simulator::FlushTimed(uint64_t bytes) {
  double need = static_cast<double>(bytes) / options_.time.arrival_rate;
  while (need > 0) {
    const double next = NextCompletion();
    if (snap_.stack.size() > Limit()) {
      // Writes stop until a merge brings the count back under the constraint.
      if (!std::isfinite(next)) {
        return Status::Corruption(std::string("policy ") + policy_->Name() +
                                  " left the stack over the constraint with no merge running");
      }
      stall_ += next;
      Status s = Advance(next);
      if (!s.ok()) return s;
      continue;
    }
    const double dt = std::min(need, next);
    need -= dt;
    Status s = Advance(dt);
    if (!s.ok()) return s;
  }
  PushFlush(bytes);
  Status s = PickTimed();
  if (!s.ok()) return s;
  uint64_t settled = snap_.stack.size();
  for (const Inflight& m : inflight_) {
    settled -= std::min<uint64_t>(settled, m.op.inputs.size() - 1);
  }
  RecordFlush(settled);
  return Status::OK();
}

Status Simulator::Drain() {
  while (!inflight_.empty()) {
    const double next = NextCompletion();
    if (!std::isfinite(next)) {
      return Status::Corruption("the scheduler runs none of the merges in flight");
    }
    Status s = Advance(next);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Checkpoint Simulator::Now() const {
  Checkpoint c;
  c.flushes = snap_.flushes;
  c.bytes_flushed = bytes_flushed_;
  c.bytes_merged = bytes_merged_;
  c.merges = merges_;
  c.sstables = sstables_;
  if (bytes_flushed_ > 0) {
    c.write_amp = static_cast<double>(bytes_flushed_ + bytes_merged_) /
                  static_cast<double>(bytes_flushed_);
  }
  if (c.flushes > 0) {
    c.avg_sstables = static_cast<double>(sstables_sum_) / static_cast<double>(c.flushes);
  }
  c.time_s = now_;
  c.stall_s = stall_;
  c.max_sstables = max_sstables_;
  return c;
}

}  // namespace lsm::sim
