// RocksDB query traces (DB::StartTrace, db_bench --trace_file): a streaming
// reader that turns a trace into operations, and a writer of traces that
// RocksDB's own replayer (db_bench --benchmarks=replay) accepts.
//
// The format, as of RocksDB 7.8.3 (trace_replay/trace_replay.{h,cc},
// include/rocksdb/trace_record.h, utilities/trace/, db/write_batch.cc): a file
// of records, each a timestamp (fixed64, microseconds), a type byte, a
// payload length (fixed32) and the payload. The first record (kTraceBegin)
// holds the header text with the magic and the trace version; the last one
// (kTraceEnd) is written by EndTrace. Version 0.2 payloads start with a
// fixed64 map of the fields that follow; version 0.1 (RocksDB before 6.18)
// has a fixed layout and no MultiGet. Both are read; 0.2 is written.
//
// This is our own decoder, with no RocksDB dependency: the driver builds
// without librocksdb.
#ifndef LSMBENCH_DRIVER_ROCKSDB_TRACE_H_
#define LSMBENCH_DRIVER_ROCKSDB_TRACE_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/status.h"

namespace lsmbench {
namespace driver {

using lsm::Status;

enum class TraceOpKind : uint8_t {
  kPut,           // a Put (or Put to a column family) of a batch
  kDelete,        // a Delete of a batch
  kSingleDelete,  // a SingleDelete of a batch
  kMerge,         // a Merge of a batch: value is the operand
  kDeleteRange,   // a DeleteRange of a batch: [key, end_key)
  kGet,           // a Get record
  kMultiGet,      // one key of a MultiGet record
  kSeek,          // an iterator's Seek (its Nexts are not traced)
  kSeekForPrev,   // an iterator's SeekForPrev
};
constexpr int kTraceOpKindCount = 9;

// "put", "delete", "single_delete", "merge", "delete_range", "get",
// "multiget", "seek", "seek_for_prev".
const char* TraceOpKindName(TraceOpKind kind);

// "begin", "end", "write", "get", "iterator_seek", "iterator_seek_for_prev",
// "block_trace_index_block", ..., "io_tracer", "multiget"; "type_<n>" for a
// value RocksDB does not define.
std::string TraceRecordTypeName(uint8_t type);

// One operation of a trace. A Write record whose batch holds N entries gives
// N ops with the record's timestamp, in batch order; a MultiGet of N keys
// gives N kMultiGet ops with its timestamp.
struct TraceOp {
  TraceOpKind kind = TraceOpKind::kGet;
  uint64_t timestamp_us = 0;   // the record's, as traced (the tracer's clock)
  uint32_t column_family = 0;  // 0: the default column family
  std::string key;             // kDeleteRange: the range's first key
  // kPut, kMerge: the value's (operand's) size; the bytes themselves are in
  // `value` only when the reader keeps values (RocksDbTraceReaderOptions).
  uint64_t value_size = 0;
  std::string value;
  std::string end_key;      // kDeleteRange: the range's end (exclusive)
  std::string lower_bound;  // seeks: ReadOptions::iterate_lower_bound; empty
  std::string upper_bound;  // when none (RocksDB traces only non-empty ones)

  // Where it came from: the record's byte offset in the file, its type, and
  // this op's position among the ops of that record.
  uint64_t record_offset = 0;
  uint8_t record_type = 0;
  uint32_t index_in_record = 0;
  uint32_t ops_in_record = 1;
};

struct RocksDbTraceReaderOptions {
  // A record that declares a longer payload is an error (a corrupt length
  // would otherwise make the reader allocate gigabytes). The reader's buffer
  // never holds more than one record plus kReadChunkBytes.
  uint64_t max_payload_bytes = 64ull << 20;
  // Copy values (puts, merge operands) into TraceOp::value; otherwise only
  // value_size is set.
  bool keep_values = false;
};

// What a reader has seen so far (all of the trace once Next returned false
// with an OK status).
struct RocksDbTraceStats {
  uint64_t records = 0;  // every record, the header and end records included
  uint64_t records_by_type[256] = {};  // indexed by the type byte
  // Records of types that give no ops (block cache and IO trace types, which
  // RocksDB writes to separate files, but a query trace may hold them too):
  // counted in records_by_type and skipped.
  uint64_t skipped_records = 0;
  // Batch entries that give no ops, by name: markers (noop, log_data,
  // begin_prepare, end_prepare, commit, commit_with_timestamp, rollback,
  // begin_persisted_prepare, begin_unprepare) and the entries a key-value
  // replay cannot redo (blob_index, wide_column_entity).
  std::map<std::string, uint64_t> skipped_batch_entries;
  uint64_t ops = 0;
  uint64_t ops_by_kind[kTraceOpKindCount] = {};
  uint64_t first_timestamp_us = 0;  // the header record's
  uint64_t last_timestamp_us = 0;   // the last record's read
  uint64_t bytes_read = 0;          // through the last record read
};

// Streams the ops of a trace file, one record in memory at a time:
//
//   RocksDbTraceReader reader;
//   Status s = reader.Open(path);
//   TraceOp op;
//   while (s.ok() && reader.Next(&op)) { ... }
//   if (s.ok()) s = reader.status();
//
// Every error names the file, the byte offset and what is wrong there. A
// trace that stops at a record boundary without its end record (the tracing
// process ended without EndTrace) is read to its last record: not an error,
// but notice() says so. Bytes after the end record are not read; notice()
// counts them.
class RocksDbTraceReader {
 public:
  static constexpr size_t kReadChunkBytes = 64 << 10;
  // A header longer than this is not RocksDB's (its text is ~90 bytes).
  static constexpr size_t kMaxHeaderPayloadBytes = 4096;

