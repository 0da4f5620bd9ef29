#include <algorithm>

#include "log/log_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lsm::log {

static_assert(kMaxFragmentType < 5, "type_crc_ has one slot per type");

Writer::Writer(WritableFile* dest, uint64_t dest_length)
    : dest_(dest), block_offset_(dest_length % kBlockSize) {
  for (int t = 0; t <= kMaxFragmentType; t++) {
    char c = static_cast<char>(t);
    type_crc_[t] = crc32c::Value(&c, 1);
  }
}

Status Writer::AddRecord(std::string_view payload) {
  const char* p = payload.data();
  size_t left = payload.size();
  bool begin = true;
  // An empty payload still emits one (FULL, empty) fragment.
  do {
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      // No header fits: zero-fill the block's tail; the reader skips it.
      if (leftover > 0) {
        static constexpr char kZeros[kHeaderSize] = {};
        Status s = dest_->Append(std::string_view(kZeros, leftover));
        if (!s.ok()) return s;
      }
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t n = std::min(left, avail);
    const bool end = (n == left);
    const int type = begin && end ? kFullType : begin ? kFirstType : end ? kLastType : kMiddleType;
    Status s = EmitFragment(type, p, n);
    if (!s.ok()) return s;
    p += n;
    left -= n;
    begin = false;
  } while (left > 0);
  // One record reaches the OS whole: a process crash after AddRecord returns
  // loses nothing, and a record is never left half in the file's buffer.
  return dest_->Flush();
}

Status Writer::EmitFragment(int type, const char* data, size_t n) {
  char header[kHeaderSize];
  uint32_t crc = crc32c::Extend(type_crc_[type], data, n);
  EncodeFixed32(header, crc32c::Mask(crc));
  header[4] = static_cast<char>(n & 0xff);
  header[5] = static_cast<char>(n >> 8);
  header[6] = static_cast<char>(type);
  Status s = dest_->Append(std::string_view(header, kHeaderSize));
  if (s.ok()) s = dest_->Append(std::string_view(data, n));
  block_offset_ += kHeaderSize + n;
  return s;
}

}  // namespace lsm::log
