#include "lsm/memtable_capacity.h"

#include <algorithm>
#include <string>

#include "db/memtable.h"

namespace lsm {

uint64_t MemTableCapacity(size_t memtable_bytes, size_t key_bytes, size_t value_bytes) {
  const size_t filled = std::min(memtable_bytes, kExactCapacityBytes);
  MemTable mem(0, filled);
  // One key written again and again: an entry's footprint depends on the lengths only, and
  // each version is an entry of its own (as in DB::Write, which never overwrites in place).
  const std::string key(key_bytes, 'k');
  const std::string value(value_bytes, 'v');
  uint64_t entries = 0;
  while (!mem.Full()) mem.Add(++entries, ValueType::kValue, key, value);
  if (filled == memtable_bytes) return std::max<uint64_t>(entries, 1);
  const double scaled = static_cast<double>(entries) * static_cast<double>(memtable_bytes) /
                        static_cast<double>(filled);
  return std::max<uint64_t>(1, static_cast<uint64_t>(scaled));
}

}  // namespace lsm
