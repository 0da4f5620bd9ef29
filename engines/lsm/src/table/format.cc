#include "table/format.h"

#include "util/coding.h"
#include "util/crc32c.h"

namespace lsm {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset);
  PutVarint64(dst, size);
}

bool BlockHandle::DecodeFrom(std::string_view* input) {
  return GetVarint64(input, &offset) && GetVarint64(input, &size);
}

// Layout: index, filter, meta handles as fixed64 pairs (48 bytes), version
// (fixed32), masked crc32c of the preceding 52 bytes (fixed32), magic
// (fixed64). Fixed-width fields keep the footer a fixed size, so a reader
// finds it from the file size alone.
void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  for (const BlockHandle* h : {&index, &filter, &meta}) {
    PutFixed64(dst, h->offset);
    PutFixed64(dst, h->size);
  }
  PutFixed32(dst, version);
  PutFixed32(dst, crc32c::Mask(crc32c::Value(dst->data() + start, 52)));
  PutFixed64(dst, kTableMagic);
}

const char* Footer::DecodeFrom(std::string_view input) {
  if (input.size() != kFooterSize) return "truncated footer";
  const char* p = input.data();
  // Magic first: a file that is not a table (or was cut at the wrong
  // place) should say so rather than report a checksum mismatch.
  if (DecodeFixed64(p + 56) != kTableMagic) return "bad magic number (not a table or truncated)";
  if (crc32c::Unmask(DecodeFixed32(p + 52)) != crc32c::Value(p, 52)) {
    return "bad footer checksum";
  }
  version = DecodeFixed32(p + 48);
  if (version != kTableFormatVersion) return "unsupported table format version";
  BlockHandle* handles[] = {&index, &filter, &meta};
  for (int i = 0; i < 3; i++) {
    handles[i]->offset = DecodeFixed64(p + 16 * i);
    handles[i]->size = DecodeFixed64(p + 16 * i + 8);
  }
  return nullptr;
}

Status TableCorruption(std::string_view what, const std::string& fname, uint64_t offset) {
  return Status::Corruption(what, fname + " at offset " + std::to_string(offset));
}

Status TableCorruption(std::string_view what, const std::string& fname) {
  return Status::Corruption(what, fname);
}

Status ReadBlock(const RandomAccessFile* file, const BlockHandle& handle, bool verify_checksum,
                 const std::string& fname, char* scratch, std::string_view* contents) {
  const size_t n = static_cast<size_t>(handle.size) + kBlockTrailerSize;
  std::string_view data;
  Status s = file->Read(handle.offset, n, &data, scratch);
  if (!s.ok()) return s;
  if (data.size() != n) return TableCorruption("truncated block read", fname, handle.offset);
  const size_t size = static_cast<size_t>(handle.size);
  if (verify_checksum) {
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(data.data() + size));
    if (crc32c::Value(data.data(), size) != expected) {
      return TableCorruption("bad block checksum", fname, handle.offset);
    }
  }
  *contents = data.substr(0, size);
  return Status::OK();
}

}  // namespace lsm
