// Iterates the entries of one block (layout in table/FORMAT.md) without
// owning its bytes. Every length read from the block is checked against the
// block's bounds: a malformed block makes the iterator invalid with
// corrupted() set, never reads outside the block.
//
// key() and value() stay valid until the next Seek/Next/Init; value() points
// into the block, key() into the block (whole keys at restart points) or
// into a buffer the iterator reuses (prefix-compressed keys), so iterating
// does not allocate once that buffer has grown to the longest key.
//
// Not thread-safe; use one BlockIter per thread over a shared block.
#ifndef LSM_SRC_TABLE_BLOCK_H_
#define LSM_SRC_TABLE_BLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "table/internal_iterator.h"

namespace lsm {

class BlockIter {
 public:
  BlockIter() = default;
  BlockIter(const BlockIter&) = delete;
  BlockIter& operator=(const BlockIter&) = delete;

  // Points the iterator at a block (not positioned). False, and corrupted(),
  // if the restart array does not fit the block. contents must outlive every
  // use until the next Init.
  bool Init(std::string_view contents);

  bool Valid() const { return current_ < limit_; }
  // Set when a malformed entry or restart point was met; the iterator is
  // then not Valid() until the next Init.
  bool corrupted() const { return corrupted_; }

  void SeekToFirst();
  // First entry with key >= target (bytewise).
  void Seek(std::string_view target);
  void Next();  // REQUIRES: Valid()

  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }
  ValueType type() const { return type_; }
  // Offset of the current entry in the block.
  uint32_t offset() const { return current_; }
  uint32_t num_restarts() const { return num_restarts_; }

 private:
  // Decodes the entry at next_ into key_/value_/type_ and advances next_;
  // at the end of the entries makes the iterator invalid.
  void ParseNext();
  void MarkCorrupted();
  uint32_t RestartOffset(uint32_t index) const;
  // The whole key stored at a restart point, or false if malformed.
  bool RestartKey(uint32_t index, std::string_view* key) const;
  void SeekToRestart(uint32_t index);

  const char* data_ = nullptr;
  uint32_t limit_ = 0;  // end of the entries = start of the restart array
  uint32_t num_restarts_ = 0;
  uint32_t current_ = 0;  // offset of the current entry; limit_ when not Valid()
  uint32_t next_ = 0;     // offset of the entry after the current one
  bool corrupted_ = false;
  bool key_in_buf_ = false;  // key_ views key_buf_ (else the block)
  std::string_view key_;
  std::string_view value_;
  ValueType type_ = ValueType::kValue;
  std::string key_buf_;
};

}  // namespace lsm

#endif  // LSM_SRC_TABLE_BLOCK_H_
