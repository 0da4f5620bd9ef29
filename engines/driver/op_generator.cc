#include "driver/op_generator.h"

#include <cmath>
#include <algorithm>
#include <cstring>

namespace lsmbench {
namespace driver {

namespace {

// Large enough that the slices of consecutive operations rarely overlap
// (so an engine that compresses sees little redundancy across records).
constexpr size_t kValueBufferExtra = 1 << 20;

}  // namespace

OpGenerator::OpGenerator(const WorkloadSpec& workload, uint64_t seed, uint64_t insert_start)
    : workload_(workload),
      seed_(seed),
      formatter_(workload.key_size, workload.key_prefix, seed, workload.insert_order),
      chooser_(workload.distribution, workload.record_count, workload.zipf_theta, seed,
               workload.ScrambledZipfianItems()),
      field_chooser_(workload.secondary_distribution, workload.SecondaryValues(),
                     workload.zipf_theta, Hash64(seed, 0x6669656c64)),
      next_id_(insert_start) {
  if (workload.mixgraph) {
    mixgraph_keys_ = std::make_unique<MixgraphKeys>(*workload.mixgraph, workload.record_count, seed);
  }
  if (workload.trace) {
    // The writers hold a few ops each; the window only has to outlast a
    // writer that lost its CPU while the others went on.
    constexpr size_t kTraceWindow = 1 << 16;
    trace_open_ = TraceSource::Open(workload.trace->path, kTraceWindow,
                                    workload.rocksdb_trace_repeat, &trace_);
  }
  double cumulative = 0;
  for (int t = 0; t < kNumOpTypes; t++) {
    cumulative += workload.mix[t];
    const double scaled = std::ldexp(std::min(cumulative, 1.0), 64);
    thresholds_[t] = scaled >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(scaled);
  }
  // The last type with a positive share takes the rounding remainder.
  last_type_ = 0;
  for (int t = 0; t < kNumOpTypes; t++) {
    if (workload.mix[t] > 0) last_type_ = t;
  }
  values_.resize(workload.value_size_max + kValueBufferExtra);
  Rng rng(Hash64(seed, 0x76616c75));
  for (size_t i = 0; i + 8 <= values_.size(); i += 8) {
    const uint64_t r = rng.Next();
    std::memcpy(&values_[i], &r, 8);
  }
}

std::string_view OpGenerator::Value(Rng* rng) const {
  const uint32_t lo = workload_.value_size_min, hi = workload_.value_size_max;
  size_t len = lo;
  if (workload_.mixgraph) {
    len = MixgraphValueSize(*workload_.mixgraph, 1 - rng->UniformDouble());
  } else if (lo != hi) {
    len = lo + rng->Uniform(uint64_t{hi} - lo + 1);
  }
  const size_t offset = rng->Uniform(values_.size() - len + 1);
  return std::string_view(values_.data() + offset, len);
}

uint64_t OpGenerator::ChooseKey(Rng* rng) const {
  if (mixgraph_keys_) return mixgraph_keys_->Choose(rng);
  return chooser_.Choose(rng, key_count());
}

uint32_t OpGenerator::ScanLength(Rng* rng) const {
  if (workload_.mixgraph) return MixgraphScanLength(*workload_.mixgraph, 1 - rng->UniformDouble());
  const uint32_t lo = workload_.scan_length_min, hi = workload_.scan_length_max;
  return lo == hi ? lo : lo + static_cast<uint32_t>(rng->Uniform(uint64_t{hi} - lo + 1));
}

void OpGenerator::Fields(Rng* rng, Op* op) const {
  op->fields.resize(workload_.secondary_fields);
  const uint64_t values = workload_.SecondaryValues();
  for (uint64_t& f : op->fields) f = field_chooser_.Choose(rng, values);
}

int OpGenerator::TypeOfDraw(uint64_t draw) const {
  int type = 0;
  while (type < last_type_ && draw >= thresholds_[type]) type++;
  return type;
}

int OpGenerator::TypeOf(uint64_t seq) const {
  if (trace_) {
    // A trace has to be read to tell: the op is taken (only the phase's end
    // asks, for requests that will never run).
    TraceOp t;
    int type = kRead;
    if (trace_->Take(seq, &t, stop_)) ReplayType(t.kind, &type);
    return type;
  }
  Rng rng(Hash64(seed_, seq));
  return TypeOfDraw(rng.Next());
}

Status OpGenerator::status() const {
  if (!trace_open_.ok()) return trace_open_;
  return trace_ ? trace_->status() : Status::OK();
}

bool OpGenerator::MakeFromTrace(uint64_t seq, Op* op) {
  TraceOp t;
  if (!trace_ || !trace_->Take(seq, &t, stop_)) return false;
  int type = kRead;
  ReplayType(t.kind, &type);  // the source gives only ops that replay
  op->type = type;
  op->has_raw_key = true;
  op->raw_key.swap(t.key);
  op->value = std::string_view();
  op->scan_length = 0;
  if (type == kUpdate) {
    const size_t len = std::min<size_t>(t.value_size, values_.size());
    Rng rng(Hash64(seed_, seq));
    op->value = std::string_view(values_.data() + rng.Uniform(values_.size() - len + 1), len);
  } else if (type == kScan) {
    op->scan_length = workload_.scan_length_min;
  }
  return true;
}

bool OpGenerator::Make(uint64_t seq, Op* op) {
  if (workload_.trace) return MakeFromTrace(seq, op);
  Rng rng(Hash64(seed_, seq));
  const int type = TypeOfDraw(rng.Next());
  op->type = type;
  op->scan_length = 0;
  op->value = std::string_view();
  switch (type) {
    case kInsert:
      op->id = next_id_.fetch_add(1, std::memory_order_relaxed);
      op->value = Value(&rng);
      Fields(&rng, op);
      break;
    case kUpdate:
    case kReadModifyWrite:
      op->id = ChooseKey(&rng);
      op->value = Value(&rng);
      Fields(&rng, op);
      break;
    case kScan:
      op->id = ChooseKey(&rng);
      op->scan_length = ScanLength(&rng);
      break;
    default:
      op->id = ChooseKey(&rng);
      break;
  }
  return true;
}

void OpGenerator::MakeLoad(uint64_t id, Op* op) const {
  Rng rng(Hash64(seed_ ^ 0x6c6f6164, id));
  op->type = kInsert;
  op->id = id;
  op->scan_length = 0;
  if (workload_.trace) {
    // The trace's keys, with values of its puts' mean size.
    op->has_raw_key = true;
    op->raw_key = (*workload_.trace->keys)[id];
    const size_t len = std::min<size_t>(std::llround(workload_.trace->mean_value_size),
                                        values_.size());
    op->value = std::string_view(values_.data() + rng.Uniform(values_.size() - len + 1), len);
    return;
  }
  op->value = Value(&rng);
  Fields(&rng, op);
}

void OpGenerator::MakeQuery(int type, uint32_t scan_length, const KeyChooser& chooser, Rng* rng,
                            Op* op) const {
  op->type = type;
  op->id = chooser.Choose(rng, key_count());
  op->scan_length = type == kScan ? scan_length : 0;
  op->value = std::string_view();
}

void OpGenerator::MakeSecondaryQuery(uint64_t selectivity, Rng* rng, Op* op) const {
  const uint64_t values = workload_.SecondaryValues();
  selectivity = std::min(std::max<uint64_t>(selectivity, 1), values);
  op->type = kRead;
  op->range_low = rng->Uniform(values - selectivity + 1);
  op->range_high = op->range_low + selectivity;
}

}  // namespace driver
}  // namespace lsmbench