  explicit RocksDbTraceReader(const RocksDbTraceReaderOptions& options = {});
  ~RocksDbTraceReader();
  RocksDbTraceReader(const RocksDbTraceReader&) = delete;
  RocksDbTraceReader& operator=(const RocksDbTraceReader&) = delete;

  // Opens path and reads and checks its header record (magic, version).
  Status Open(const std::string& path);

  // The next op: false at the end of the trace or on an error (status()).
  bool Next(TraceOp* op);
  const Status& status() const { return status_; }

  // From the header: "0.1" or "0.2"; "7.8" (the tracing RocksDB's version).
  const std::string& trace_version() const { return trace_version_; }
  const std::string& rocksdb_version() const { return rocksdb_version_; }
  uint64_t header_timestamp_us() const { return stats_.first_timestamp_us; }

  // Once Next returned false with an OK status:
  bool end_record_seen() const { return end_record_seen_; }
  uint64_t trailing_bytes() const { return trailing_bytes_; }
  // "" when the trace ended with its end record and nothing after it; else
  // what was unusual (no end record; bytes after it).
  std::string notice() const;

  const RocksDbTraceStats& stats() const { return stats_; }
  // The buffer's current and largest size; it stays within buffer_limit().
  size_t buffer_bytes() const { return buffer_.size(); }
  size_t peak_buffer_bytes() const { return peak_buffer_bytes_; }
  size_t buffer_limit() const;

 private:
  struct Record {
    uint64_t offset = 0;
    uint64_t timestamp_us = 0;
    uint8_t type = 0;
    const char* payload = nullptr;
    size_t payload_bytes = 0;
  };

  Status ReadHeader();
  // Reads the next record into record_ (its payload points into buffer_).
  // False at a clean end of file (no bytes left) or on an error.
  bool ReadRecord();
  // Makes n bytes from the next unread one available in buffer_, reading
  // more from the file; false if the file ends first.
  bool Fill(size_t n);
  // Sets up the ops of record_; false (and status_) if it is malformed.
  bool StartRecord();
  bool CheckWriteBatch(const char* rep, size_t n);
  void EmitPending(TraceOp* op);
  Status Error(uint64_t offset, const std::string& what) const;
  Status RecordError(const std::string& what) const;

  const RocksDbTraceReaderOptions options_;
  std::string path_;
  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  Status status_;
  bool finished_ = false;

  // buffer_[start_, end_) holds the file's bytes from offset_ on.
  std::vector<char> buffer_;
  size_t start_ = 0;
  size_t end_ = 0;
  uint64_t offset_ = 0;
  bool file_ended_ = false;
  size_t peak_buffer_bytes_ = 0;

  std::string trace_version_;
  std::string rocksdb_version_;
  int minor_version_ = 0;  // 1 or 2
  bool end_record_seen_ = false;
  uint64_t trailing_bytes_ = 0;
  uint64_t last_record_offset_ = 0;

  // The record being turned into ops.
  Record record_;
  uint32_t pending_ops_ = 0;  // ops of record_ not yet returned
  uint32_t record_ops_ = 0;
  std::string_view batch_;    // kTraceWrite: the entries after the header
  std::string_view cf_ids_;   // kTraceMultiGet: fixed32 per key
  std::string_view mg_keys_;  // kTraceMultiGet: length-prefixed keys
  TraceOp single_;            // kTraceGet, seeks: the op, decoded already

  RocksDbTraceStats stats_;
};

// Writes a query trace in format 0.2 with payload maps, as RocksDB 7.8's
// Tracer does, which db_bench --benchmarks=replay reads and executes. The
// header says "RocksDB Version: 7.8": the version whose format this follows.
class RocksDbTraceWriter {
 public:
  RocksDbTraceWriter() = default;
  // Closes the file without an end record if Finish was not called.
  ~RocksDbTraceWriter();
  RocksDbTraceWriter(const RocksDbTraceWriter&) = delete;
  RocksDbTraceWriter& operator=(const RocksDbTraceWriter&) = delete;

  // Creates (truncates) path and writes the header record. RocksDB's replayer
  // sleeps until each record's time relative to the header's: stamp the
  // records from about header_timestamp_us on.
  Status Open(const std::string& path, uint64_t header_timestamp_us);

  // One record per op: a write kind becomes a Write record whose batch holds
  // it alone; kGet a Get, kMultiGet a MultiGet of its one key, kSeek and
  // kSeekForPrev their iterator records (with the op's non-empty bounds).
  // A put's or merge's value is op.value when that holds value_size bytes,
  // else (empty) value_size filler bytes.
  Status Append(const TraceOp& op);
  // One Write record holding the write ops as one batch, stamped with the
  // first op's timestamp.
  Status AppendBatch(const std::vector<TraceOp>& ops);
  // One MultiGet record of the ops' keys (kGet or kMultiGet ops), stamped
  // with the first op's timestamp.
  Status AppendMultiGet(const std::vector<TraceOp>& ops);
  // Writes the end record (kTraceEnd) and closes the file.
  Status Finish(uint64_t end_timestamp_us);

  uint64_t bytes_written() const { return bytes_written_; }

 private:
  Status WriteRecord(uint64_t timestamp_us, uint8_t type, const std::string& payload);
  Status AddToBatch(const TraceOp& op, std::string* rep);

  std::string path_;
  FILE* file_ = nullptr;
  uint64_t bytes_written_ = 0;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ROCKSDB_TRACE_H_
