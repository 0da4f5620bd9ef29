#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lsm/option_table.h"

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
  const double k = options.key_space_bytes;
  if (!(std::isfinite(k) && k >= 0)) {
    return Status::InvalidArgument("key space must be >= 0 bytes (0: every write is a new key)");
  }
  if (k > 0 && f > 0) {
    return Status::InvalidArgument(
        "an obsolete fraction and a key space are two models of updates: choose one");
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
  if (!(std::isfinite(t.flush_rate) && t.flush_rate >= 0 && std::isfinite(t.merge_rate) &&
        t.merge_rate >= 0)) {
    return Status::InvalidArgument("flush and merge rates must be >= 0 bytes/s (0: no cap)");
  }
  if (!(std::isfinite(t.write_rate) && t.write_rate >= 0) ||
      (t.write_rate > 0 && t.write_rate < t.arrival_rate)) {
    return Status::InvalidArgument("write rate must be >= the arrival rate (0: the same)");
  }
  Status s = CheckOptions(options.engine);  // once: the policy and the scheduler share them
  if (!s.ok()) return s;
  std::unique_ptr<sched::MergeScheduler> scheduler;
  if (t.bandwidth > 0) {
    if (options.engine.merge_scheduler == SchedulerKind::kIdle) {
      return Status::InvalidArgument("scheduler 'idle' is not simulated",
                                     "choose from: single, fair, greedy, greedy_k");
    }
    scheduler = sched::NewCheckedMergeScheduler(options.engine);
  }
  sim->reset(new Simulator(options, policy::NewCheckedMergePolicy(options.engine),
                           std::move(scheduler)));
  return Status::OK();
}

Simulator::Simulator(const SimOptions& options, std::unique_ptr<policy::MergePolicy> policy,
                     std::unique_ptr<sched::MergeScheduler> scheduler)
    : options_(options), policy_(std::move(policy)), scheduler_(std::move(scheduler)) {}

Simulator::~Simulator() = default;

Status Simulator::Load(uint64_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("flush size must be >= 1 byte");
  if (snap_.flushes != load_flushes_ || now_ > 0) {
    return Status::InvalidArgument("the load's flushes come before any other");
  }
  PushFlush(bytes, /*load=*/true);
  Status s = SettleInstant();
  load_flushes_ = snap_.flushes;
  // The run is measured from the loaded tree on.
  bytes_flushed_ = bytes_merged_ = merges_ = moves_ = sstables_sum_ = 0;
  sstables_ = snap_.stack.size();
  max_sstables_ = sstables_;
  return s;
}

Status Simulator::Flush(uint64_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("flush size must be >= 1 byte");
  return scheduler_ ? FlushTimed(bytes) : FlushInstant(bytes);
}

void Simulator::PushFlush(uint64_t bytes, bool load) {
  const double k = options_.key_space_bytes;
  policy::Component c;
  c.id = next_id_++;
  c.level = 0;
  c.bytes = bytes;
  if (k > 0 && !load) {
    const double kept = k * -std::expm1(-static_cast<double>(bytes) / k);
    c.bytes = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(kept)));
  }
  if (k > 0 && load) loaded_only_.insert(c.id);
  c.entries = c.bytes;
  c.flushed_entries = bytes;
  bytes_flushed_ += c.bytes;
  snap_.stack.push_back(std::move(c));
  snap_.flushes++;
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
  uint64_t bytes = 0, entries = 0, flushed = 0;
  std::vector<const policy::Component*> inputs;
  for (size_t k = 0; k < n; ++k) {
    const policy::Component& in = stack[start + k];
    if (in.id != op.inputs[k]) {
      return Status::Corruption(std::string("policy ") + policy_->Name() +
                                " proposed a merge of a non-contiguous run");
    }
    bytes += in.bytes;
    entries += in.entries;
    flushed += std::max(in.flushed_entries, in.entries);
    if (options_.key_space_bytes > 0) inputs.push_back(&in);  // only the key space reads them
  }
  const double key_space = options_.key_space_bytes;
  const bool load_only = key_space > 0 && std::all_of(inputs.begin(), inputs.end(), [&](auto* c) {
                           return IsLoadOnly(c->id);
                         });
  uint64_t out = bytes;
  if (key_space > 0 && !load_only) {
    out = KeySpaceUnion(inputs);
    entries = out;
  } else if (options_.obsolete_fraction > 0) {
    const double keep = 1 - options_.obsolete_fraction;
    out = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bytes * keep)));
    entries = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(entries * keep)));
  }
  // One input is a move, as in the engine (LevelDB's trivial move): the
  // component only changes level; nothing is written.
  const bool moved = n == 1;
  if (moved) {
    out = bytes;
    entries = stack[start].entries;
  }
  policy::Component& c = stack[start];
  c.id = output_id;
  c.level = op.output_level;
  c.bytes = out;
  c.entries = entries;
  c.flushed_entries = flushed;
  c.being_merged = false;
  if (key_space > 0 && load_only) loaded_only_.insert(output_id);
  stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(start + 1),
              stack.begin() + static_cast<std::ptrdiff_t>(start + n));
  const uint64_t written = moved ? 0 : out;
  bytes_merged_ += written;
  merges_++;
  if (moved) moves_++;
  if (observer_) {
    observer_(Decision{snap_.flushes, scheduler_ ? now_ : 0, start, n, bytes, written,
                       op.output_level});
  }
  return Status::OK();
}

