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

class Writer {
 public:
  // Does not take ownership; dest_length is the file's current length (to
  // continue the block structure when appending).
  explicit Writer(WritableFile* dest, uint64_t dest_length = 0);
  // Appends one record (payload may be empty or span many blocks). Does not
  // Sync; the caller decides durability.
  Status AddRecord(std::string_view payload);

 private:
  WritableFile* dest_;
  size_t block_offset_;
};

class Reader {
 public:
  // Does not take ownership. fname is used in error messages.
  Reader(SequentialFile* file, std::string fname);
  // Reads the next whole record into *record (scratch may back it).
  // Returns false at the end of the log. A torn or corrupt tail ends the log
  // too; then tail_corrupted() is true and what_happened() says why, so the
  // caller can tell "clean end" from "damaged" (the WAL tolerates a torn
  // tail; the manifest reports Corruption).
  bool ReadRecord(std::string_view* record, std::string* scratch);
  bool tail_corrupted() const { return tail_corrupted_; }
  const std::string& what_happened() const { return what_happened_; }
  // An I/O error of the underlying file, if any.
  Status status() const { return status_; }

 private:
  SequentialFile* file_;
  std::string fname_;
  std::string buffer_storage_;
  std::string_view buffer_;
  bool eof_ = false;
  bool tail_corrupted_ = false;
  std::string what_happened_;
  Status status_;
};

}  // namespace lsm::log

#endif  // LSM_SRC_LOG_LOG_FORMAT_H_
