// DBImpl, merges: the policy's decisions become merge jobs, the scheduler
// decides which run, and a completed merge installs its outputs. The rest of
// DBImpl is in db_impl.cc.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "db/db_impl.h"
#include "db/merging_iterator.h"
#include "env/io_budget_env.h"

namespace lsm {

policy::Snapshot DBImpl::PolicySnapshot() const {
  policy::Snapshot snap;
  snap.flushes = counters_.flushes.load(std::memory_order_relaxed);
  snap.stack.reserve(version_->stack.size());
  for (const ComponentPtr& c : version_->stack) {
    const ComponentMeta& m = c->meta();
    policy::Component pc;
    pc.id = m.number;
    pc.level = m.level;
    pc.bytes = m.file_size;
    pc.entries = m.entries;
    pc.smallest = m.smallest;
    pc.largest = m.largest;
    pc.being_merged = c->being_merged;
    snap.stack.push_back(std::move(pc));
  }
  snap.round_robin_cursor = round_robin_cursor_;
  return snap;
}

void DBImpl::UpdateConstraint(const policy::Snapshot& snap) {
  const bool local = options_.constraint == "local";
  const uint64_t limit =
      !local                                ? (options_.max_components > 0
                                                   ? static_cast<uint64_t>(options_.max_components)
                                                   : policy_->DefaultMaxComponents(snap))
      : options_.max_components_per_level > 0 ? static_cast<uint64_t>(options_.max_components_per_level)
                                              : policy_->DefaultMaxComponentsPerLevel();
  max_components_ = limit;
  const uint64_t slowdown = options_.slowdown_components > 0
                                ? static_cast<uint64_t>(options_.slowdown_components)
                                : std::max<uint64_t>(1, limit * 2 / 3);
  // All components, or the fullest level (a partitioned level counts once).
  const uint64_t count = policy_->ConstrainedCount(snap, local);
  constrained_count_ = count;
  constraint_exceeded_ = count > limit;
  constraint_pressure_ = constraint_exceeded_ || count + 1 >= limit;
  slowdown_exceeded_ = options_.write_control == "slowdown" && count > slowdown;
}

void DBImpl::ScheduleMerges() {
  policy::Snapshot snap = PolicySnapshot();
  UpdateConstraint(snap);
  if (shutting_down_ || !bg_error_.ok()) return;
  for (const policy::MergeOp& op : policy_->PickMerges(snap)) {
    std::vector<ComponentPtr> inputs;
    // A policy bug must not corrupt the tree.
    if (!ResolveMergeInputs(op, &inputs)) {
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
  Reschedule();
  JoinFinishedMergeThreads();
  UpdateComponentStats();
}

bool DBImpl::ResolveMergeInputs(const policy::MergeOp& op,
                                std::vector<ComponentPtr>* inputs) const {
  const auto& stack = version_->stack;
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

void DBImpl::StartMerge(std::shared_ptr<MergeJob> job) {
  job->Pause();  // until the scheduler selects it
  merges_.push_back(job);
  merge_threads_.emplace(job->id(), std::thread([this, job] { MergeThread(job); }));
}

void DBImpl::Reschedule() {
  std::vector<sched::MergeState> states;
  states.reserve(merges_.size());
  for (const auto& job : merges_) {
    states.push_back({job->id(), job->RemainingInputBytes(), job->total_input_bytes(),
                      job->output_level(), job->score(), !job->paused()});
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

sched::SchedulerContext DBImpl::MakeSchedulerContext() const {
  sched::SchedulerContext context;
  context.constraint_pressure = constraint_pressure_;
  if (!track_writes_) return context;
  const uint64_t now = env_->NowMicros();
  // The rate since the window's start sample: the newest one at least a
  // window old (or the oldest there is, shortly after Open).
  const uint64_t bytes = counters_.user_bytes.load(std::memory_order_relaxed);
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

void DBImpl::SampleWrites() {
  const uint64_t now = env_->NowMicros();
  const uint64_t bytes = counters_.user_bytes.load(std::memory_order_relaxed);
  if (!write_samples_.empty() && bytes != write_samples_.back().user_bytes) {
    last_write_micros_ = now;
  }
  write_samples_.push_back({now, bytes});
  const uint64_t window = scheduler_->ProbeWindowMicros();
  while (write_samples_.size() >= 2 && write_samples_[1].micros + window <= now) {
    write_samples_.pop_front();
  }
}

void DBImpl::TimerLoop() {
  const std::chrono::microseconds interval(scheduler_->RecheckIntervalMicros());
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    timer_cv_.wait_for(lock, interval);  // an early wakeup only re-decides sooner
    if (shutting_down_) break;
    SampleWrites();
    if (!merges_.empty() && bg_error_.ok()) Reschedule();
  }
}

void DBImpl::JoinFinishedMergeThreads() {
  // A finished thread only has to return: joining it cannot wait on mu_.
  for (std::thread& t : finished_merge_threads_) t.join();
  finished_merge_threads_.clear();
}

void DBImpl::MergeThread(const std::shared_ptr<MergeJob>& job) {
  // The budget tells merges from flushes by the thread's I/O priority.
  SetThreadIoPriority(IoPriority::kMerge);
  Status s = job->WaitWhilePaused() ? RunMerge(job.get()) : Status::IOError("merge cancelled");
  std::lock_guard<std::mutex> lock(mu_);
  merges_.erase(std::find(merges_.begin(), merges_.end(), job));
  if (!s.ok()) {
    for (const ComponentPtr& c : job->inputs()) c->being_merged = false;
    if (!shutting_down_) SetBackgroundError(s);
  }
  auto self = merge_threads_.find(job->id());
  if (self != merge_threads_.end()) {  // else the destructor joins it
    finished_merge_threads_.push_back(std::move(self->second));
    merge_threads_.erase(self);
  }
  if (!shutting_down_) Reschedule();
  UpdateComponentStats();
  bg_cv_.notify_all();
}

Status DBImpl::RunMerge(MergeJob* job) {
  std::shared_ptr<const Version> base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = version_;
  }
  const auto& inputs = job->inputs();
  const bool moved = inputs.size() == 1;
  std::vector<ComponentPtr> outputs;
  Status s;
  if (moved) {
    // A component moving down into an empty level (or, partitioned, into a
    // key range of the next level that no file covers): the data stays as
    // it is, only its level changes (LevelDB's trivial move).
    ComponentMeta meta = inputs.front()->meta();
    meta.level = job->output_level();
    ComponentPtr output;
    s = OpenComponent(meta, &output);
    if (s.ok()) outputs.push_back(std::move(output));
    job->SetConsumedBytes(job->total_input_bytes());
  } else {
    // Everything older than the inputs could still hold a deleted key.
    // Partitioned stacks keep each level's files together, deepest level
    // first, so the older data is before the first input there as well
    // (files of the inputs' own levels that sit before it hold other keys).
    auto first = std::find(base->stack.begin(), base->stack.end(), inputs.front());
    std::vector<ComponentPtr> older(base->stack.begin(), first);
    std::vector<std::unique_ptr<InternalIterator>> children;
    uint64_t entries = 0;
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
      children.push_back((*it)->table().NewIterator());  // newest first
      entries += (*it)->meta().entries;
    }
    std::unique_ptr<InternalIterator> merged = NewMergingIterator(std::move(children));
    s = BuildComponents(merged.get(), entries, job->output_level(), job->max_output_bytes(),
                        MakeDropTombstone(std::move(older)), job, &outputs);
  }
  if (!s.ok()) return s;

  std::lock_guard<std::mutex> manifest_lock(manifest_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  std::vector<ComponentPtr> stack;
  std::vector<ComponentMeta> added;
  for (const ComponentPtr& c : version_->stack) {
    if (c == inputs.front()) {
      for (const ComponentPtr& output : outputs) {
        stack.push_back(output);
        added.push_back(output->meta());
      }
    }
    if (std::find(inputs.begin(), inputs.end(), c) == inputs.end()) stack.push_back(c);
  }
  if (policy_->Partitioned()) SortByLevelBlock(&stack);
  s = LogAndApply(lock, std::move(stack), std::move(added), nullptr);
  if (!s.ok()) {
    if (!moved) {
      for (const ComponentPtr& output : outputs) output->MarkObsolete();
    }
    return s;
  }
  counters_.merges.fetch_add(1, std::memory_order_relaxed);
  if (!moved) {
    counters_.merge_bytes_read.fetch_add(job->total_input_bytes(), std::memory_order_relaxed);
    uint64_t written = 0;
    for (const ComponentPtr& output : outputs) written += output->meta().file_size;
    counters_.merge_bytes_written.fetch_add(written, std::memory_order_relaxed);
  }
  ScheduleMerges();
  return Status::OK();
}

void DBImpl::SortByLevelBlock(std::vector<ComponentPtr>* stack) {
  // Deepest level first. Stable, so level 0 keeps its age order (only
  // flushes make level-0 files); within a level >= 1 the files hold disjoint
  // key ranges, so their order does not matter.
  std::stable_sort(stack->begin(), stack->end(), [](const ComponentPtr& a, const ComponentPtr& b) {
    return a->meta().level > b->meta().level;
  });
}

}  // namespace lsm
