// How many writes fill one memory component, told by the engine's own
// memtable (for planners that turn flushes into writes: lsm-sim
// --memtable-entries, which lsmbench's merge-cycle estimates call).
#ifndef LSM_INCLUDE_LSM_MEMTABLE_CAPACITY_H_
#define LSM_INCLUDE_LSM_MEMTABLE_CAPACITY_H_

#include <cstddef>
#include <cstdint>

namespace lsm {

// Up to this budget MemTableCapacity fills a real memtable; above it, it
// scales the count of one of this size (the per-entry footprint is the same:
// arena blocks are at most 1 MiB, skiplist heights a fixed random sequence).
inline constexpr size_t kExactCapacityBytes = 256 << 20;

// The writes of key_bytes + value_bytes (one entry each) that one memtable
// of memtable_bytes (Options::memtable_bytes) takes before the DB seals it:
// it fills the engine's MemTable the way DB::Write does, the entry that
// reaches the budget included. At least 1.
uint64_t MemTableCapacity(size_t memtable_bytes, size_t key_bytes, size_t value_bytes);

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_MEMTABLE_CAPACITY_H_
