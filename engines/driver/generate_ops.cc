#include "driver/generate_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "driver/arrival.h"
#include "driver/op_generator.h"
#include "driver/op_stream.h"
#include "driver/rocksdb_trace.h"

namespace lsmbench {
namespace driver {

namespace {

StreamOp ToStreamOp(int type) {
  switch (type) {
    case kInsert: return StreamOp::kInsert;
    case kUpdate: return StreamOp::kUpdate;
    case kDelete: return StreamOp::kDelete;
    case kRead: return StreamOp::kRead;
    case kReadModifyWrite: return StreamOp::kRmw;
    default: return StreamOp::kScan;
  }
}

}  // namespace

// Calls emit(seq, time_us or kNone, op, key) for each op WriteGeneratedOps
// writes, stopping at the first error.
template <typename Emit>
Status ForEachGeneratedOp(const RunConfig& config, uint64_t count, Emit emit) {
  const WorkloadSpec& w = config.workload;
  OpGenerator generator(w, config.seed, config.insert_start);
  std::unique_ptr<ArrivalProcess> arrivals;
  if (config.phase == Phase::kRunning) arrivals = NewArrivalProcess(config.arrival, config.seed);
  std::vector<char> key(generator.key_size());
  const std::string_view key_view(key.data(), key.size());
  Op op;
  Status s;
  for (uint64_t seq = 0; s.ok() && seq < count; seq++) {
    int64_t time_us = OpStreamWriter::kNone;
    if (arrivals) {
      const double t = arrivals->Next();
      if (!std::isfinite(t)) break;  // the arrival process has ended
      time_us = std::llround(t * 1e6);
    }
    if (config.phase == Phase::kLoad) {
      if (seq >= w.record_count) break;
      generator.MakeLoad(seq, &op);
    } else if (!generator.Make(seq, &op)) {
      s = generator.status();  // a replayed trace's end, or its read error
      break;
    }
    if (!op.has_raw_key) generator.FormatKey(op.id, key.data());
    s = emit(seq, time_us, op, op.has_raw_key ? std::string_view(op.raw_key) : key_view);
  }
  return s;
}

Status WriteGeneratedTrace(const RunConfig& config, uint64_t count, const std::string& path) {
  // RocksDB's replayer waits for each record's time after the header's.
  constexpr uint64_t kHeaderUs = 1'000'000;
  RocksDbTraceWriter writer;
  Status s = writer.Open(path, kHeaderUs);
  if (!s.ok()) return s;
  uint64_t last_us = kHeaderUs;
  s = ForEachGeneratedOp(config, count, [&](uint64_t seq, int64_t time_us, const Op& op,
                                             std::string_view key) {
    TraceOp t;
    t.timestamp_us = kHeaderUs + 1 + (time_us >= 0 ? static_cast<uint64_t>(time_us) : seq);
    last_us = t.timestamp_us;
    t.key.assign(key.data(), key.size());
    switch (op.type) {
      case kInsert:
      case kUpdate:
        t.kind = TraceOpKind::kPut;
        t.value.assign(op.value.data(), op.value.size());
        t.value_size = op.value.size();
        break;
      case kReadModifyWrite: {
        // A trace has no read-modify-write: the get, then the put, at one time.
        t.kind = TraceOpKind::kGet;
        Status get = writer.Append(t);
        if (!get.ok()) return get;
        t.kind = TraceOpKind::kPut;
        t.value.assign(op.value.data(), op.value.size());
        t.value_size = op.value.size();
        break;
      }
      case kDelete: t.kind = TraceOpKind::kDelete; break;
      case kRead: t.kind = TraceOpKind::kGet; break;
      default: t.kind = TraceOpKind::kSeek; break;
    }
    return writer.Append(t);
  });
  if (s.ok()) s = writer.Finish(last_us + 1);
  return s;
}

Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out) {
  const WorkloadSpec& w = config.workload;
  const std::string source = "lsm-driver, workload " + (w.name.empty() ? "(inline)" : w.name) +
                             ", phase " + PhaseNames()[static_cast<int>(config.phase)] +
                             ", seed " + std::to_string(config.seed);
  OpStreamWriter writer;
  Status s = writer.Start(out, "stdout", source);
  if (s.ok()) {
    s = ForEachGeneratedOp(config, count, [&](uint64_t, int64_t time_us, const Op& op,
                                               std::string_view key) {
      const bool writes_value =
          op.type == kInsert || op.type == kUpdate || op.type == kReadModifyWrite;
      return writer.Append(
          time_us, ToStreamOp(op.type), key,
          writes_value ? static_cast<int64_t>(op.value.size()) : OpStreamWriter::kNone,
          op.type == kScan ? static_cast<int64_t>(op.scan_length) : OpStreamWriter::kNone);
    });
  }
  if (s.ok()) s = writer.Finish();
  return s;
}

}  // namespace driver
}  // namespace lsmbench
