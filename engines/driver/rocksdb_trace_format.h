// The constants and byte coding of RocksDB's query-trace format, shared by
// the reader (rocksdb_trace.cc) and the writer (rocksdb_trace_writer.cc).
// Internal to those two files.
//
// Read from RocksDB v7.8.3 (the version Debian's rocksdb-tools ships here):
//   trace_replay/trace_replay.{h,cc}   records, the header text, the payload
//                                      map and each query's payload fields
//   include/rocksdb/trace_record.h     the TraceType values
//   utilities/trace/file_trace_reader_writer.cc
//                                      a file is the records back to back
//   db/write_batch.cc, db/dbformat.h   the WriteBatch rep and its tags
//   util/coding.h                      fixed32/64 little-endian, varint32,
//                                      varint32-length-prefixed slices
// No RocksDB code is used: this is our own decoder of that layout.
#ifndef LSMBENCH_DRIVER_ROCKSDB_TRACE_FORMAT_H_
#define LSMBENCH_DRIVER_ROCKSDB_TRACE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lsmbench {
namespace driver {
namespace rocksdb_trace {

// record := timestamp (fixed64, microseconds) type (1 byte)
//           payload_length (fixed32) payload
constexpr size_t kRecordHeaderBytes = 8 + 1 + 4;

// The header record's payload starts with this text (trace_replay.cc's
// kTraceMagic), then "\tTrace Version: 0.2\tRocksDB Version: 7.8\t
// Format: Timestamp OpType Payload\n". Block cache and IO traces start with
// the same magic, but length-prefixed (block_cache_tracer.cc, io_tracer.cc).
constexpr std::string_view kMagic = "feedcafedeadbeef";
constexpr std::string_view kVersionField = "Trace Version: ";
constexpr std::string_view kRocksDbVersionField = "RocksDB Version: ";

// TraceType (include/rocksdb/trace_record.h).
enum RecordType : uint8_t {
  kTraceNone = 0,
  kTraceBegin = 1,
  kTraceEnd = 2,
  kTraceWrite = 3,
  kTraceGet = 4,
  kTraceIteratorSeek = 5,
  kTraceIteratorSeekForPrev = 6,
  kBlockTraceIndexBlock = 7,
  kBlockTraceFilterBlock = 8,
  kBlockTraceDataBlock = 9,
  kBlockTraceUncompressionDictBlock = 10,
  kBlockTraceRangeDeletionBlock = 11,
  kIOTracer = 12,
  kTraceMultiGet = 13,
  kRecordTypeCount = 14,  // kTraceMax: every valid type is below it
};

// Version 0.2 payloads start with a fixed64 bit map: bit i set means field i
// (TracePayloadType, trace_replay.h) follows, in increasing bit order.
enum PayloadField : int {
  kEmptyPayload = 0,    // the end record's (its payload is empty anyway)
  kWriteBatchData = 1,  // length-prefixed WriteBatch rep
  kGetCFID = 2,         // fixed32
  kGetKey = 3,          // length-prefixed
  kIterCFID = 4,        // fixed32
  kIterKey = 5,         // length-prefixed
  kIterLowerBound = 6,  // length-prefixed; written only when not empty
  kIterUpperBound = 7,  // length-prefixed; written only when not empty
  kMultiGetSize = 8,    // fixed32: the number of keys
  kMultiGetCFIDs = 9,   // length-prefixed: fixed32 per key
  kMultiGetKeys = 10,   // length-prefixed: a length-prefixed slice per key
};

// WriteBatch rep (db/write_batch.cc): sequence (fixed64) count (fixed32)
// then records, each a tag byte (ValueType, db/dbformat.h) and its fields.
// `count` counts the entries that change data, not the markers.
constexpr size_t kBatchHeaderBytes = 12;
enum BatchTag : uint8_t {
  kTypeDeletion = 0x0,                    // key
  kTypeValue = 0x1,                       // key value
  kTypeMerge = 0x2,                       // key value
  kTypeLogData = 0x3,                     // blob; not counted
  kTypeColumnFamilyDeletion = 0x4,        // cf key
  kTypeColumnFamilyValue = 0x5,           // cf key value
  kTypeColumnFamilyMerge = 0x6,           // cf key value
  kTypeSingleDeletion = 0x7,              // key
  kTypeColumnFamilySingleDeletion = 0x8,  // cf key
  kTypeBeginPrepareXID = 0x9,             // (nothing); not counted
  kTypeEndPrepareXID = 0xA,               // xid; not counted
  kTypeCommitXID = 0xB,                   // xid; not counted
  kTypeRollbackXID = 0xC,                 // xid; not counted
  kTypeNoop = 0xD,                        // (nothing); not counted
  kTypeColumnFamilyRangeDeletion = 0xE,   // cf begin end
  kTypeRangeDeletion = 0xF,               // begin end
  kTypeColumnFamilyBlobIndex = 0x10,      // cf key blob-index
  kTypeBlobIndex = 0x11,                  // key blob-index
  kTypeBeginPersistedPrepareXID = 0x12,   // (nothing); not counted
  kTypeBeginUnprepareXID = 0x13,          // (nothing); not counted
  // 0x14, kTypeDeletionWithTimestamp, never appears in a batch.
  kTypeCommitXIDAndTimestamp = 0x15,         // timestamp xid; not counted
  kTypeWideColumnEntity = 0x16,              // key entity
  kTypeColumnFamilyWideColumnEntity = 0x17,  // cf key entity
};

// --- util/coding.h's encodings, written out ---

inline uint32_t DecodeFixed32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
}

inline uint64_t DecodeFixed64(const char* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) |
         static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32;
}

inline void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline void PutVarint32(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline void PutLengthPrefixed(std::string* out, std::string_view s) {
  PutVarint32(out, static_cast<uint32_t>(s.size()));
  out->append(s.data(), s.size());
}

// A cursor over a byte range; every Get fails (false) rather than read past
// the end, and leaves the cursor where it was then.
class Cursor {
 public:
  Cursor(const char* begin, const char* end) : begin_(begin), p_(begin), end_(end) {}
  explicit Cursor(std::string_view s) : Cursor(s.data(), s.data() + s.size()) {}

  bool empty() const { return p_ == end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t position() const { return static_cast<size_t>(p_ - begin_); }

  bool GetByte(uint8_t* v) {
    if (p_ == end_) return false;
    *v = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool GetFixed32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = DecodeFixed32(p_);
    p_ += 4;
    return true;
  }
  bool GetFixed64(uint64_t* v) {
    if (remaining() < 8) return false;
    *v = DecodeFixed64(p_);
    p_ += 8;
    return true;
  }
  // At most 5 bytes; a fifth byte above 0x0f would overflow 32 bits.
  bool GetVarint32(uint32_t* v) {
    uint32_t result = 0;
    const char* p = p_;
    for (int shift = 0; shift <= 28 && p < end_; shift += 7) {
      const uint32_t byte = static_cast<unsigned char>(*p++);
      if (shift == 28 && byte > 0x0f) return false;
      result |= (byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        p_ = p;
        return true;
      }
    }
    return false;
  }
  bool GetLengthPrefixed(std::string_view* s) {
    const char* saved = p_;
    uint32_t n = 0;
    if (!GetVarint32(&n) || remaining() < n) {
      p_ = saved;
      return false;
    }
    *s = std::string_view(p_, n);
    p_ += n;
    return true;
  }

 private:
  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace rocksdb_trace
}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ROCKSDB_TRACE_FORMAT_H_
