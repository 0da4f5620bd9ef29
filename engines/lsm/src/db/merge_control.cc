#include "db/merge_control.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "env/io_budget_env.h"

namespace lsm {
namespace {

// LevelDB's write control: past the slowdown count a write waits this long,
// once, so that merges get ahead before writes must stop.
constexpr uint64_t kSlowdownMicros = 1000;

}  // namespace

MergeControl::MergeControl(const Options& options, std::unique_ptr<policy::MergePolicy> policy,
                           std::unique_ptr<sched::MergeScheduler> scheduler, Env* env,
                           std::mutex* mu, Host* host)
    : options_(options),
      policy_(std::move(policy)),
      scheduler_(std::move(scheduler)),
      env_(env),
      mu_(mu),
      host_(host),
      track_writes_(scheduler_->RecheckIntervalMicros() > 0) {}

MergeControl::~MergeControl() {
  {
    std::lock_guard<std::mutex> lock(*mu_);
    if (!shutting_down_) BeginShutdown();
  }
  JoinThreads();
}

// ---------------------------------------------------------------- open

Status MergeControl::CheckStackShape(const std::vector<ComponentPtr>& stack,
                                     const std::string& dir) const {
  return policy_->CheckStackShape(PolicySnapshot(stack, 0), dir);
}

void MergeControl::RestoreCursor(std::vector<std::string> cursor) {
  // Round robin continues where it stopped (LevelDB keeps its compaction
  // pointers the same way): every phase of a benchmark reopens the tree.
  if (policy_->Partitioned()) round_robin_cursor_ = std::move(cursor);
}

void MergeControl::Opened() {
  if (!track_writes_) return;
  SampleWrites();
  timer_thread_ = std::thread([this] { TimerLoop(); });
}

// ---------------------------------------------------------------- decisions

policy::Snapshot MergeControl::PolicySnapshot(const std::vector<ComponentPtr>& stack,
                                              uint64_t flushes) const {
  policy::Snapshot snap;
  snap.flushes = flushes;
  snap.stack.reserve(stack.size());
  for (const ComponentPtr& c : stack) {
    const ComponentMeta& m = c->meta();
    policy::Component pc;
    pc.id = m.number;
    pc.level = m.level;
    pc.bytes = m.file_size;
    pc.entries = m.entries;
    pc.flushed_entries = m.flushed_entries;
    pc.smallest = m.smallest;
    pc.largest = m.largest;
    pc.being_merged = c->being_merged;
    snap.stack.push_back(std::move(pc));
  }
  snap.round_robin_cursor = round_robin_cursor_;
  return snap;
}

void MergeControl::UpdateConstraint(const policy::Snapshot& snap) {
  const bool local = options_.constraint == ConstraintScope::kLocal;
  const int configured = local ? options_.max_components_per_level : options_.max_components;
  const uint64_t limit = configured > 0 ? static_cast<uint64_t>(configured)
                         : local        ? policy_->DefaultMaxComponentsPerLevel()
                                        : policy_->DefaultMaxComponents(snap);
  constraint_.limit = limit;
  const uint64_t slowdown = options_.slowdown_components > 0
                                ? static_cast<uint64_t>(options_.slowdown_components)
                                : std::max<uint64_t>(1, limit * 2 / 3);
  // All components, or the fullest level (a partitioned level counts once).
  const uint64_t count = policy_->ConstrainedCount(snap, local);
  constraint_.count = count;
  constraint_.exceeded = count > limit;
  constraint_.pressure = constraint_.exceeded || count + 1 >= limit;
  constraint_.slowdown = options_.write_control == WriteControl::kSlowdown && count > slowdown;
}

MergeControl::WriteAdmission MergeControl::AdmitWrite(bool flush_pending) const {
  WriteAdmission admission;
  // The component constraint: writes stop (not slow down: the paper's
  // Theorem 1) until merges bring the count back. With no merge or flush to
  // wait for, waiting would never end: writes go on over the constraint.
  admission.stop = constraint_.exceeded && (!merges_.empty() || flush_pending);
  if (constraint_.slowdown) admission.slowdown_micros = kSlowdownMicros;
  return admission;
}

uint64_t MergeControl::ComponentsAfterMerges(uint64_t components) const {
  for (const auto& job : merges_) {
    components -= std::min<uint64_t>(components, job->inputs().size() - 1);
  }
  return components;
}

bool MergeControl::StackInstalled(const std::vector<ComponentPtr>& stack, uint64_t flushes) {
  policy::Snapshot snap = PolicySnapshot(stack, flushes);
  UpdateConstraint(snap);
  if (shutting_down_ || host_->HasBackgroundError()) return false;
  for (const policy::MergeOp& op : policy_->PickMerges(snap)) {
    std::vector<ComponentPtr> inputs;
    // A policy bug must not corrupt the tree.
    if (!ResolveMergeInputs(stack, op, &inputs)) {
      std::fprintf(stderr, "lsm: policy %s proposed an invalid merge; ignored\n", policy_->Name());
      continue;
    }
    for (const ComponentPtr& c : inputs) c->being_merged = true;
    // Round robin: the next merge from this level starts after this file.
    const int source_level = op.output_level - 1;
    if (policy_->Partitioned() && source_level >= 1) {
      const size_t level = static_cast<size_t>(source_level);
      if (round_robin_cursor_.size() <= level) round_robin_cursor_.resize(level + 1);
      for (const ComponentPtr& c : inputs) {
        if (c->meta().level == source_level) round_robin_cursor_[level] = c->meta().largest;
      }
    }
    StartMerge(std::make_shared<MergeJob>(next_merge_id_++, std::move(inputs), op.output_level,
                                          op.max_output_bytes, op.score));
  }
  for (const auto& job : merges_) {
    const double urgency = policy_->Urgency(snap, job->output_level());
    if (urgency >= 0) job->set_score(urgency);
  }
  Reschedule();
  JoinFinishedMergeThreads();
  return true;
}

bool MergeControl::ResolveMergeInputs(const std::vector<ComponentPtr>& stack,
                                      const policy::MergeOp& op,
                                      std::vector<ComponentPtr>* inputs) const {
  if (op.inputs.empty()) return false;
  // Inputs are listed in stack order; stack policies need one contiguous
  // run (its output takes the run's place), partitioned ones any subset.
  size_t next = 0;
  for (size_t pos = 0; pos < stack.size() && next < op.inputs.size(); pos++) {
    if (stack[pos]->meta().number != op.inputs[next]) {
      if (next > 0 && !policy_->Partitioned()) return false;
      continue;
    }
    if (stack[pos]->being_merged) return false;
    inputs->push_back(stack[pos]);
    next++;
  }
  return next == op.inputs.size();
}

// ---------------------------------------------------------------- running

void MergeControl::StartMerge(std::shared_ptr<MergeJob> job) {
  job->Pause();  // until the scheduler selects it
  merges_.push_back(job);
  merge_threads_.emplace(job->id(), std::thread([this, job] { MergeThread(job); }));
}

void MergeControl::Reschedule() {
  std::vector<sched::MergeState> states;
  states.reserve(merges_.size());
  for (const auto& job : merges_) {
    // A move reads and writes nothing: the scheduler sees no bytes left to
    // merge. Shown its whole input instead, greedy held a full level's move
    // down back behind every smaller merge into the level above, for as
    // long as those kept coming.
    const uint64_t remaining = job->is_move() ? 0 : job->RemainingInputBytes();
    states.push_back({job->id(), remaining, job->total_input_bytes(), job->output_level(),
                      job->score(), !job->paused()});
  }
  std::vector<uint64_t> running = scheduler_->SelectRunning(states, MakeSchedulerContext());
  auto selected = [&](const std::shared_ptr<MergeJob>& job) {
    return std::find(running.begin(), running.end(), job->id()) != running.end();
  };
  // GetStats reads the jobs' states without mu_ and must never see more
  // running than the scheduler allows (it saw greedy_k's k + 1): pauses
  // first, then the list GetStats reads changes (a new job is not paused
  // until now; a finished one leaves), then resumes.
  for (const auto& job : merges_) {
    if (!selected(job)) job->Pause();
  }
  {
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    stats_merges_ = merges_;
  }
  for (const auto& job : merges_) {
    if (selected(job)) job->Resume();
  }
}

sched::SchedulerContext MergeControl::MakeSchedulerContext() const {
  sched::SchedulerContext context;
  context.constraint_pressure = constraint_.pressure;
  if (!track_writes_) return context;
  const uint64_t now = env_->NowMicros();
  // The rate since the window's start sample: the newest one at least a
  // window old (or the oldest there is, shortly after Open).
  const uint64_t bytes = host_->UserBytesWritten();
  if (!write_samples_.empty()) {
    const WriteSample& base = write_samples_.front();
    if (now > base.micros) {
      context.client_write_bytes_per_sec = static_cast<double>(bytes - base.user_bytes) * 1e6 /
                                            static_cast<double>(now - base.micros);
    }
  }
  // The last write is known to the timer's precision, from the counter
  // moving between samples: a clock read per write measured 26 ns, 7 % of a
  // WAL-less put. A write since the newest sample counts as just now.
  if (!write_samples_.empty() && bytes != write_samples_.back().user_bytes) {
    context.micros_since_last_write = 0;
  } else if (last_write_micros_ != 0) {
    context.micros_since_last_write = now > last_write_micros_ ? now - last_write_micros_ : 0;
  }
  return context;
}

void MergeControl::SampleWrites() {
  const uint64_t now = env_->NowMicros();
  const uint64_t bytes = host_->UserBytesWritten();
  if (!write_samples_.empty() && bytes != write_samples_.back().user_bytes) {
    last_write_micros_ = now;
  }
  write_samples_.push_back({now, bytes});
  const uint64_t window = scheduler_->ProbeWindowMicros();
  while (write_samples_.size() >= 2 && write_samples_[1].micros + window <= now) {
    write_samples_.pop_front();
  }
}

void MergeControl::TimerLoop() {
  const std::chrono::microseconds interval(scheduler_->RecheckIntervalMicros());
  std::unique_lock<std::mutex> lock(*mu_);
  while (!shutting_down_) {
    timer_cv_.wait_for(lock, interval);  // an early wakeup only re-decides sooner
    if (shutting_down_) break;
    SampleWrites();
    if (!merges_.empty() && !host_->HasBackgroundError()) Reschedule();
  }
}

void MergeControl::JoinFinishedMergeThreads() {
  // A finished thread only has to return: joining it cannot wait on mu_.
  for (std::thread& t : finished_merge_threads_) t.join();
  finished_merge_threads_.clear();
}

void MergeControl::MergeThread(const std::shared_ptr<MergeJob>& job) {
  // The budget tells merges from flushes by the thread's I/O priority.
  SetThreadIoPriority(IoPriority::kMerge);
  Status s =
      job->WaitWhilePaused() ? host_->RunMerge(job.get()) : Status::IOError("merge cancelled");
  std::lock_guard<std::mutex> lock(*mu_);
  merges_.erase(std::find(merges_.begin(), merges_.end(), job));
  if (!s.ok()) {
    for (const ComponentPtr& c : job->inputs()) c->being_merged = false;
  }
  auto self = merge_threads_.find(job->id());
  if (self != merge_threads_.end()) {  // else JoinThreads joins it
    finished_merge_threads_.push_back(std::move(self->second));
    merge_threads_.erase(self);
  }
  if (!shutting_down_) Reschedule();
  // A merge cancelled by shutdown is no error.
  host_->MergeEnded(shutting_down_ ? Status::OK() : s);
}

// ---------------------------------------------------------------- stats and shutdown

void MergeControl::AddMergeStats(Stats* stats) const {
  std::lock_guard<std::mutex> stats_lock(stats_mu_);
  auto count_at = [](std::vector<uint64_t>* per_level, int level) {
    const size_t i = static_cast<size_t>(std::max(level, 0));
    if (per_level->size() <= i) per_level->resize(i + 1, 0);
    ++(*per_level)[i];
  };
  for (const auto& job : stats_merges_) {
    if (job->paused()) {
      stats->merges_pending++;
      count_at(&stats->merges_pending_per_level, job->output_level());
    } else {
      stats->merges_running++;
      count_at(&stats->merges_running_per_level, job->output_level());
      stats->merge_remaining_input_bytes.push_back(job->RemainingInputBytes());
    }
  }
}

void MergeControl::BeginShutdown() {
  shutting_down_ = true;
  // Merges stop at their next block boundary; their inputs stay.
  for (auto& job : merges_) job->Cancel();
  timer_cv_.notify_all();
  for (std::thread& t : finished_merge_threads_) shutdown_threads_.push_back(std::move(t));
  finished_merge_threads_.clear();
  for (auto& [id, thread] : merge_threads_) shutdown_threads_.push_back(std::move(thread));
  merge_threads_.clear();
}

void MergeControl::JoinThreads() {
  if (timer_thread_.joinable()) timer_thread_.join();
  for (std::thread& t : shutdown_threads_) t.join();
  shutdown_threads_.clear();
}

}  // namespace lsm
