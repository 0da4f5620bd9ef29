#ifndef LSM_INCLUDE_LSM_ITERATOR_H_
#define LSM_INCLUDE_LSM_ITERATOR_H_

#include <string_view>

#include "lsm/status.h"

namespace lsm {

// Iterates live (not deleted) entries of a snapshot in key order (bytewise).
// Not thread-safe; many iterators may be used concurrently.
class Iterator {
 public:
  virtual ~Iterator() = default;
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  // Positions at the first key >= target.
  virtual void Seek(std::string_view target) = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid(). The views stay valid until the next move.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Not OK when a read failed (e.g. Corruption naming the file); the
  // iterator is then not Valid().
  virtual Status status() const = 0;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_ITERATOR_H_
