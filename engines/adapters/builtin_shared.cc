#include "adapters/builtin_shared.h"

#include <algorithm>

namespace lsmbench {
namespace builtin {

void AddStatsMetrics(const lsm::Stats& st, const std::string& prefix, Metrics* m) {
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  (*m)[prefix + "disk_components"] = d(st.disk_components);
  for (size_t i = 0; i < st.disk_components_per_level.size(); ++i) {
    (*m)[prefix + "disk_components.L" + std::to_string(i)] = d(st.disk_components_per_level[i]);
  }
  for (size_t i = 0; i < st.disk_bytes_per_level.size(); ++i) {
    (*m)[prefix + "disk_bytes.L" + std::to_string(i)] = d(st.disk_bytes_per_level[i]);
  }
  (*m)[prefix + "stall_count"] = d(st.merge_stalls + st.memory_stalls);
  (*m)[prefix + "stall_micros"] = d(st.merge_stall_micros + st.memory_stall_micros);
  (*m)[prefix + "merge_stall_count"] = d(st.merge_stalls);
  (*m)[prefix + "merge_stall_micros"] = d(st.merge_stall_micros);
  (*m)[prefix + "memory_stall_count"] = d(st.memory_stalls);
  (*m)[prefix + "memory_stall_micros"] = d(st.memory_stall_micros);
  (*m)[prefix + "slowdown_count"] = d(st.slowdowns);
  (*m)[prefix + "slowdown_micros"] = d(st.slowdown_micros);
  (*m)[prefix + "bytes_flushed"] = d(st.flush_bytes_written);
  (*m)[prefix + "bytes_merged"] = d(st.merge_bytes_written);
  (*m)[prefix + "bytes_merge_read"] = d(st.merge_bytes_read);
  (*m)[prefix + "merges_running"] = d(st.merges_running);
  (*m)[prefix + "merges_pending"] = d(st.merges_pending);
  // By output level, every level of the tree (0 where none waits or runs): a series per level.
  const size_t levels = std::max({st.disk_bytes_per_level.size(),
                                  st.merges_pending_per_level.size(),
                                  st.merges_running_per_level.size()});
  for (size_t i = 0; i < levels; ++i) {
    auto at = [i](const std::vector<uint64_t>& v) { return i < v.size() ? v[i] : 0; };
    (*m)[prefix + "merges_pending.L" + std::to_string(i)] = d(at(st.merges_pending_per_level));
    (*m)[prefix + "merges_running.L" + std::to_string(i)] = d(at(st.merges_running_per_level));
  }
  uint64_t remaining = 0;
  for (uint64_t r : st.merge_remaining_input_bytes) remaining += r;
  (*m)[prefix + "merge_remaining_bytes"] = d(remaining);
  (*m)[prefix + "io_budget_granted_bytes"] = d(st.io_budget_granted_bytes);
  (*m)[prefix + "io_budget_unused_bytes"] = d(st.io_budget_unused_bytes);
  (*m)[prefix + "background_sync_micros"] = d(st.background_sync_micros);
  (*m)[prefix + "write_amplification"] = st.write_amplification;
  (*m)[prefix + "average_sstables"] = st.average_sstables;
  (*m)[prefix + "flushes"] = d(st.flushes_completed);
  (*m)[prefix + "merges"] = d(st.merges_completed);
  (*m)[prefix + "disk_bytes"] = d(st.disk_bytes);
  (*m)[prefix + "max_components"] = d(st.max_components);
  (*m)[prefix + "constrained_components"] = d(st.constrained_components);
  (*m)[prefix + "memory_components_immutable"] = d(st.memory_components_immutable);
  (*m)[prefix + "user_bytes"] = d(st.user_bytes_written);
  (*m)[prefix + "puts"] = d(st.puts);
  (*m)[prefix + "deletes"] = d(st.deletes);
  (*m)[prefix + "gets"] = d(st.gets);
  // 1 once a flush, merge or WAL write failed: the run's writes fail from
  // then on, with the error the run's result carries.
  (*m)[prefix + "background_error"] = st.background_error.empty() ? 0 : 1;
}

Status LookAtWork(const std::vector<lsm::Stats>& trees, const std::string& error,
                  BackgroundWork* work) {
  uint64_t flushes = 0, pending = 0, running = 0;
  std::string failure = error;
  for (const lsm::Stats& t : trees) {
    flushes += t.memory_components_immutable;
    pending += t.merges_pending;
    running += t.merges_running;
    work->completed += t.flushes_completed + t.merges_completed;
    if (failure.empty()) failure = t.background_error;
  }
  // The engine keeps the error and fails every later write with it: there
  // is nothing to wait for.
  if (!failure.empty()) return Status::IOError("a background flush or merge failed", failure);
  work->busy = flushes + pending + running > 0;
  work->detail = work->busy ? std::to_string(flushes) + " memtables waiting for or in flush, " +
                                  std::to_string(pending) + " merges pending, " +
                                  std::to_string(running) + " running"
                            : "no flush or merge pending or running";
  return Status::OK();
}

}  // namespace builtin
}  // namespace lsmbench