bool Simulator::IsLoadOnly(uint64_t id) const { return loaded_only_.count(id) > 0; }

uint64_t Simulator::KeySpaceUnion(const std::vector<const policy::Component*>& inputs) const {
  const double key_space = options_.key_space_bytes;
  double absent = 1;  // the share of keys in none of the inputs
  for (const policy::Component* c : inputs) {
    absent *= 1 - std::min(1.0, static_cast<double>(c->bytes) / key_space);
  }
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(key_space * (1 - absent))));
}

Status Simulator::FlushInstant(uint64_t bytes) {
  PushFlush(bytes);
  return SettleInstant();
}

Status Simulator::SettleInstant() {
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
  for (int round = 0;; ++round) {
    if (round == kMaxRounds) {
      return Status::Corruption(std::string("policy ") + policy_->Name() + " never stops moving");
    }
    bool moved = false;
    Status s = PickRound(&moved);
    if (!s.ok()) return s;
    // A move is done at once (no bytes to write) and may enable another
    // decision, as the engine asks the policy again after every merge.
    if (!moved) break;
  }
  Schedule();
  return Status::OK();
}

Status Simulator::PickRound(bool* moved) {
  for (const policy::MergeOp& op : policy_->PickMerges(snap_)) {
    uint64_t total = 0;
    size_t found = 0;
    std::vector<const policy::Component*> inputs;
    bool load_only = true;
    for (policy::Component& c : snap_.stack) {
      if (std::find(op.inputs.begin(), op.inputs.end(), c.id) == op.inputs.end()) continue;
      if (c.being_merged) {
        return Status::Corruption(std::string("policy ") + policy_->Name() +
                                  " proposed a component already being merged");
      }
      c.being_merged = true;
      total += c.bytes;
      found++;
      if (options_.key_space_bytes > 0) {
        inputs.push_back(&c);
        load_only = load_only && IsLoadOnly(c.id);
      }
    }
    if (found != op.inputs.size() || found == 0) {
      return Status::Corruption(std::string("policy ") + policy_->Name() +
                                " proposed a merge of unknown components");
    }
    if (op.inputs.size() == 1) {
      Status s = Apply(op, next_id_++);
      if (!s.ok()) return s;
      *moved = true;
      continue;
    }
    // The bandwidth is the writes' (the engine's budget and a cgroup write limit both
    // charge writes; the inputs are read from the page cache): with a key space a merge
    // writes only its union, so its input goes by faster than its share of the bandwidth.
    double input_per_written = 1;
    if (options_.key_space_bytes > 0 && !load_only) {
      input_per_written = static_cast<double>(total) /
                          static_cast<double>(std::max<uint64_t>(1, KeySpaceUnion(inputs)));
    }
    inflight_.push_back(Inflight{op, next_merge_id_++, next_id_++, total,
                                 static_cast<double>(total), input_per_written});
  }
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

double Simulator::FlushRate() const {
  if (pending_flushes_.empty()) return 0;
  const double b = options_.time.bandwidth;
  double share = b;
  if (!running_.empty()) {
    switch (options_.time.flush_priority) {
      case FlushPriority::kStrict:
        break;
      case FlushPriority::kAlternate:
        share = b / 2;
        break;
      case FlushPriority::kShared:
        share = b / static_cast<double>(running_.size() + 1);
        break;
    }
  }
  const double cap = options_.time.flush_rate;
  return cap > 0 ? std::min(share, cap) : share;
}

double Simulator::MergeRate() const {
  if (running_.empty()) return 0;
  // What the flush leaves, shared evenly (work-conserving: a flush slower
  // than its share leaves the rest to the merges).
  const double each = (options_.time.bandwidth - FlushRate()) / static_cast<double>(running_.size());
  const double cap = options_.time.merge_rate;
  return std::max(0.0, cap > 0 ? std::min(each, cap) : each);
}

double Simulator::NextEvent() const {
  double best = NextCompletion();
  if (!pending_flushes_.empty()) {
    best = std::min(best, std::max(0.0, pending_flushes_.front().remaining_bytes) / FlushRate());
  }
  return best;
}

double Simulator::NextCompletion() const {
  double best = std::numeric_limits<double>::infinity();
  const double rate = MergeRate();
  if (rate <= 0) return best;
  for (const Inflight& m : inflight_) {
    if (std::find(running_.begin(), running_.end(), m.id) != running_.end()) {
      best = std::min(best, std::max(0.0, m.remaining_bytes) / (rate * m.input_per_written));
    }
  }
  return best;
}

Status Simulator::Advance(double dt) {
  now_ += dt;
  // Rates as they were during dt (completions below change them).
  const double flush_rate = FlushRate(), merge_rate = MergeRate();
  if (merge_rate > 0) {
    for (Inflight& m : inflight_) {
      if (std::find(running_.begin(), running_.end(), m.id) != running_.end()) {
        m.remaining_bytes -= merge_rate * m.input_per_written * dt;
      }
    }
  }
  if (flush_rate > 0) {
    PendingFlush& head = pending_flushes_.front();
    head.remaining_bytes -= flush_rate * dt;
    if (head.remaining_bytes <= kDoneBytes) {
      const uint64_t bytes = head.bytes;
      pending_flushes_.pop_front();
      Status s = CompleteFlush(bytes);
      if (!s.ok()) return s;
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

Status Simulator::CompleteFlush(uint64_t bytes) {
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

Status Simulator::FlushTimed(uint64_t bytes) {
  // Writes arrive at R from time 0; the writer writes them into the memtable
  // at R, or at W > R while it has a backlog (arrivals it could not write
  // during a stall), as the engine's open loop catches up after a stall.
  const double arrival = options_.time.arrival_rate;
  const double write = std::max(options_.time.write_rate, arrival);
  double need = static_cast<double>(bytes);
  while (need > 0) {
    const double next = NextEvent();
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
    const double backlog = arrival * now_ - written_;
    const bool catching_up = write > arrival && backlog > 0;
    const double rate = catching_up ? write : arrival;
    // Until the memtable is full, the backlog is written, or a flush or merge ends.
    const double full = need / rate;
    const double caught_up = catching_up ? backlog / (write - arrival)
                                         : std::numeric_limits<double>::infinity();
    const double dt = std::min({full, caught_up, next});
    if (dt == full) {
      written_ += need;
      need = 0;
    } else {
      written_ += rate * dt;
      need -= rate * dt;
    }
    Status s = Advance(dt);
    if (!s.ok()) return s;
  }
  if (!options_.time.flush_time) {
    max_backlog_s_ = std::max(max_backlog_s_, BacklogSeconds());
    return CompleteFlush(bytes);
  }
  // The full memtable is sealed once a memory component is free (one is the
  // active memtable, the others hold the memtables waiting for or in flush)
  // and the stack is not over the constraint: the engine's writer checks the
  // constraint first, again after every wait, and switches memtables only
  // then. (Sealed over the constraint, a memtable's flush would add one more
  // component while writes are stopped: the first model's limit + 2.)
  const size_t immutable = static_cast<size_t>(std::max(options_.engine.memory_components, 2)) - 1;
  for (;;) {
    const bool over = snap_.stack.size() > Limit();
    const bool memory = pending_flushes_.size() >= immutable;
    if (!over && !memory) break;
    const double next = NextEvent();
    if (!std::isfinite(next)) {
      return Status::Corruption(std::string("policy ") + policy_->Name() +
                                " left the stack over the constraint with no merge running");
    }
    stall_ += next;
    if (!over) memory_stall_ += next;
    Status s = Advance(next);
    if (!s.ok()) return s;
  }
  pending_flushes_.push_back(PendingFlush{bytes, static_cast<double>(bytes)});
  max_backlog_s_ = std::max(max_backlog_s_, BacklogSeconds());
  return Status::OK();
}

double Simulator::BacklogSeconds() const {
  const double arrival = options_.time.arrival_rate;
  return arrival > 0 ? std::max(0.0, arrival * now_ - written_) / arrival : 0.0;
}

Status Simulator::Drain() {
  while (!inflight_.empty() || !pending_flushes_.empty()) {
    const double next = NextEvent();
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
  const uint64_t completed = snap_.flushes - load_flushes_;
  c.flushes = completed + pending_flushes_.size();
  c.bytes_flushed = bytes_flushed_;
  c.bytes_merged = bytes_merged_;
  c.merges = merges_;
  c.moves = moves_;
  c.sstables = sstables_;
  if (bytes_flushed_ > 0) {
    c.write_amp = static_cast<double>(bytes_flushed_ + bytes_merged_) /
                  static_cast<double>(bytes_flushed_);
  }
  if (completed > 0) {
    c.avg_sstables = static_cast<double>(sstables_sum_) / static_cast<double>(completed);
  }
  c.time_s = now_;
  c.stall_s = stall_;
  c.memory_stall_s = memory_stall_;
  c.backlog_s = BacklogSeconds();
  c.max_backlog_s = max_backlog_s_;
  c.flushes_pending = pending_flushes_.size();
  c.max_sstables = max_sstables_;
  return c;
}

}  // namespace lsm::sim
