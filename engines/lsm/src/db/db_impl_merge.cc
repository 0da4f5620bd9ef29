// DBImpl, merges: MergeControl decides which merges exist and run; DBImpl,
// its host, builds and installs their outputs and tells it when the stack
// changed. The rest of DBImpl is in db_impl.cc.
#include <algorithm>

#include "db/db_impl.h"
#include "db/merging_iterator.h"

namespace lsm {

void DBImpl::ScheduleMerges() {
  const uint64_t flushes = counters_.flushes.load(std::memory_order_relaxed);
  // Halted merges (shutdown, a background error) leave the stats as the
  // install left them.
  if (merge_control_->StackInstalled(version_->stack, flushes)) UpdateComponentStats();
}

void DBImpl::MergeEnded(const Status& s) {
  if (!s.ok()) SetBackgroundError(s);
  UpdateComponentStats();
  bg_cv_.notify_all();
}

Status DBImpl::RunMerge(MergeJob* job) {
  MergeInfo info;
  info.start_micros = env_->NowMicros();
  std::shared_ptr<const Version> base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = version_;
  }
  const auto& inputs = job->inputs();
  const bool moved = job->is_move();
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
    uint64_t entries = 0, flushed_entries = 0;
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
      children.push_back((*it)->table().NewIterator());  // newest first
      const ComponentMeta& m = (*it)->meta();
      entries += m.entries;
      flushed_entries += std::max(m.flushed_entries, m.entries);
    }
    std::unique_ptr<InternalIterator> merged = NewMergingIterator(std::move(children));
    s = BuildComponents(merged.get(), entries, flushed_entries, job->output_level(),
                        job->max_output_bytes(), MakeDropTombstone(std::move(older)), job,
                        &outputs);
  }
  if (!s.ok()) return s;

  std::unique_lock<std::mutex> manifest_lock(manifest_mu_);
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
  if (merge_control_->partitioned()) SortByLevelBlock(&stack);
  s = LogAndApply(lock, std::move(stack), std::move(added), nullptr);
  // The outputs' files stay even so: the edit may have reached the manifest
  // (its sync failed, say), and then the next open installs them. That open
  // removes whichever files its manifest does not name.
  if (!s.ok()) return s;
  counters_.merges.fetch_add(1, std::memory_order_relaxed);
  info.output_level = job->output_level();
  info.inputs = inputs.size();
  info.input_bytes = job->total_input_bytes();
  info.moved = moved;
  for (const ComponentPtr& c : inputs) {
    info.deepest_input_level = std::max(info.deepest_input_level, c->meta().level);
    info.entries += c->meta().entries;
  }
  if (!moved) {
    counters_.merge_bytes_read.fetch_add(job->total_input_bytes(), std::memory_order_relaxed);
    for (const ComponentPtr& output : outputs) info.output_bytes += output->meta().file_size;
    counters_.merge_bytes_written.fetch_add(info.output_bytes, std::memory_order_relaxed);
  }
  ScheduleMerges();
  lock.unlock();
  manifest_lock.unlock();
  if (options_.listener != nullptr) {
    info.end_micros = env_->NowMicros();
    options_.listener->OnMergeCompleted(info);
  }
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
