// Shared pieces of the table file format (layout in table/FORMAT.md): block
// handles, the footer, and reading one checksummed block.
#ifndef LSM_SRC_TABLE_FORMAT_H_
#define LSM_SRC_TABLE_FORMAT_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lsm/env.h"
#include "lsm/status.h"

namespace lsm {

// Every block is followed by the masked crc32c of its contents.
inline constexpr size_t kBlockTrailerSize = 4;

inline constexpr uint32_t kTableFormatVersion = 1;
// On disk (little-endian) the magic reads "lsmbTBL\x1a".
inline constexpr uint64_t kTableMagic = 0x1a4c4254626d736cull;
inline constexpr size_t kFooterSize = 64;

// Restart interval of data blocks (index and meta blocks use 1).
inline constexpr int kDataBlockRestartInterval = 16;

// Where a block lives: its contents span [offset, offset + size); the
// trailer follows.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;

  // End of the block's trailer: where the next block starts.
  uint64_t end() const { return offset + size + kBlockTrailerSize; }

  // Index entry values: varint64 offset, varint64 size.
  void EncodeTo(std::string* dst) const;
  bool DecodeFrom(std::string_view* input);
};

struct Footer {
  BlockHandle index;
  BlockHandle filter;  // size 0: the table has no filter
  BlockHandle meta;
  uint32_t version = kTableFormatVersion;

  // Appends exactly kFooterSize bytes.
  void EncodeTo(std::string* dst) const;
  // Parses kFooterSize bytes. Returns nullptr, or what is wrong ("bad magic
  // number", ...) for the caller to wrap into a Status naming the file.
  const char* DecodeFrom(std::string_view input);
};

// Corruption of file fname, e.g. "Corruption: bad block checksum:
// /db/000012.sst at offset 4100".
Status TableCorruption(std::string_view what, const std::string& fname, uint64_t offset);
Status TableCorruption(std::string_view what, const std::string& fname);

// Reads the block at handle and its trailer into scratch (which must hold
// handle.size + kBlockTrailerSize bytes) and sets *contents to the block's
// contents, which point into scratch or into storage the file owns. Checks
// the trailer checksum if verify_checksum.
Status ReadBlock(const RandomAccessFile* file, const BlockHandle& handle, bool verify_checksum,
                 const std::string& fname, char* scratch, std::string_view* contents);

// A growable scratch buffer for ReadBlock that never shrinks, so iterating
// a table allocates only when a block is larger than every one before it.
class BlockBuffer {
 public:
  char* Reserve(size_t n) {
    if (n > capacity_) {
      capacity_ = std::max(n, 2 * capacity_);
      data_ = std::make_unique<char[]>(capacity_);
    }
    return data_.get();
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

}  // namespace lsm

#endif  // LSM_SRC_TABLE_FORMAT_H_
