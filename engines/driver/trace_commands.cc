#include "driver/trace_commands.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "driver/random.h"

namespace lsmbench {
namespace driver {

namespace {

const char kTraceUsage[] =
    "usage: lsm-driver --trace-ops TRACE [--out FILE]\n"
    "       lsm-driver --trace-summary TRACE [--distinct-keys-limit N]\n"
    "TRACE: a RocksDB query trace (DB::StartTrace, db_bench --trace_file).\n"
    "--trace-ops writes its ops as an op stream (CSV) to FILE or stdout;\n"
    "--trace-summary prints what it holds as JSON. See engines/driver/README.md.\n";

int Fail(int code, const std::string& message) {
  fprintf(stderr, "lsm-driver: %s\n", message.c_str());
  return code;
}

uint64_t KeyHash(std::string_view key) {
  uint64_t h = Hash64(0x6b6579ULL, key.size());
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t word = 0;
    for (int b = 0; b < 8; b++) word |= uint64_t{static_cast<unsigned char>(key[i + b])} << (8 * b);
    h = Hash64(h, word);
  }
  if (i < key.size()) {
    uint64_t word = 0;
    for (int b = 0; i + b < key.size(); b++) {
      word |= uint64_t{static_cast<unsigned char>(key[i + b])} << (8 * b);
    }
    h = Hash64(h, word);
  }
  return h;
}

int64_t RelativeTime(const TraceOp& op, uint64_t origin) {
  // A wall clock stepped back while tracing: such ops are put at the start.
  return op.timestamp_us > origin ? static_cast<int64_t>(op.timestamp_us - origin) : 0;
}

}  // namespace

bool StreamOpOf(const TraceOp& op, StreamOp* out) {
  switch (op.kind) {
    case TraceOpKind::kPut:
    case TraceOpKind::kMerge: *out = StreamOp::kPut; return true;
    case TraceOpKind::kDelete:
    case TraceOpKind::kSingleDelete: *out = StreamOp::kDelete; return true;
    case TraceOpKind::kGet:
    case TraceOpKind::kMultiGet: *out = StreamOp::kRead; return true;
    case TraceOpKind::kSeek:
    case TraceOpKind::kSeekForPrev: *out = StreamOp::kScan; return true;
    case TraceOpKind::kDeleteRange: return false;
  }
  return false;
}

void DistinctKeyCounter::Grow() {
  std::vector<uint64_t> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, 0);
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t h : old) {
    if (h == 0) continue;
    uint64_t i = h & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = h;
  }
}

void DistinctKeyCounter::Add(std::string_view key) {
  if (saturated_) return;
  const uint64_t h = KeyHash(key);
  if (h == 0) {
    if (!has_zero_) {
      has_zero_ = true;
      count_++;
    }
  } else {
    // Below half full: the probes stay short.
    if (2 * (count_ + 1) > slots_.size()) Grow();
    const uint64_t mask = slots_.size() - 1;
    uint64_t i = h & mask;
    while (slots_[i] != 0) {
      if (slots_[i] == h) return;
      i = (i + 1) & mask;
    }
    slots_[i] = h;
    count_++;
  }
  if (count_ >= limit_) saturated_ = true;
}

Status SummarizeTrace(const std::string& path, uint64_t distinct_keys_limit, Json* summary) {
  RocksDbTraceReader reader;
  Status s = reader.Open(path);
  if (!s.ok()) return s;
  DistinctKeyCounter keys(distinct_keys_limit);
  TraceOp op;
  while (reader.Next(&op)) keys.Add(op.key);
  if (!reader.status().ok()) return reader.status();

  const RocksDbTraceStats& st = reader.stats();
  Json by_type = Json::object(), skipped = Json::object(), ops = Json::object();
  for (int t = 0; t < 256; t++) {
    if (st.records_by_type[t] == 0) continue;
    by_type[TraceRecordTypeName(static_cast<uint8_t>(t))] = st.records_by_type[t];
    // The types the reader skips: block cache and IO trace records.
    if (t >= 7 && t <= 12) {
      skipped[TraceRecordTypeName(static_cast<uint8_t>(t))] = st.records_by_type[t];
    }
  }
  for (int k = 0; k < kTraceOpKindCount; k++) {
    ops[TraceOpKindName(static_cast<TraceOpKind>(k))] = st.ops_by_kind[k];
  }
  ops["total"] = st.ops;
  Json entries = Json::object();
  for (const auto& [name, n] : st.skipped_batch_entries) entries[name] = n;
  const std::string notice = reader.notice();
  *summary = {
      {"file", path},
      {"trace_version", reader.trace_version()},
      {"rocksdb_version", reader.rocksdb_version()},
      {"bytes", st.bytes_read},
      {"records", st.records},
      {"records_by_type", by_type},
      {"ops", ops},
      {"skipped_records", skipped},
      {"skipped_batch_entries", entries},
      {"first_timestamp_us", st.first_timestamp_us},
      {"last_timestamp_us", st.last_timestamp_us},
      {"duration_us", st.last_timestamp_us - std::min(st.first_timestamp_us, st.last_timestamp_us)},
      {"distinct_keys", keys.count()},
      {"distinct_keys_exact", keys.exact()},
      {"distinct_keys_limit", distinct_keys_limit},
      {"end_record", reader.end_record_seen()},
      {"trailing_bytes", reader.trailing_bytes()},
      {"notice", notice.empty() ? Json(nullptr) : Json(notice)},
  };
  return Status::OK();
}

