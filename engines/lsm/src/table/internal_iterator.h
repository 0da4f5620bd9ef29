// The iterator every internal source (memtable, table, merge of sources)
// exposes: it yields each key once with its newest entry, tombstones
// included, so that merges and user iterators can reconcile versions.
#ifndef LSM_SRC_TABLE_INTERNAL_ITERATOR_H_
#define LSM_SRC_TABLE_INTERNAL_ITERATOR_H_

#include <cstdint>
#include <string_view>

#include "lsm/status.h"

namespace lsm {

enum class ValueType : uint8_t { kDeletion = 0, kValue = 1 };

class InternalIterator {
 public:
  virtual ~InternalIterator() = default;
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void Seek(std::string_view target) = 0;  // first key >= target
  virtual void Next() = 0;                         // REQUIRES: Valid()
  virtual std::string_view key() const = 0;        // REQUIRES: Valid()
  virtual std::string_view value() const = 0;      // REQUIRES: Valid(); empty for kDeletion
  virtual ValueType type() const = 0;              // REQUIRES: Valid()
  // Not OK after a failed read; the iterator is then not Valid().
  virtual Status status() const = 0;
  // Bytes of the underlying source consumed so far (for a table: the end
  // offset of the data block under the cursor, or the data size once
  // exhausted). Merges report remaining input bytes from this.
  virtual uint64_t BytesConsumed() const { return 0; }
};

}  // namespace lsm

#endif  // LSM_SRC_TABLE_INTERNAL_ITERATOR_H_
