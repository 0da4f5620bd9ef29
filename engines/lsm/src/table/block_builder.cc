#include "table/block_builder.h"

#include <algorithm>
#include <cassert>

#include "util/coding.h"

namespace lsm {

BlockBuilder::BlockBuilder(int restart_interval)
    : restart_interval_(std::max(restart_interval, 1)) {
  restarts_.push_back(0);
}

void BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.clear();
  restarts_.push_back(0);
  counter_ = 0;
  finished_ = false;
}

void BlockBuilder::Add(std::string_view key, ValueType type, std::string_view value) {
  assert(!finished_);
  if (type == ValueType::kDeletion) value = {};
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    if (!buffer_.empty()) {
      const size_t limit = std::min(last_key_.size(), key.size());
      while (shared < limit && last_key_[shared] == key[shared]) shared++;
    }
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t non_shared = key.size() - shared;
  const uint32_t tag =
      (static_cast<uint32_t>(value.size()) << 1) | (type == ValueType::kValue ? 1u : 0u);

  char header[3 * kMaxVarint32Bytes];
  char* p = EncodeVarint32(header, static_cast<uint32_t>(shared));
  p = EncodeVarint32(p, static_cast<uint32_t>(non_shared));
  p = EncodeVarint32(p, tag);
  buffer_.append(header, p - header);
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());

  last_key_.resize(shared);
  last_key_.append(key.data() + shared, non_shared);
  counter_++;
}

std::string_view BlockBuilder::Finish() {
  if (!finished_) {
    for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
    PutFixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
    finished_ = true;
  }
  return buffer_;
}

}  // namespace lsm
