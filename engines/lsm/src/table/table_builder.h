// Writes a disk component (an immutable sorted table file). Format in
// engines/README.md ("Disk component format").
#ifndef LSM_SRC_TABLE_TABLE_BUILDER_H_
#define LSM_SRC_TABLE_TABLE_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lsm/env.h"
#include "lsm/status.h"
#include "table/internal_iterator.h"

namespace lsm {

struct TableOptions {
  size_t block_bytes = 4096;   // target data block size
  int bloom_bits_per_key = 10;  // 0: no filter block
  bool verify_checksums = true;  // reader: check each block's crc32c
  // Writer: the number of entries the table will likely hold (e.g. the sum
  // of a merge's inputs), 0 if unknown. With it the Bloom filter is built in
  // place (memory: its own size); without it the builder keeps 8 bytes per
  // key until Finish. A wrong guess changes the filter's precision only.
  uint64_t expected_entries = 0;
};

class TableBuilder {
 public:
  // Does not take ownership of file; the caller Syncs and Closes it after
  // Finish().
  TableBuilder(const TableOptions& options, WritableFile* file);
  ~TableBuilder();
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  // REQUIRES: key > every key added before (bytewise); Finish() not called.
  void Add(std::string_view key, ValueType type, std::string_view value);
  // Writes the last data block, filter, index and footer.
  Status Finish();
  // The first error seen by Add or Finish.
  Status status() const;

  uint64_t NumEntries() const;
  // Bytes handed to the file so far (the final file size after Finish()).
  uint64_t FileSize() const;
  std::string_view smallest_key() const;
  std::string_view largest_key() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// Reads a table file. Keeps the index and the Bloom filter in memory; reads
// data blocks on demand through the RandomAccessFile. Thread-safe.
class Table {
 public:
  // fname is used only in error messages: every Corruption names the file.
  static Status Open(const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
                     uint64_t file_size, const std::string& fname,
                     std::unique_ptr<Table>* table);
  ~Table();
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  // False only if the key is certainly absent (Bloom filter).
  bool KeyMayMatch(std::string_view key) const;

  // Looks the key up. Sets *found; when found, *type and (for kValue)
  // *value. Not OK on a read error or corruption. value may be nullptr
  // (existence check).
  Status Get(std::string_view key, bool* found, ValueType* type, std::string* value) const;

  // The iterator may outlive nothing: the caller keeps the Table alive.
  // Its key() and value() stay valid until it moves. Each iterator reuses
  // one buffer for the data block under its cursor.
  std::unique_ptr<InternalIterator> NewIterator() const;

  uint64_t NumEntries() const;
  uint64_t FileSize() const;
  std::string_view smallest_key() const;
  std::string_view largest_key() const;
  // Tombstones among NumEntries().
  uint64_t NumDeletions() const;
  // Bytes of the data blocks (trailers included): where BytesConsumed() of
  // an exhausted iterator ends.
  uint64_t DataSize() const;

 private:
  struct Rep;
  explicit Table(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace lsm

#endif  // LSM_SRC_TABLE_TABLE_BUILDER_H_
