#include "driver/generate_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "driver/arrival.h"
#include "driver/op_generator.h"
#include "driver/op_stream.h"

namespace lsmbench {
namespace driver {

namespace {

StreamOp ToStreamOp(int type) {
  switch (type) {
    case kInsert: return StreamOp::kInsert;
    case kUpdate: return StreamOp::kUpdate;
    case kDelete: return StreamOp::kDelete;
    case kRead: return StreamOp::kRead;
    default: return StreamOp::kScan;
  }
}

}  // namespace

Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out) {
  const WorkloadSpec& w = config.workload;
  OpGenerator generator(w, config.seed, config.insert_start);
  std::unique_ptr<ArrivalProcess> arrivals;
  if (config.phase == Phase::kRunning) arrivals = NewArrivalProcess(config.arrival, config.seed);
  const std::string source = "lsm-driver, workload " + (w.name.empty() ? "(inline)" : w.name) +
                             ", phase " + PhaseNames()[static_cast<int>(config.phase)] +
                             ", seed " + std::to_string(config.seed);
  OpStreamWriter writer;
  Status s = writer.Start(out, "stdout", source);
  std::vector<char> key(generator.key_size());
  const std::string_view key_view(key.data(), key.size());
  Op op;
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
    } else {
      generator.Make(seq, &op);
    }
    generator.FormatKey(op.id, key.data());
    const bool writes_value = op.type == kInsert || op.type == kUpdate;
    s = writer.Append(time_us, ToStreamOp(op.type), key_view,
                      writes_value ? static_cast<int64_t>(op.value.size()) : OpStreamWriter::kNone,
                      op.type == kScan ? static_cast<int64_t>(op.scan_length)
                                       : OpStreamWriter::kNone);
  }
  if (s.ok()) s = writer.Finish();
  return s;
}

}  // namespace driver
}  // namespace lsmbench
