// The memory component: a skiplist of versioned entries in an arena.
#ifndef LSM_SRC_DB_MEMTABLE_H_
#define LSM_SRC_DB_MEMTABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "db/arena.h"
#include "db/skiplist.h"
#include "table/internal_iterator.h"

namespace lsm {

// Thread-safety: Add needs external synchronization (one writer at a time);
// Get, iterators and the accessors may run concurrently with Add.
class MemTable {
 public:
  // budget_bytes is the memtable's byte budget (Options::memtable_bytes);
  // it sizes the arena's blocks.
  MemTable(uint64_t wal_number, size_t budget_bytes);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  // seq must be larger than any seq added before.
  void Add(uint64_t seq, ValueType type, std::string_view key, std::string_view value);

  // The newest entry for key: false if none; else *type, and *value for
  // kValue.
  bool Get(std::string_view key, ValueType* type, std::string* value) const;

  // Yields each key once, with its newest entry whose seq <= snapshot_seq.
  // The caller keeps the MemTable alive while the iterator lives.
  std::unique_ptr<InternalIterator> NewIterator(uint64_t snapshot_seq) const;

  size_t ApproximateMemoryUsage() const { return arena_.MemoryUsage(); }
  // Takes no more writes: its arena has reached the budget (the entry that
  // crossed it is kept). MemTableCapacity (lsm/memtable_capacity.h) counts by it.
  bool Full() const { return ApproximateMemoryUsage() >= budget_bytes_; }
  uint64_t NumEntries() const { return entries_.load(std::memory_order_relaxed); }
  bool Empty() const { return NumEntries() == 0; }
  // The WAL file holding this memtable's writes (0 when the WAL is off).
  uint64_t wal_number() const { return wal_number_; }
  // When it stopped taking writes (Env::NowMicros; 0: not sealed, e.g. one
  // recovered from a WAL). Set once, under the DB mutex, before flushing.
  void Seal(uint64_t micros) { sealed_micros_ = micros; }
  uint64_t sealed_micros() const { return sealed_micros_; }

 private:
  friend class MemTableIterator;

  // Entries are encoded as varint32 key length | key | fixed64 (seq << 8 |
  // type) | varint32 value length | value; ordered by key ascending, then seq
  // descending so that the newest version of a key comes first.
  struct EntryComparator {
    int operator()(const char* a, const char* b) const;
  };
  using Table = SkipList<const char*, EntryComparator>;

  const uint64_t wal_number_;
  const size_t budget_bytes_;
  Arena arena_;
  Table table_;
  std::atomic<uint64_t> entries_{0};
  uint64_t sealed_micros_ = 0;
};

}  // namespace lsm

#endif  // LSM_SRC_DB_MEMTABLE_H_
