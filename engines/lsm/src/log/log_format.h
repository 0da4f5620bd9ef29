// The write-ahead log and the manifest share one record format: a file is a
// sequence of 32 KiB blocks; a record is one or more fragments
//   crc32c (4, masked, over type + payload) | length (2) | type (1) | payload
// with type FULL, FIRST, MIDDLE or LAST. A torn tail (crash mid-append) is
// detected by its checksum or length and ends the log.
#ifndef LSM_SRC_LOG_LOG_FORMAT_H_
#define LSM_SRC_LOG_LOG_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lsm/env.h"
#include "lsm/status.h"

namespace lsm::log {

inline constexpr size_t kBlockSize = 32768;
inline constexpr size_t kHeaderSize = 4 + 2 + 1;

// The type byte of a fragment. A record is one FULL fragment or a FIRST,
// any number of MIDDLE and a LAST fragment.
enum FragmentType : uint8_t {
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr int kMaxFragmentType = kLastType;

class Writer {
 public:
  // Does not take ownership; dest_length is the file's current length (to
  // continue the block structure when appending).
  explicit Writer(WritableFile* dest, uint64_t dest_length = 0);
  // Appends one record (payload may be empty or span many blocks). Does not
  // Sync; the caller decides durability.
  Status AddRecord(std::string_view payload);

 private:
  Status EmitFragment(int type, const char* data, size_t n);

  WritableFile* dest_;
  size_t block_offset_;
  // crc32c of each type byte, so a fragment's checksum only extends it over
  // the payload.
  uint32_t type_crc_[5];
};

class Reader {
 public:
  // Does not take ownership. fname is used in error messages.
  Reader(SequentialFile* file, std::string fname);
  // Reads the next whole record into *record (scratch may back it).
  // Returns false at the end of the log. A torn or corrupt tail ends the log
  // too; then tail_corrupted() is true and what_happened() says why, so the
  // caller can tell "clean end" from "damaged" (the WAL tolerates any bad
  // tail; the manifest only a truncated one).
  bool ReadRecord(std::string_view* record, std::string* scratch);
  bool tail_corrupted() const { return tail_corrupted_; }
  // The bad tail is only that the file ends inside a record, every byte
  // before checking out: what an append leaves that never completed (the
  // process died, or the write failed after a prefix reached the file).
  bool tail_truncated() const { return tail_truncated_; }
  const std::string& what_happened() const { return what_happened_; }
  // An I/O error of the underlying file, if any.
  Status status() const { return status_; }

 private:
  // What ReadFragment found: a fragment type (1..4) or one of these.
  enum : int { kEof = 5, kBad = 6 };
  int ReadFragment(std::string_view* fragment, uint64_t* offset);
  // Ends the log: tail_corrupted() becomes true.
  void ReportCorruption(uint64_t offset, const std::string& reason);
  // The same, for a file that ends inside a record: tail_truncated() too.
  void ReportTruncation(uint64_t offset, const std::string& reason);

  SequentialFile* file_;
  std::string fname_;
  std::string buffer_storage_;
  std::string_view buffer_;
  // File offset just past buffer_ (buffer_ holds the unread rest of the
  // current block).
  uint64_t end_of_buffer_offset_ = 0;
  bool eof_ = false;
  bool done_ = false;  // a record can no longer be returned
  bool tail_corrupted_ = false;
  bool tail_truncated_ = false;
  std::string what_happened_;
  Status status_;
};

}  // namespace lsm::log

#endif  // LSM_SRC_LOG_LOG_FORMAT_H_
