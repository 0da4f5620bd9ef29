#include "driver/op_stream.h"

#include <cinttypes>
#include <cmath>
#include <memory>
#include <vector>

#include "driver/arrival.h"
#include "driver/op_generator.h"

namespace lsmbench {
namespace driver {

namespace {

void AppendHex(std::string_view bytes, std::string* out) {
  static const char kDigits[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    out->push_back(kDigits[c >> 4]);
    out->push_back(kDigits[c & 15]);
  }
}

void AppendNumber(int64_t v, std::string* out) {
  if (v >= 0) out->append(std::to_string(v));
}

}  // namespace

OpStreamWriter::OpStreamWriter(FILE* out, const std::string& source) : out_(out) {
  fprintf(out_, "# lsmbench op stream v1: %s\nseq,time_us,op,key,value_size,scan_length\n",
          source.c_str());
}

void OpStreamWriter::Write(uint64_t seq, double time_us, std::string_view op,
                           std::string_view key, int64_t value_size, int64_t scan_length) {
  line_.clear();
  line_.append(std::to_string(seq));
  line_.push_back(',');
  if (time_us >= 0) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.3f", time_us);
    line_.append(buf);
  }
  line_.push_back(',');
  line_.append(op);
  line_.push_back(',');
  AppendHex(key, &line_);
  line_.push_back(',');
  AppendNumber(value_size, &line_);
  line_.push_back(',');
  AppendNumber(scan_length, &line_);
  line_.push_back('\n');
  fwrite(line_.data(), 1, line_.size(), out_);
}

Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out) {
  const WorkloadSpec& w = config.workload;
  OpGenerator generator(w, config.seed, config.insert_start);
  std::unique_ptr<ArrivalProcess> arrivals;
  if (config.phase == Phase::kRunning) arrivals = NewArrivalProcess(config.arrival, config.seed);
  const std::string source = "lsm-driver, workload " + (w.name.empty() ? "(inline)" : w.name) +
                             ", phase " + PhaseNames()[static_cast<int>(config.phase)] +
                             ", seed " + std::to_string(config.seed);
  OpStreamWriter writer(out, source);
  std::vector<char> key(generator.key_size());
  const std::string_view key_view(key.data(), key.size());
  Op op;
  for (uint64_t seq = 0; seq < count; seq++) {
    double time_us = -1;
    if (arrivals) {
      const double t = arrivals->Next();
      if (!std::isfinite(t)) break;  // the arrival process has ended
      time_us = t * 1e6;
    }
    if (config.phase == Phase::kLoad) {
      if (seq >= w.record_count) break;
      generator.MakeLoad(seq, &op);
    } else {
      generator.Make(seq, &op);
    }
    generator.FormatKey(op.id, key.data());
    const bool writes_value = op.type == kInsert || op.type == kUpdate;
    writer.Write(seq, time_us, OpTypeName(op.type), key_view,
                 writes_value ? static_cast<int64_t>(op.value.size()) : -1,
                 op.type == kScan ? static_cast<int64_t>(op.scan_length) : -1);
  }
  if (!writer.ok() || fflush(out) != 0) return Status::IOError("writing the op stream failed");
  return Status::OK();
}

}  // namespace driver
}  // namespace lsmbench
