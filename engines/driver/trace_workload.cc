#include "driver/trace_workload.h"

#include <chrono>
#include <unordered_set>

#include "driver/workload.h"  // OpType

namespace lsmbench {
namespace driver {

bool ReplayType(TraceOpKind kind, int* type) {
  switch (kind) {
    case TraceOpKind::kPut:
    case TraceOpKind::kMerge:
      *type = kUpdate;
      return true;
    case TraceOpKind::kDelete:
    case TraceOpKind::kSingleDelete:
      *type = kDelete;
      return true;
    case TraceOpKind::kGet:
    case TraceOpKind::kMultiGet:
      *type = kRead;
      return true;
    case TraceOpKind::kSeek:
    case TraceOpKind::kSeekForPrev:
      *type = kScan;
      return true;
    case TraceOpKind::kDeleteRange:
      return false;
  }
  return false;
}

Status MeasureTrace(const std::string& path, uint64_t max_keys, TraceMeasure* out) {
  TraceMeasure m;
  m.path = path;
  RocksDbTraceReader reader;
  Status s = reader.Open(path);
  if (!s.ok()) return s;
  auto keys = std::make_shared<std::vector<std::string>>();
  std::unordered_set<std::string> seen;
  bool complete = true;
  double put_bytes = 0;
  uint64_t puts = 0, last_us = 0;
  TraceOp op;
  while (reader.Next(&op)) {
    int type = 0;
    if (!ReplayType(op.kind, &type)) {
      m.skipped_ops++;
      continue;
    }
    if (m.ops == 0) m.first_us = op.timestamp_us;
    last_us = op.timestamp_us;
    m.ops++;
    m.ops_by_type[type]++;
    if (type == kUpdate) {
      puts++;
      put_bytes += static_cast<double>(op.value_size);
      m.max_value_size = std::max(m.max_value_size, op.value_size);
    }
    m.max_key_size = std::max(m.max_key_size, static_cast<uint32_t>(op.key.size()));
    if (complete && seen.insert(op.key).second) {
      if (keys->size() >= max_keys) {
        complete = false;
        seen.clear();
        keys->clear();
      } else {
        keys->push_back(op.key);
      }
    }
  }
  if (!reader.status().ok()) return reader.status();
  m.span_us = last_us > m.first_us ? last_us - m.first_us : 0;
  m.mean_value_size = puts > 0 ? put_bytes / static_cast<double>(puts) : 0;
  m.end_record_seen = reader.end_record_seen();
  m.keys_complete = complete;
  if (complete) m.keys = std::move(keys);
  *out = std::move(m);
  return Status::OK();
}

Status TraceSource::Open(const std::string& path, size_t window, bool repeat,
                         std::unique_ptr<TraceSource>* out) {
  std::unique_ptr<TraceSource> source(new TraceSource(path, window, repeat));
  source->reader_ = std::make_unique<RocksDbTraceReader>();
  Status s = source->reader_->Open(path);
  if (!s.ok()) return s;
  *out = std::move(source);
  return Status::OK();
}

bool TraceSource::FillOne() {
  TraceOp& slot = ring_[end_ % ring_.size()];
  for (;;) {
    uint64_t read = 0;
    while (reader_->Next(&slot)) {
      read++;
      int type = 0;
      if (!ReplayType(slot.kind, &type)) continue;
      taken_[end_ % ring_.size()] = false;
      end_++;
      return true;
    }
    status_ = reader_->status();
    // A trace with no op to replay would repeat for ever: it was measured
    // to have some, so a pass that gave none is the end.
    if (!status_.ok() || !repeat_ || (read == 0 && end_ == 0)) break;
    reader_ = std::make_unique<RocksDbTraceReader>();
    status_ = reader_->Open(path_);
    if (!status_.ok()) break;
  }
  exhausted_ = true;
  return false;
}

bool TraceSource::Take(uint64_t seq, TraceOp* out, const std::atomic<bool>* stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (seq >= end_) {
    if (exhausted_) return false;
    if (end_ - base_ >= ring_.size()) {
      // The window is full of ops not taken yet: wait for the writer that
      // holds the oldest.
      moved_.wait_for(lock, std::chrono::milliseconds(10));
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
      continue;
    }
    if (!FillOne()) return false;
  }
  if (seq < base_) return false;  // taken already: each sequence number is taken once
  const size_t i = seq % ring_.size();
  std::swap(*out, ring_[i]);
  taken_[i] = true;
  bool moved = false;
  while (base_ < end_ && taken_[base_ % ring_.size()]) {
    base_++;
    moved = true;
  }
  if (moved) moved_.notify_all();
  return true;
}

Status TraceSource::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace driver
}  // namespace lsmbench