Status ConvertTraceToOpStream(const std::string& path, FILE* out, const std::string& out_name,
                              TraceConversion* result) {
  RocksDbTraceReader reader;
  Status s = reader.Open(path);
  if (!s.ok()) return s;
  OpStreamWriter writer;
  s = writer.Start(out, out_name,
                   "RocksDB query trace " + path + " (trace version " + reader.trace_version() +
                       ", RocksDB " + reader.rocksdb_version() + ")");
  TraceOp op;
  while (s.ok() && reader.Next(&op)) {
    StreamOp stream_op;
    if (!StreamOpOf(op, &stream_op)) {
      result->ops_left_out++;
      continue;
    }
    const int64_t value_size =
        stream_op == StreamOp::kPut ? static_cast<int64_t>(op.value_size) : OpStreamWriter::kNone;
    s = writer.Append(RelativeTime(op, reader.header_timestamp_us()), stream_op, op.key,
                      value_size, OpStreamWriter::kNone);
  }
  result->output_failed = !s.ok();
  if (s.ok()) s = reader.status();
  if (s.ok()) {
    s = writer.Finish();
    result->output_failed = !s.ok();
  }
  result->ops_written = writer.count();
  result->notice = reader.notice();
  return s;
}

bool IsTraceCommand(const std::string& arg) {
  return arg == "--trace-ops" || arg == "--trace-summary";
}

int RunTraceCommand(int argc, char** argv) {
  const std::string command = argv[1];
  std::string trace, out_path;
  uint64_t limit = DistinctKeyCounter::kDefaultLimit;
  for (int i = 2; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg == "--out" && command == "--trace-ops") {
      if (i + 1 >= argc) return Fail(2, "--out needs a file\n" + std::string(kTraceUsage));
      out_path = argv[++i];
    } else if (arg == "--distinct-keys-limit" && command == "--trace-summary") {
      char* end = nullptr;
      const char* text = i + 1 < argc ? argv[++i] : "";
      errno = 0;
      limit = strtoull(text, &end, 10);
      if (*text == '\0' || *end != '\0' || errno != 0 || limit == 0 || text[0] == '-') {
        return Fail(2, "--distinct-keys-limit needs a positive integer, got '" +
                           std::string(text) + "'");
      }
    } else if (trace.empty() && arg.rfind("--", 0) != 0) {
      trace = arg;
    } else {
      return Fail(2, command + ": unexpected '" + arg + "'\n" + kTraceUsage);
    }
  }
  if (trace.empty()) return Fail(2, command + " needs a trace file\n" + kTraceUsage);

  if (command == "--trace-summary") {
    Json summary;
    const Status s = SummarizeTrace(trace, limit, &summary);
    if (!s.ok()) return Fail(2, s.ToString());
    fputs((summary.dump(2) + "\n").c_str(), stdout);
    return 0;
  }

  // --trace-ops: a FILE appears whole or not at all (written aside, renamed).
  FILE* out = stdout;
  std::string out_name = "stdout", tmp;
  if (!out_path.empty()) {
    tmp = out_path + ".tmp";
    out = fopen(tmp.c_str(), "we");
    if (out == nullptr) return Fail(2, "--out " + out_path + ": " + strerror(errno));
    out_name = out_path;
  }
  TraceConversion result;
  Status s = ConvertTraceToOpStream(trace, out, out_name, &result);
  if (out != stdout) {
    if (fclose(out) != 0 && s.ok()) {
      s = Status::IOError(out_name, strerror(errno));
      result.output_failed = true;
    }
    if (s.ok() && rename(tmp.c_str(), out_path.c_str()) != 0) {
      s = Status::IOError(out_path, strerror(errno));
      result.output_failed = true;
    }
    if (!s.ok()) unlink(tmp.c_str());
  }
  if (!s.ok()) return Fail(result.output_failed ? 1 : 2, s.ToString());
  if (result.ops_left_out > 0) {
    fprintf(stderr, "lsm-driver: %llu delete_range ops left out (no op-stream form)\n",
            static_cast<unsigned long long>(result.ops_left_out));
  }
  if (!result.notice.empty()) fprintf(stderr, "lsm-driver: notice: %s\n", result.notice.c_str());
  return 0;
}

}  // namespace driver
}  // namespace lsmbench
