#ifndef LSM_INCLUDE_LSM_STATS_H_
#define LSM_INCLUDE_LSM_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lsm {

// A snapshot of the engine's counters; DB::GetStats never blocks writers.
struct Stats {
  // Operations.
  uint64_t puts = 0;
  uint64_t deletes = 0;
  uint64_t gets = 0;
  uint64_t user_bytes_written = 0;  // key + value bytes of puts and deletes

  // Background work.
  uint64_t flushes_completed = 0;
  uint64_t flush_bytes_written = 0;
  uint64_t merges_completed = 0;
  uint64_t merge_bytes_read = 0;
  uint64_t merge_bytes_written = 0;

  // Components.
  uint64_t memory_components_immutable = 0;  // waiting for or in flush
  uint64_t disk_components = 0;
  std::vector<uint64_t> disk_components_per_level;  // index = level
  uint64_t disk_bytes = 0;                           // sum of component file sizes
  std::vector<uint64_t> disk_bytes_per_level;        // the same per level
  // The constraint in force now: the global bound on all components, or
  // with constraint = local the bound on each level.
  uint64_t max_components = 0;
  // The count that constraint applies to: disk_components, the fullest
  // level's count (constraint = local), or for partitioned leveling the
  // level-0 components plus one sorted run per level >= 1.
  uint64_t constrained_components = 0;
  // The average SSTable (disk component) count over the flushes since Open,
  // each flush counted once its decision is applied: the count right after
  // the policy was asked at that flush, less the components that the merges
  // in flight then remove (inputs - 1 each). lsm-sim's avg_sstables is the
  // same quantity. Meant for stack policies (a partitioned merge's outputs
  // are not known in advance, so there it undercounts). 0 before any flush.
  double average_sstables = 0;

  // Merges.
  uint64_t merges_pending = 0;                         // created, not running
  uint64_t merges_running = 0;
  // The same by the level a merge writes (index = output level; as long as the
  // deepest such level): which level's merge waits while which runs.
  std::vector<uint64_t> merges_pending_per_level;
  std::vector<uint64_t> merges_running_per_level;
  std::vector<uint64_t> merge_remaining_input_bytes;  // one per running merge

  // Write stalls: a merge stall waits for the component constraint, a memory
  // stall for a free memory component.
  uint64_t merge_stalls = 0;
  uint64_t merge_stall_micros = 0;
  uint64_t memory_stalls = 0;
  uint64_t memory_stall_micros = 0;
  // write_control = slowdown: writes delayed by 1 ms, and the time spent so.
  uint64_t slowdowns = 0;
  uint64_t slowdown_micros = 0;

  // The I/O budget (io_budget_bytes_per_sec > 0; all 0 without one): bytes
  // flushes and merges were granted (charged as they write, unlike
  // *_bytes_written, which count a merge when it ends); budget that expired
  // unspent because no flush or merge asked for it in time; and the time
  // flush and merge threads spent in syncs, asking for nothing.
  uint64_t io_budget_granted_bytes = 0;
  uint64_t io_budget_unused_bytes = 0;
  uint64_t background_sync_micros = 0;

  // (flush_bytes_written + merge_bytes_written) / user_bytes_written; 0 before
  // any write.
  double write_amplification = 0;

  // Empty while the engine is healthy; else the first failure of a flush, a
  // merge or the WAL (Status::ToString), which every later write, Flush and
  // WaitForIdle return until the DB is reopened.
  std::string background_error;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_STATS_H_
