// Unlike LevelDB's reader, this one never skips damage to resynchronise at a
// later block: any damage ends the log, so a record after a hole is never
// replayed without the records before it.
#include "log/log_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lsm::log {

Reader::Reader(SequentialFile* file, std::string fname)
    : file_(file), fname_(std::move(fname)), buffer_storage_(kBlockSize, '\0') {}

void Reader::ReportCorruption(uint64_t offset, const std::string& reason) {
  done_ = true;
  tail_corrupted_ = true;
  what_happened_ = fname_ + " at offset " + std::to_string(offset) + ": " + reason;
}

void Reader::ReportTruncation(uint64_t offset, const std::string& reason) {
  ReportCorruption(offset, reason);
  tail_truncated_ = true;
}

bool Reader::ReadRecord(std::string_view* record, std::string* scratch) {
  *record = std::string_view();
  if (done_) return false;
  scratch->clear();
  bool in_fragmented_record = false;
  uint64_t record_offset = 0;  // of the record's first fragment
  while (true) {
    std::string_view fragment;
    uint64_t offset = 0;
    const int type = ReadFragment(&fragment, &offset);
    switch (type) {
      case kFullType:
        if (in_fragmented_record) {
          ReportCorruption(offset, "FULL fragment inside the record that began at offset " +
                                       std::to_string(record_offset));
          return false;
        }
        *record = fragment;
        return true;
      case kFirstType:
        if (in_fragmented_record) {
          ReportCorruption(offset, "FIRST fragment inside the record that began at offset " +
                                       std::to_string(record_offset));
          return false;
        }
        in_fragmented_record = true;
        record_offset = offset;
        scratch->assign(fragment.data(), fragment.size());
        break;
      case kMiddleType:
      case kLastType:
        if (!in_fragmented_record) {
          ReportCorruption(offset, std::string(type == kMiddleType ? "MIDDLE" : "LAST") +
                                       " fragment without a FIRST");
          return false;
        }
        scratch->append(fragment.data(), fragment.size());
        if (type == kLastType) {
          *record = *scratch;
          return true;
        }
        break;
      case kEof:
        done_ = true;
        if (in_fragmented_record && status_.ok()) {
          ReportTruncation(end_of_buffer_offset_,
                           "log ends inside the record that began at offset " +
                               std::to_string(record_offset));
        }
        return false;
      default:  // kBad: already reported
        return false;
    }
  }
}

int Reader::ReadFragment(std::string_view* fragment, uint64_t* offset) {
  while (true) {
    const uint64_t pos = end_of_buffer_offset_ - buffer_.size();  // file offset of buffer_
    const size_t in_block = pos % kBlockSize;
    if (buffer_.size() < kHeaderSize) {
      if (!eof_) {
        // The rest of this block is the writer's zero trailer (or nothing).
        std::string_view block;
        Status s = file_->Read(kBlockSize, &block, buffer_storage_.data());
        end_of_buffer_offset_ += block.size();
        buffer_ = block;
        if (!s.ok()) {
          status_ = s;
          what_happened_ = fname_ + ": read failed: " + s.ToString();
          buffer_ = std::string_view();
          eof_ = true;
          return kEof;
        }
        if (block.size() < kBlockSize) eof_ = true;
        continue;
      }
      if (buffer_.empty() || in_block + kHeaderSize > kBlockSize) {
        // Clean end: nothing left, or only (part of) a block trailer, which
        // the writer emits right before the next record's first fragment.
        buffer_ = std::string_view();
        return kEof;
      }
      *offset = pos;
      ReportTruncation(pos, "truncated fragment header (" + std::to_string(buffer_.size()) +
                                " of " + std::to_string(kHeaderSize) + " bytes) at end of file");
      return kBad;
    }

    const char* header = buffer_.data();
    const size_t length = static_cast<uint8_t>(header[4]) |
                          (static_cast<size_t>(static_cast<uint8_t>(header[5])) << 8);
    const int type = static_cast<uint8_t>(header[6]);
    *offset = pos;
    if (in_block + kHeaderSize + length > kBlockSize) {
      ReportCorruption(pos, "fragment length " + std::to_string(length) +
                                " runs past the end of its block");
      return kBad;
    }
    if (kHeaderSize + length > buffer_.size()) {
      // Fits its block but the file ends first: an append cut short.
      ReportTruncation(pos, "truncated fragment payload (" +
                                std::to_string(buffer_.size() - kHeaderSize) + " of " +
                                std::to_string(length) + " bytes) at end of file");
      return kBad;
    }
    // The checksum covers the type byte and the payload, which are adjacent.
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(header));
    const uint32_t actual = crc32c::Value(header + 6, 1 + length);
    if (actual != expected) {
      ReportCorruption(pos, "fragment checksum mismatch (length " + std::to_string(length) + ")");
      return kBad;
    }
    if (type < kFullType || type > kMaxFragmentType) {
      ReportCorruption(pos, "unknown fragment type " + std::to_string(type));
      return kBad;
    }
    *fragment = std::string_view(header + kHeaderSize, length);
    buffer_.remove_prefix(kHeaderSize + length);
    return type;
  }
}

}  // namespace lsm::log
