// Builds one block: sorted entries with prefix-compressed keys and a restart
// array (layout in table/FORMAT.md). Not thread-safe.
#ifndef LSM_SRC_TABLE_BLOCK_BUILDER_H_
#define LSM_SRC_TABLE_BLOCK_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "table/internal_iterator.h"

namespace lsm {

class BlockBuilder {
 public:
  // Every restart_interval-th entry stores its whole key.
  explicit BlockBuilder(int restart_interval);

  // Starts a new, empty block. last_key() is kept.
  void Reset();

  // REQUIRES: Finish() not called since Reset(); key > every key added since
  // Reset(); value.size() < 2^31 (empty for kDeletion).
  void Add(std::string_view key, ValueType type, std::string_view value);

  // Appends the restart array; the result stays valid until Reset().
  std::string_view Finish();

  // Bytes the block would take if finished now.
  size_t CurrentSizeEstimate() const {
    return buffer_.size() + (restarts_.size() + 1) * sizeof(uint32_t);
  }
  // No entry since Reset() (every entry has a header, so bytes mean entries).
  bool empty() const { return buffer_.empty(); }
  // The last key added (also across Reset()).
  std::string_view last_key() const { return last_key_; }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace lsm

#endif  // LSM_SRC_TABLE_BLOCK_BUILDER_H_
