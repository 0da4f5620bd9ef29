// The trace writer: format 0.2 records as RocksDB 7.8.3's Tracer writes them
// (trace_replay/trace_replay.cc: WriteHeader, Write, Get, IteratorSeek,
// IteratorSeekForPrev, MultiGet, WriteFooter), with batch reps laid out as
// db/write_batch.cc reads them.
#include <errno.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "driver/rocksdb_trace.h"
#include "driver/rocksdb_trace_format.h"

namespace lsmbench {
namespace driver {

using namespace rocksdb_trace;

namespace {

constexpr uint64_t Bit(int field) { return uint64_t{1} << field; }

bool IsWriteKind(TraceOpKind k) {
  return k == TraceOpKind::kPut || k == TraceOpKind::kDelete || k == TraceOpKind::kSingleDelete ||
         k == TraceOpKind::kMerge || k == TraceOpKind::kDeleteRange;
}

}  // namespace

RocksDbTraceWriter::~RocksDbTraceWriter() {
  if (file_ != nullptr) fclose(file_);
}

Status RocksDbTraceWriter::Open(const std::string& path, uint64_t header_timestamp_us) {
  if (file_ != nullptr) return Status::InvalidArgument(path_, "already open");
  path_ = path;
  file_ = fopen(path.c_str(), "wbe");
  if (file_ == nullptr) return Status::IOError(path, strerror(errno));
  // The text of Tracer::WriteHeader. The replayer parses both versions and
  // requires a single dot in each.
  std::string header(kMagic);
  header += "\t";
  header += kVersionField;
  header += "0.2\t";
  header += kRocksDbVersionField;
  header += "7.8\tFormat: Timestamp OpType Payload\n";
  return WriteRecord(header_timestamp_us, kTraceBegin, header);
}

Status RocksDbTraceWriter::WriteRecord(uint64_t timestamp_us, uint8_t type,
                                       const std::string& payload) {
  if (file_ == nullptr) return Status::InvalidArgument(path_, "not open");
  if (payload.size() > UINT32_MAX) {
    return Status::InvalidArgument(path_, "a record payload beyond 4 GiB");
  }
  std::string head;
  PutFixed64(&head, timestamp_us);
  head.push_back(static_cast<char>(type));
  PutFixed32(&head, static_cast<uint32_t>(payload.size()));
  if (fwrite(head.data(), 1, head.size(), file_) != head.size() ||
      fwrite(payload.data(), 1, payload.size(), file_) != payload.size()) {
    return Status::IOError(path_, strerror(errno));
  }
  bytes_written_ += head.size() + payload.size();
  return Status::OK();
}

Status RocksDbTraceWriter::AddToBatch(const TraceOp& op, std::string* rep) {
  const bool cf = op.column_family != 0;
  uint8_t tag = 0;
  switch (op.kind) {
    case TraceOpKind::kPut: tag = cf ? kTypeColumnFamilyValue : kTypeValue; break;
    case TraceOpKind::kDelete: tag = cf ? kTypeColumnFamilyDeletion : kTypeDeletion; break;
    case TraceOpKind::kSingleDelete:
      tag = cf ? kTypeColumnFamilySingleDeletion : kTypeSingleDeletion;
      break;
    case TraceOpKind::kMerge: tag = cf ? kTypeColumnFamilyMerge : kTypeMerge; break;
    case TraceOpKind::kDeleteRange:
      tag = cf ? kTypeColumnFamilyRangeDeletion : kTypeRangeDeletion;
      break;
    default:
      return Status::InvalidArgument(path_, std::string("a ") + TraceOpKindName(op.kind) +
                                                " op in a write batch");
  }
  rep->push_back(static_cast<char>(tag));
  if (cf) PutVarint32(rep, op.column_family);
  PutLengthPrefixed(rep, op.key);
  if (op.kind == TraceOpKind::kDeleteRange) {
    PutLengthPrefixed(rep, op.end_key);
  } else if (op.kind == TraceOpKind::kPut || op.kind == TraceOpKind::kMerge) {
    if (op.value.size() == op.value_size) {
      PutLengthPrefixed(rep, op.value);
    } else if (op.value.empty()) {
      // Only the size is known (a reader that kept no values): filler.
      if (op.value_size > UINT32_MAX) return Status::InvalidArgument(path_, "a value beyond 4 GiB");
      PutVarint32(rep, static_cast<uint32_t>(op.value_size));
      static constexpr std::string_view kFiller = "abcdefghijklmnopqrstuvwxyz";
      for (uint64_t done = 0; done < op.value_size; done += kFiller.size()) {
        rep->append(kFiller.substr(0, std::min<uint64_t>(kFiller.size(), op.value_size - done)));
      }
    } else {
      return Status::InvalidArgument(
          path_, "an op's value holds " + std::to_string(op.value.size()) +
                     " bytes, its value_size says " + std::to_string(op.value_size));
    }
  }
  return Status::OK();
}

Status RocksDbTraceWriter::AppendBatch(const std::vector<TraceOp>& ops) {
  if (ops.empty()) return Status::InvalidArgument(path_, "an empty write batch");
  // Sequence 0: the tracer records the batch before the write assigns one.
  std::string rep;
  PutFixed64(&rep, 0);
  PutFixed32(&rep, static_cast<uint32_t>(ops.size()));
  for (const TraceOp& op : ops) {
    Status s = AddToBatch(op, &rep);
    if (!s.ok()) return s;
  }
  std::string payload;
  PutFixed64(&payload, Bit(kWriteBatchData));
  PutLengthPrefixed(&payload, rep);
  return WriteRecord(ops.front().timestamp_us, kTraceWrite, payload);
}

Status RocksDbTraceWriter::AppendMultiGet(const std::vector<TraceOp>& ops) {
  if (ops.empty()) return Status::InvalidArgument(path_, "a MultiGet of no keys");
  std::string cf_ids, keys;
  for (const TraceOp& op : ops) {
    if (op.kind != TraceOpKind::kGet && op.kind != TraceOpKind::kMultiGet) {
      return Status::InvalidArgument(path_, std::string("a ") + TraceOpKindName(op.kind) +
                                                " op in a MultiGet");
    }
    PutFixed32(&cf_ids, op.column_family);
    PutLengthPrefixed(&keys, op.key);
  }
  std::string payload;
  PutFixed64(&payload, Bit(kMultiGetSize) | Bit(kMultiGetCFIDs) | Bit(kMultiGetKeys));
  PutFixed32(&payload, static_cast<uint32_t>(ops.size()));
  PutLengthPrefixed(&payload, cf_ids);
  PutLengthPrefixed(&payload, keys);
  return WriteRecord(ops.front().timestamp_us, kTraceMultiGet, payload);
}

Status RocksDbTraceWriter::Append(const TraceOp& op) {
  if (IsWriteKind(op.kind)) return AppendBatch({op});
  if (op.kind == TraceOpKind::kMultiGet) return AppendMultiGet({op});
  std::string payload;
  if (op.kind == TraceOpKind::kGet) {
    PutFixed64(&payload, Bit(kGetCFID) | Bit(kGetKey));
    PutFixed32(&payload, op.column_family);
    PutLengthPrefixed(&payload, op.key);
    return WriteRecord(op.timestamp_us, kTraceGet, payload);
  }
  // Seeks: the bounds only when not empty, as Tracer::IteratorSeek does.
  uint64_t map = Bit(kIterCFID) | Bit(kIterKey);
  if (!op.lower_bound.empty()) map |= Bit(kIterLowerBound);
  if (!op.upper_bound.empty()) map |= Bit(kIterUpperBound);
  PutFixed64(&payload, map);
  PutFixed32(&payload, op.column_family);
  PutLengthPrefixed(&payload, op.key);
  if (!op.lower_bound.empty()) PutLengthPrefixed(&payload, op.lower_bound);
  if (!op.upper_bound.empty()) PutLengthPrefixed(&payload, op.upper_bound);
  return WriteRecord(op.timestamp_us,
                     op.kind == TraceOpKind::kSeek ? kTraceIteratorSeek : kTraceIteratorSeekForPrev,
                     payload);
}

Status RocksDbTraceWriter::Finish(uint64_t end_timestamp_us) {
  Status s = WriteRecord(end_timestamp_us, kTraceEnd, "");
  if (file_ != nullptr) {
    const bool failed = fflush(file_) != 0 || ferror(file_) != 0;
    const int saved = errno;
    if (fclose(file_) != 0 && s.ok()) s = Status::IOError(path_, strerror(errno));
    file_ = nullptr;
    if (failed && s.ok()) s = Status::IOError(path_, strerror(saved));
  }
  return s;
}

}  // namespace driver
}  // namespace lsmbench
