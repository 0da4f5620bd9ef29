// The trace reader: records off a bounded buffer, payloads into ops. The
// layout is RocksDB 7.8.3's (see rocksdb_trace_format.h for the files).
#include "driver/rocksdb_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "driver/rocksdb_trace_format.h"

namespace lsmbench {
namespace driver {

using namespace rocksdb_trace;

const char* TraceOpKindName(TraceOpKind kind) {
  switch (kind) {
    case TraceOpKind::kPut: return "put";
    case TraceOpKind::kDelete: return "delete";
    case TraceOpKind::kSingleDelete: return "single_delete";
    case TraceOpKind::kMerge: return "merge";
    case TraceOpKind::kDeleteRange: return "delete_range";
    case TraceOpKind::kGet: return "get";
    case TraceOpKind::kMultiGet: return "multiget";
    case TraceOpKind::kSeek: return "seek";
    case TraceOpKind::kSeekForPrev: return "seek_for_prev";
  }
  return "unknown";
}

std::string TraceRecordTypeName(uint8_t type) {
  static const char* const kNames[kRecordTypeCount] = {
      "none",
      "begin",
      "end",
      "write",
      "get",
      "iterator_seek",
      "iterator_seek_for_prev",
      "block_trace_index_block",
      "block_trace_filter_block",
      "block_trace_data_block",
      "block_trace_uncompression_dict_block",
      "block_trace_range_deletion_block",
      "io_tracer",
      "multiget",
  };
  if (type < kRecordTypeCount) return kNames[type];
  return "type_" + std::to_string(type);
}

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// --- payload fields (version 0.2) ---

// The fields a record type may carry, and which of them it must.
struct FieldSet {
  uint64_t allowed;
  uint64_t required;
};

constexpr uint64_t Bit(int field) { return uint64_t{1} << field; }

FieldSet FieldsOf(uint8_t type) {
  switch (type) {
    case kTraceWrite: return {Bit(kWriteBatchData), Bit(kWriteBatchData)};
    case kTraceGet: return {Bit(kGetCFID) | Bit(kGetKey), Bit(kGetKey)};
    case kTraceIteratorSeek:
    case kTraceIteratorSeekForPrev:
      return {Bit(kIterCFID) | Bit(kIterKey) | Bit(kIterLowerBound) | Bit(kIterUpperBound),
              Bit(kIterKey)};
    case kTraceMultiGet: {
      const uint64_t all = Bit(kMultiGetSize) | Bit(kMultiGetCFIDs) | Bit(kMultiGetKeys);
      return {all, all};
    }
  }
  return {0, 0};
}

bool IsFixed32Field(int field) {
  return field == kGetCFID || field == kIterCFID || field == kMultiGetSize;
}

const char* FieldName(int field) {
  switch (field) {
    case kEmptyPayload: return "empty_payload";
    case kWriteBatchData: return "write_batch";
    case kGetCFID:
    case kIterCFID: return "column_family";
    case kGetKey:
    case kIterKey: return "key";
    case kIterLowerBound: return "lower_bound";
    case kIterUpperBound: return "upper_bound";
    case kMultiGetSize: return "multiget_size";
    case kMultiGetCFIDs: return "multiget_column_families";
    case kMultiGetKeys: return "multiget_keys";
  }
  return "unknown";
}

constexpr int kFieldCount = 11;

// A payload's fields, by their TracePayloadType bit.
struct Fields {
  uint64_t present = 0;
  uint32_t fixed[kFieldCount] = {};
  std::string_view slice[kFieldCount];
};

// Decodes a version 0.2 payload: "" or what is wrong.
std::string DecodeMappedPayload(uint8_t type, std::string_view payload, Fields* f) {
  Cursor c(payload);
  uint64_t map = 0;
  if (!c.GetFixed64(&map)) {
    return "its payload of " + std::to_string(payload.size()) +
           " bytes is shorter than the 8-byte payload map";
  }
  const FieldSet set = FieldsOf(type);
  if ((map & ~set.allowed) != 0) {
    int bad = 0;
    while (((map & ~set.allowed) & Bit(bad)) == 0) bad++;
    return "payload map " + Hex(map) + " names field " + std::to_string(bad) +
           ", which a " + TraceRecordTypeName(type) + " record does not have";
  }
  if ((map & set.required) != set.required) {
    int missing = 0;
    while (((set.required & ~map) & Bit(missing)) == 0) missing++;
    return "payload map " + Hex(map) + " lacks the " + FieldName(missing) + " field";
  }
  for (int field = 0; field < kFieldCount; field++) {
    if ((map & Bit(field)) == 0) continue;
    const bool ok = IsFixed32Field(field) ? c.GetFixed32(&f->fixed[field])
                                          : c.GetLengthPrefixed(&f->slice[field]);
    if (!ok) {
      return std::string("the payload (") + std::to_string(payload.size()) +
             " bytes) ends inside its " + FieldName(field) + " field";
    }
  }
  if (!c.empty()) {
    return std::to_string(c.remaining()) + " bytes follow the fields its payload map " +
           Hex(map) + " names";
  }
  f->present = map;
  return "";
}

// Decodes a version 0.1 payload (RocksDB 6.17 and before: trace_replay.cc
// there): a Write's payload is the batch rep itself; a Get's and a seek's are
// the column family (fixed32) and the key (length-prefixed); nothing else.
// The fields land in the 0.2 slots so one path handles both.
std::string DecodeFixedPayload(uint8_t type, std::string_view payload, Fields* f) {
  if (type == kTraceWrite) {
    f->slice[kWriteBatchData] = payload;
    f->present = Bit(kWriteBatchData);
    return "";
  }
  if (type == kTraceMultiGet) return "a MultiGet record in a version 0.1 trace (0.2 added them)";
  const int cf_field = type == kTraceGet ? kGetCFID : kIterCFID;
  const int key_field = type == kTraceGet ? kGetKey : kIterKey;
  Cursor c(payload);
  if (!c.GetFixed32(&f->fixed[cf_field]) || !c.GetLengthPrefixed(&f->slice[key_field])) {
    return "the payload (" + std::to_string(payload.size()) +
           " bytes) ends inside its column family or key";
  }
  if (!c.empty()) return std::to_string(c.remaining()) + " bytes follow its key";
  f->present = Bit(cf_field) | Bit(key_field);
  return "";
}

// --- write batch entries ---

struct BatchEntry {
  uint8_t tag = 0;
  uint32_t column_family = 0;
  std::string_view key;
  std::string_view value;  // kDeleteRange: the end key
  bool counted = false;    // in the rep's count (it changes data)
  bool is_op = false;      // gives an op of kind `kind`
  TraceOpKind kind = TraceOpKind::kPut;
  const char* name = "";   // for messages and skipped_batch_entries
};

// What follows a tag: column family (varint32), key, value; each optional.
struct TagLayout {
  const char* name;
  bool cf, key, value, counted, is_op;
  TraceOpKind kind;
};

// By tag (db/dbformat.h's ValueType); a null name is a tag that
// db/write_batch.cc's ReadRecordFromWriteBatch rejects. Blob indexes and
// wide-column entities are counted, but a key-value replay cannot redo them
// (a blob index points into blob files; an entity is a wide-column value).
// Markers are not counted; their one or two slices land in key and value.
constexpr TagLayout kNoOp = {nullptr, false, false, false, false, false, TraceOpKind::kPut};
constexpr TagLayout kTagLayouts[] = {
    {"delete", false, true, false, true, true, TraceOpKind::kDelete},               // 0x00
    {"put", false, true, true, true, true, TraceOpKind::kPut},                      // 0x01
    {"merge", false, true, true, true, true, TraceOpKind::kMerge},                  // 0x02
    {"log_data", false, true, false, false, false, TraceOpKind::kPut},              // 0x03
    {"delete", true, true, false, true, true, TraceOpKind::kDelete},                // 0x04
    {"put", true, true, true, true, true, TraceOpKind::kPut},                       // 0x05
    {"merge", true, true, true, true, true, TraceOpKind::kMerge},                   // 0x06
    {"single_delete", false, true, false, true, true, TraceOpKind::kSingleDelete},  // 0x07
    {"single_delete", true, true, false, true, true, TraceOpKind::kSingleDelete},   // 0x08
    {"begin_prepare", false, false, false, false, false, TraceOpKind::kPut},        // 0x09
    {"end_prepare", false, true, false, false, false, TraceOpKind::kPut},           // 0x0a
    {"commit", false, true, false, false, false, TraceOpKind::kPut},                // 0x0b
    {"rollback", false, true, false, false, false, TraceOpKind::kPut},              // 0x0c
    {"noop", false, false, false, false, false, TraceOpKind::kPut},                 // 0x0d
    {"delete_range", true, true, true, true, true, TraceOpKind::kDeleteRange},      // 0x0e
    {"delete_range", false, true, true, true, true, TraceOpKind::kDeleteRange},     // 0x0f
    {"blob_index", true, true, true, true, false, TraceOpKind::kPut},               // 0x10
    {"blob_index", false, true, true, true, false, TraceOpKind::kPut},              // 0x11
    {"begin_persisted_prepare", false, false, false, false, false, TraceOpKind::kPut},  // 0x12
    {"begin_unprepare", false, false, false, false, false, TraceOpKind::kPut},      // 0x13
    kNoOp,  // 0x14 kTypeDeletionWithTimestamp: never in a batch
    {"commit_with_timestamp", false, true, true, false, false, TraceOpKind::kPut},  // 0x15
    {"wide_column_entity", false, true, true, true, false, TraceOpKind::kPut},      // 0x16
    {"wide_column_entity", true, true, true, true, false, TraceOpKind::kPut},       // 0x17
};
static_assert(sizeof(kTagLayouts) / sizeof(kTagLayouts[0]) ==
                  kTypeColumnFamilyWideColumnEntity + 1,
              "one layout per tag up to kTypeColumnFamilyWideColumnEntity");

bool LayoutOf(uint8_t tag, TagLayout* l) {
  if (tag >= sizeof(kTagLayouts) / sizeof(kTagLayouts[0]) || kTagLayouts[tag].name == nullptr) {
    return false;
  }
  *l = kTagLayouts[tag];
  return true;
}

// Reads one entry: "" or what is wrong (`base`: the cursor's offset in the
// whole rep, for the message).
std::string ParseBatchEntry(Cursor* c, size_t base, BatchEntry* e) {
  const size_t at = base + c->position();
  uint8_t tag = 0;
  c->GetByte(&tag);
  TagLayout l;
  if (!LayoutOf(tag, &l)) {
    return "unknown tag " + Hex(tag) + " at byte " + std::to_string(at) + " of the batch";
  }
  e->tag = tag;
  e->name = l.name;
  e->counted = l.counted;
  e->is_op = l.is_op;
  e->kind = l.kind;
  e->column_family = 0;
  e->key = e->value = std::string_view();
  if ((l.cf && !c->GetVarint32(&e->column_family)) || (l.key && !c->GetLengthPrefixed(&e->key)) ||
      (l.value && !c->GetLengthPrefixed(&e->value))) {
    return std::string("the ") + l.name + " entry at byte " + std::to_string(at) +
           " runs past the batch's end";
  }
  return "";
}

}  // namespace

// --- the reader ---

RocksDbTraceReader::RocksDbTraceReader(const RocksDbTraceReaderOptions& options)
    : options_(options) {}

RocksDbTraceReader::~RocksDbTraceReader() {
  if (fd_ >= 0) close(fd_);
}

size_t RocksDbTraceReader::buffer_limit() const {
  return kRecordHeaderBytes +
         static_cast<size_t>(std::max<uint64_t>(options_.max_payload_bytes,
                                                kMaxHeaderPayloadBytes)) +
         kReadChunkBytes;
}

Status RocksDbTraceReader::Error(uint64_t offset, const std::string& what) const {
  return Status::Corruption(path_ + ": offset " + std::to_string(offset) + ": " + what);
}

Status RocksDbTraceReader::RecordError(const std::string& what) const {
  return Error(record_.offset, TraceRecordTypeName(record_.type) + " record: " + what);
}

Status RocksDbTraceReader::Open(const std::string& path) {
  path_ = path;
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return Status::IOError(path, strerror(errno));
  struct stat st;
  if (fstat(fd_, &st) != 0) return Status::IOError(path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::IOError(path, "a directory, not a trace file");
  file_bytes_ = static_cast<uint64_t>(st.st_size);
  buffer_.resize(kReadChunkBytes);
  peak_buffer_bytes_ = buffer_.size();
  status_ = ReadHeader();
  return status_;
}

bool RocksDbTraceReader::Fill(size_t n) {
  if (end_ - start_ >= n) return true;
  if (start_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  // Callers bound n (a record's size, its payload checked against the
  // limit), so the buffer is bounded too.
  if (buffer_.size() < n) {
    buffer_.resize(std::min(n + kReadChunkBytes, buffer_limit()));
    peak_buffer_bytes_ = std::max(peak_buffer_bytes_, buffer_.size());
  }
  while (end_ < n && !file_ended_) {
    const ssize_t got = read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got < 0) {
      if (errno == EINTR) continue;
      status_ = Status::IOError(path_ + ": reading at offset " + std::to_string(offset_ + end_),
                                strerror(errno));
      return false;
    }
    if (got == 0) file_ended_ = true;
    end_ += static_cast<size_t>(got);
  }
  return end_ - start_ >= n;
}

Status RocksDbTraceReader::ReadHeader() {
  if (file_bytes_ == 0) return Error(0, "empty file: not a RocksDB trace");
  if (!Fill(kRecordHeaderBytes)) {
    if (!status_.ok()) return status_;
    return Error(0, "truncated header: the file has " + std::to_string(end_ - start_) +
                        " bytes, a record's header needs " +
                        std::to_string(kRecordHeaderBytes));
  }
  const char* p = buffer_.data() + start_;
  const uint64_t timestamp = DecodeFixed64(p);
  const uint8_t type = static_cast<uint8_t>(p[8]);
  const uint32_t length = DecodeFixed32(p + 9);
  if (type != kTraceBegin) {
    return Error(0, "not a RocksDB trace: the first record's type is " + Hex(type) +
                        ", not kTraceBegin (0x1)");
  }
  if (length > kMaxHeaderPayloadBytes) {
    return Error(0, "not a RocksDB trace: the first record declares a payload of " +
                        std::to_string(length) + " bytes (a trace header's is under " +
                        std::to_string(kMaxHeaderPayloadBytes) + ")");
  }
  if (!Fill(kRecordHeaderBytes + length)) {
    if (!status_.ok()) return status_;
    return Error(0, "truncated header: a payload of " + std::to_string(length) +
                        " bytes declared, the file ends after " +
                        std::to_string(end_ - start_ - kRecordHeaderBytes) + " of them");
  }
  const std::string_view text(buffer_.data() + start_ + kRecordHeaderBytes, length);
  if (text.size() > kMagic.size() && static_cast<uint8_t>(text[0]) == kMagic.size() &&
      text.substr(1, kMagic.size()) == kMagic) {
    return Error(kRecordHeaderBytes,
                 "a RocksDB block cache or IO trace (length-prefixed magic), not a query trace");
  }
  if (text.substr(0, kMagic.size()) != kMagic) {
    return Error(kRecordHeaderBytes, "not a RocksDB trace: the header record does not start "
                                     "with the magic '" + std::string(kMagic) + "'");
  }
  // magic \t Trace Version: X.Y \t RocksDB Version: X.Y \t Format: ... \n
  auto field = [&](std::string_view name) -> std::string {
    const size_t at = text.find("\t" + std::string(name));
    if (at == std::string_view::npos) return "";
    const size_t begin = at + 1 + name.size();
    const size_t end = text.find_first_of("\t\n", begin);
    return std::string(text.substr(begin, end == std::string_view::npos ? end : end - begin));
  };
  trace_version_ = field(kVersionField);
  rocksdb_version_ = field(kRocksDbVersionField);
  if (trace_version_.empty()) {
    return Error(kRecordHeaderBytes, "the header has no '" + std::string(kVersionField) +
                                         "' field after the magic");
  }
  if (trace_version_ == "0.1") {
    minor_version_ = 1;
  } else if (trace_version_ == "0.2") {
    minor_version_ = 2;
  } else {
    return Error(kRecordHeaderBytes,
                 "unsupported trace version '" + trace_version_ +
                     "' (this reader knows 0.1 and 0.2, the format of RocksDB 7.8.3)");
  }
  stats_.records = 1;
  stats_.records_by_type[kTraceBegin] = 1;
  stats_.first_timestamp_us = stats_.last_timestamp_us = timestamp;
  stats_.bytes_read = kRecordHeaderBytes + length;
  last_record_offset_ = 0;
  start_ += kRecordHeaderBytes + length;
  offset_ += kRecordHeaderBytes + length;
  return Status::OK();
}

bool RocksDbTraceReader::ReadRecord() {
  const uint64_t at = offset_;
  if (!Fill(kRecordHeaderBytes)) {
    if (!status_.ok()) return false;
    if (end_ == start_) return false;  // the end of the file, between records
    status_ = Error(at, "truncated record: " + std::to_string(end_ - start_) +
                            " bytes left, a record's header needs " +
                            std::to_string(kRecordHeaderBytes));
    return false;
  }
  const char* p = buffer_.data() + start_;
  Record r;
  r.offset = at;
  r.timestamp_us = DecodeFixed64(p);
  r.type = static_cast<uint8_t>(p[8]);
  r.payload_bytes = DecodeFixed32(p + 9);
  record_ = r;
  if (r.payload_bytes > options_.max_payload_bytes) {
    status_ = RecordError("a payload of " + std::to_string(r.payload_bytes) +
                          " bytes declared, beyond the reader's limit of " +
                          std::to_string(options_.max_payload_bytes) +
                          " (a corrupt length? RocksDbTraceReaderOptions::max_payload_bytes)");
    return false;
  }
  if (!Fill(kRecordHeaderBytes + r.payload_bytes)) {
    if (!status_.ok()) return false;
    const size_t have = end_ - start_ - kRecordHeaderBytes;
    status_ = RecordError("truncated record: a payload of " + std::to_string(r.payload_bytes) +
                          " bytes declared, the file ends after " + std::to_string(have) +
                          " of them (at byte " + std::to_string(offset_ + (end_ - start_)) + ")");
    return false;
  }
  record_.payload = buffer_.data() + start_ + kRecordHeaderBytes;
  start_ += kRecordHeaderBytes + r.payload_bytes;
  offset_ += kRecordHeaderBytes + r.payload_bytes;
  stats_.records++;
  stats_.records_by_type[r.type]++;
  stats_.last_timestamp_us = r.timestamp_us;
  stats_.bytes_read = offset_;
  last_record_offset_ = at;
  return true;
}

bool RocksDbTraceReader::CheckWriteBatch(const char* rep, size_t n) {
  if (n < kBatchHeaderBytes) {
    status_ = RecordError("malformed write batch: " + std::to_string(n) +
                          " bytes, shorter than its " + std::to_string(kBatchHeaderBytes) +
                          "-byte header");
    return false;
  }
  const uint32_t count = DecodeFixed32(rep + 8);
  Cursor c(rep + kBatchHeaderBytes, rep + n);
  uint64_t counted = 0, ops = 0;
  BatchEntry e;
  // One pass to check it all before the first op is handed out; the counts
  // of skipped entries are taken here, once.
  std::map<std::string, uint64_t> skipped;
  while (!c.empty()) {
    const std::string what = ParseBatchEntry(&c, kBatchHeaderBytes, &e);
    if (!what.empty()) {
      status_ = RecordError("malformed write batch: " + what);
      return false;
    }
    if (e.counted) counted++;
    if (e.is_op) {
      ops++;
    } else {
      skipped[e.name]++;
    }
  }
  if (counted != count) {
    status_ = RecordError("malformed write batch: its header counts " + std::to_string(count) +
                          " entries, it holds " + std::to_string(counted));
    return false;
  }
  for (const auto& [name, k] : skipped) stats_.skipped_batch_entries[name] += k;
  batch_ = std::string_view(rep + kBatchHeaderBytes, n - kBatchHeaderBytes);
  record_ops_ = pending_ops_ = static_cast<uint32_t>(ops);
  return true;
}

bool RocksDbTraceReader::StartRecord() {
  const uint8_t type = record_.type;
  pending_ops_ = record_ops_ = 0;
  if (type == kTraceEnd) {
    end_record_seen_ = true;
    finished_ = true;
    trailing_bytes_ = file_bytes_ > offset_ ? file_bytes_ - offset_ : 0;
    return true;
  }
  if (type >= kBlockTraceIndexBlock && type <= kIOTracer) {
    stats_.skipped_records++;
    return true;
  }
  if (type == kTraceBegin) {
    status_ = RecordError("a second header record: two traces in one file?");
    return false;
  }
  if (type != kTraceWrite && type != kTraceGet && type != kTraceIteratorSeek &&
      type != kTraceIteratorSeekForPrev && type != kTraceMultiGet) {
    status_ = Error(record_.offset, "unknown record type " + Hex(type) + " (RocksDB 7.8.3 " +
                                        "defines 0x1 to 0xd)");
    return false;
  }
  const std::string_view payload(record_.payload, record_.payload_bytes);
  Fields f;
  const std::string what = minor_version_ >= 2 ? DecodeMappedPayload(type, payload, &f)
                                               : DecodeFixedPayload(type, payload, &f);
  if (!what.empty()) {
    status_ = RecordError(what);
    return false;
  }
  if (type == kTraceWrite) {
    const std::string_view rep = f.slice[kWriteBatchData];
    return CheckWriteBatch(rep.data(), rep.size());
  }
  if (type == kTraceMultiGet) {
    const uint32_t n = f.fixed[kMultiGetSize];
    cf_ids_ = f.slice[kMultiGetCFIDs];
    mg_keys_ = f.slice[kMultiGetKeys];
    if (n == 0) {
      status_ = RecordError("a MultiGet of 0 keys");
      return false;
    }
    if (cf_ids_.size() != uint64_t{4} * n) {
      status_ = RecordError("a MultiGet of " + std::to_string(n) + " keys has " +
                            std::to_string(cf_ids_.size()) + " bytes of column families, not " +
                            std::to_string(uint64_t{4} * n));
      return false;
    }
    Cursor c(mg_keys_);
    std::string_view key;
    for (uint32_t i = 0; i < n; i++) {
      if (!c.GetLengthPrefixed(&key)) {
        status_ = RecordError("a MultiGet of " + std::to_string(n) + " keys holds only " +
                              std::to_string(i));
        return false;
      }
    }
    if (!c.empty()) {
      status_ = RecordError(std::to_string(c.remaining()) + " bytes follow the MultiGet's " +
                            std::to_string(n) + " keys");
      return false;
    }
    record_ops_ = pending_ops_ = n;
    return true;
  }
  // A Get or a seek: one op, decoded now.
  TraceOp& op = single_;
  const bool get = type == kTraceGet;
  op.kind = get ? TraceOpKind::kGet
            : type == kTraceIteratorSeek ? TraceOpKind::kSeek
                                         : TraceOpKind::kSeekForPrev;
  op.column_family = f.fixed[get ? kGetCFID : kIterCFID];
  op.key.assign(f.slice[get ? kGetKey : kIterKey]);
  op.lower_bound.assign(f.slice[kIterLowerBound]);
  op.upper_bound.assign(f.slice[kIterUpperBound]);
  record_ops_ = pending_ops_ = 1;
  return true;
}

void RocksDbTraceReader::EmitPending(TraceOp* op) {
  const uint32_t index = record_ops_ - pending_ops_;
  pending_ops_--;
  if (record_.type == kTraceWrite) {
    // CheckWriteBatch has parsed it all: no entry fails here.
    Cursor c(batch_);
    BatchEntry e;
    do {
      ParseBatchEntry(&c, kBatchHeaderBytes, &e);
    } while (!e.is_op);
    batch_.remove_prefix(c.position());
    op->kind = e.kind;
    op->column_family = e.column_family;
    op->key.assign(e.key);
    const bool has_value = e.kind == TraceOpKind::kPut || e.kind == TraceOpKind::kMerge;
    op->value_size = has_value ? e.value.size() : 0;
    if (has_value && options_.keep_values) {
      op->value.assign(e.value);
    } else {
      op->value.clear();
    }
    if (e.kind == TraceOpKind::kDeleteRange) {
      op->end_key.assign(e.value);
    } else {
      op->end_key.clear();
    }
    op->lower_bound.clear();
    op->upper_bound.clear();
  } else if (record_.type == kTraceMultiGet) {
    op->kind = TraceOpKind::kMultiGet;
    op->column_family = DecodeFixed32(cf_ids_.data() + 4 * index);
    Cursor c(mg_keys_);
    std::string_view key;
    c.GetLengthPrefixed(&key);
    mg_keys_.remove_prefix(c.position());
    op->key.assign(key);
    op->value_size = 0;
    op->value.clear();
    op->end_key.clear();
    op->lower_bound.clear();
    op->upper_bound.clear();
  } else {
    *op = single_;
    op->value_size = 0;
    op->value.clear();
    op->end_key.clear();
  }
  op->timestamp_us = record_.timestamp_us;
  op->record_offset = record_.offset;
  op->record_type = record_.type;
  op->index_in_record = index;
  op->ops_in_record = record_ops_;
  stats_.ops++;
  stats_.ops_by_kind[static_cast<int>(op->kind)]++;
}

bool RocksDbTraceReader::Next(TraceOp* op) {
  while (status_.ok()) {
    if (pending_ops_ > 0) {
      EmitPending(op);
      return true;
    }
    if (finished_ || fd_ < 0) return false;
    if (!ReadRecord()) {
      finished_ = true;
      return false;
    }
    if (!StartRecord()) return false;
  }
  return false;
}

std::string RocksDbTraceReader::notice() const {
  if (!finished_ || !status_.ok()) return "";
  if (!end_record_seen_) {
    return "no end record: the trace stops after its record at offset " +
           std::to_string(last_record_offset_) +
           " (the tracing process ended without EndTrace?); read to there";
  }
  if (trailing_bytes_ > 0) {
    return std::to_string(trailing_bytes_) +
           " bytes after the end record, not read (an older trace's tail, when a file "
           "is traced into twice?)";
  }
  return "";
}

}  // namespace driver
}  // namespace lsmbench
