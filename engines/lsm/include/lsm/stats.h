#ifndef LSM_INCLUDE_LSM_STATS_H_
#define LSM_INCLUDE_LSM_STATS_H_

#include <cstdint>
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
  uint64_t max_components = 0;                       // the constraint in force now

  // Merges.
  uint64_t merges_pending = 0;                         // created, not running
  uint64_t merges_running = 0;
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

  // (flush_bytes_written + merge_bytes_written) / user_bytes_written; 0 before
  // any write.
  double write_amplification = 0;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_STATS_H_
