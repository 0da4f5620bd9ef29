#include "table/block.h"

#include "util/coding.h"

namespace lsm {
namespace {

// Parses an entry header at [p, limit): shared, non_shared, tag. Returns the
// byte after it or nullptr.
inline const char* DecodeEntryHeader(const char* p, const char* limit, uint32_t* shared,
                                     uint32_t* non_shared, uint32_t* tag) {
  if (limit - p >= 3) {
    // Fast path: all three varints are one byte (short keys, values < 64).
    const auto a = static_cast<uint8_t>(p[0]);
    const auto b = static_cast<uint8_t>(p[1]);
    const auto c = static_cast<uint8_t>(p[2]);
    if ((a | b | c) < 128) {
      *shared = a;
      *non_shared = b;
      *tag = c;
      return p + 3;
    }
  }
  if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
  if ((p = GetVarint32Ptr(p, limit, non_shared)) == nullptr) return nullptr;
  return GetVarint32Ptr(p, limit, tag);
}

}  // namespace

bool BlockIter::Init(std::string_view contents) {
  data_ = contents.data();
  limit_ = 0;
  num_restarts_ = 0;
  current_ = next_ = 0;
  corrupted_ = false;
  key_in_buf_ = false;
  key_ = value_ = {};
  // The restart array (at least one offset) and its count must fit, and
  // offsets are 32-bit.
  if (contents.size() < 2 * sizeof(uint32_t) || contents.size() > UINT32_MAX) {
    corrupted_ = true;
    return false;
  }
  const uint32_t size = static_cast<uint32_t>(contents.size());
  const uint32_t n = DecodeFixed32(data_ + size - sizeof(uint32_t));
  const uint32_t max_restarts = (size - sizeof(uint32_t)) / sizeof(uint32_t);
  if (n == 0 || n > max_restarts) {
    corrupted_ = true;
    return false;
  }
  num_restarts_ = n;
  limit_ = size - (n + 1) * sizeof(uint32_t);
  current_ = next_ = limit_;
  return true;
}

void BlockIter::MarkCorrupted() {
  corrupted_ = true;
  current_ = next_ = limit_;
  key_ = value_ = {};
}

uint32_t BlockIter::RestartOffset(uint32_t index) const {
  return DecodeFixed32(data_ + limit_ + index * sizeof(uint32_t));
}

bool BlockIter::RestartKey(uint32_t index, std::string_view* key) const {
  const uint32_t offset = RestartOffset(index);
  if (offset >= limit_) return false;
  const char* limit = data_ + limit_;
  uint32_t shared, non_shared, tag;
  const char* p = DecodeEntryHeader(data_ + offset, limit, &shared, &non_shared, &tag);
  if (p == nullptr || shared != 0 || non_shared > static_cast<size_t>(limit - p)) return false;
  *key = std::string_view(p, non_shared);
  return true;
}

void BlockIter::SeekToRestart(uint32_t index) {
  key_in_buf_ = false;
  key_ = {};
  const uint32_t offset = index == 0 ? 0 : RestartOffset(index);
  if (offset > limit_) {
    MarkCorrupted();
    return;
  }
  next_ = offset;
  ParseNext();
}

void BlockIter::ParseNext() {
  current_ = next_;
  if (current_ >= limit_) {
    current_ = next_ = limit_;  // end of the entries
    return;
  }
  const char* p = data_ + current_;
  const char* limit = data_ + limit_;
  uint32_t shared, non_shared, tag;
  p = DecodeEntryHeader(p, limit, &shared, &non_shared, &tag);
  const uint32_t value_len = tag >> 1;
  if (p == nullptr || shared > key_.size() || non_shared > static_cast<size_t>(limit - p) ||
      value_len > static_cast<size_t>(limit - p) - non_shared ||
      ((tag & 1) == 0 && value_len != 0)) {
    MarkCorrupted();
    return;
  }
  if (shared == 0) {
    // Whole key in the block: view it, no copy.
    key_ = std::string_view(p, non_shared);
    key_in_buf_ = false;
  } else {
    if (key_in_buf_) {
      key_buf_.resize(shared);
    } else {
      key_buf_.assign(key_.data(), shared);
      key_in_buf_ = true;
    }
    key_buf_.append(p, non_shared);
    key_ = key_buf_;
  }
  p += non_shared;
  value_ = std::string_view(p, value_len);
  type_ = (tag & 1) ? ValueType::kValue : ValueType::kDeletion;
  next_ = static_cast<uint32_t>((p + value_len) - data_);
}

void BlockIter::SeekToFirst() {
  if (corrupted_ || num_restarts_ == 0) return;
  SeekToRestart(0);
}

void BlockIter::Next() {
  ParseNext();
}

void BlockIter::Seek(std::string_view target) {
  if (corrupted_ || num_restarts_ == 0) return;
  // Binary search for the last restart point whose key is < target; the
  // answer is in the run of entries that starts there.
  uint32_t left = 0, right = num_restarts_ - 1;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    std::string_view mid_key;
    if (!RestartKey(mid, &mid_key)) {
      MarkCorrupted();
      return;
    }
    if (mid_key < target) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  SeekToRestart(left);
  while (Valid() && key_ < target) ParseNext();
}

}  // namespace lsm
