#include "adapters/builtin_adapter.h"

#include <time.h>

#include <mutex>
#include <utility>

#include "lsm/db.h"
#include "lsm/listener.h"
#include "lsm/option_table.h"

namespace lsmbench {

namespace {

using V = std::string_view;

int64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Collects the engine's flush and merge events for TakeEvents. The end is
// taken on the driver's clock when the event arrives; the start from the
// engine's own duration, so no engine clock needs to match the driver's.
class EventLog final : public lsm::EventListener {
 public:
  void OnFlushCompleted(const lsm::FlushInfo& info) override {
    EngineEvent e;
    e.kind = EngineEvent::Kind::kFlush;
    Stamp(info.start_micros, info.end_micros, &e);
    if (info.sealed_micros != 0 && info.sealed_micros <= info.end_micros) {
      e.sealed_ns = e.end_ns - static_cast<int64_t>(info.end_micros - info.sealed_micros) * 1000;
    }
    e.output_bytes = info.bytes;
    e.entries = info.entries;
    Add(e);
  }
  void OnMergeCompleted(const lsm::MergeInfo& info) override {
    EngineEvent e;
    e.kind = EngineEvent::Kind::kMerge;
    Stamp(info.start_micros, info.end_micros, &e);
    e.output_level = info.output_level;
    e.deepest_input_level = info.deepest_input_level;
    e.inputs = info.inputs;
    e.input_bytes = info.input_bytes;
    e.output_bytes = info.output_bytes;
    e.entries = info.entries;
    e.moved = info.moved;
    Add(e);
  }
  std::vector<EngineEvent> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(events_, {});
  }

 private:
  static void Stamp(uint64_t start_micros, uint64_t end_micros, EngineEvent* e) {
    e->end_ns = MonotonicNs();
    const uint64_t took = end_micros >= start_micros ? end_micros - start_micros : 0;
    e->start_ns = e->end_ns - static_cast<int64_t>(took) * 1000;
  }
  void Add(const EngineEvent& e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }

  std::mutex mu_;
  std::vector<EngineEvent> events_;  // GUARDED_BY(mu_)
};

// Thread-safe because lsm::DB is; the adapter adds no state of its own.
class BuiltinAdapter final : public KvAdapter {
 public:
  BuiltinAdapter(std::unique_ptr<EventLog> events, std::unique_ptr<lsm::DB> db,
                 bool flush_on_close)
      : events_(std::move(events)), db_(std::move(db)), flush_on_close_(flush_on_close) {}
  ~BuiltinAdapter() override { Close(); }

  Status Put(V key, V value) override { return db_->Put(key, value); }
  Status Delete(V key) override { return db_->Delete(key); }
  Status Get(V key, std::string* value) override { return db_->Get(key, value); }

  Status Scan(V start, size_t count, size_t* returned) override {
    std::unique_ptr<lsm::Iterator> it = db_->NewIterator();
    size_t n = 0;
    for (it->Seek(start); n < count && it->Valid(); it->Next()) ++n;
    *returned = n;
    return it->status();
  }

  Metrics GetMetrics() override {
    const lsm::Stats st = db_->GetStats();
    auto d = [](uint64_t v) { return static_cast<double>(v); };
    Metrics m;
    m["disk_components"] = d(st.disk_components);
    for (size_t i = 0; i < st.disk_components_per_level.size(); ++i) {
      m["disk_components.L" + std::to_string(i)] = d(st.disk_components_per_level[i]);
    }
    m["stall_count"] = d(st.merge_stalls + st.memory_stalls);
    m["stall_micros"] = d(st.merge_stall_micros + st.memory_stall_micros);
    m["merge_stall_count"] = d(st.merge_stalls);
    m["merge_stall_micros"] = d(st.merge_stall_micros);
    m["memory_stall_count"] = d(st.memory_stalls);
    m["memory_stall_micros"] = d(st.memory_stall_micros);
    m["slowdown_count"] = d(st.slowdowns);
    m["slowdown_micros"] = d(st.slowdown_micros);
    m["bytes_flushed"] = d(st.flush_bytes_written);
    m["bytes_merged"] = d(st.merge_bytes_written);
    m["bytes_merge_read"] = d(st.merge_bytes_read);
    m["merges_running"] = d(st.merges_running);
    m["merges_pending"] = d(st.merges_pending);
    uint64_t remaining = 0;
    for (uint64_t r : st.merge_remaining_input_bytes) remaining += r;
    m["merge_remaining_bytes"] = d(remaining);
    m["io_budget_granted_bytes"] = d(st.io_budget_granted_bytes);
    m["io_budget_unused_bytes"] = d(st.io_budget_unused_bytes);
    m["background_sync_micros"] = d(st.background_sync_micros);
    m["write_amplification"] = st.write_amplification;
    m["average_sstables"] = st.average_sstables;
    m["flushes"] = d(st.flushes_completed);
    m["merges"] = d(st.merges_completed);
    m["disk_bytes"] = d(st.disk_bytes);
    m["max_components"] = d(st.max_components);
    m["constrained_components"] = d(st.constrained_components);
    m["memory_components_immutable"] = d(st.memory_components_immutable);
    m["user_bytes"] = d(st.user_bytes_written);
    m["puts"] = d(st.puts);
    m["deletes"] = d(st.deletes);
    m["gets"] = d(st.gets);
    // 1 once a flush, merge or WAL write failed: the run's writes fail from
    // then on, with the error the run's result carries.
    m["background_error"] = st.background_error.empty() ? 0 : 1;
    return m;
  }

  std::vector<EngineEvent> TakeEvents() override { return events_->Take(); }

  Status Close() override {
    if (!db_) return Status::OK();
    Status s;
    if (flush_on_close_) s = db_->Flush();
    db_.reset();  // the destructor is the engine's clean close
    return s;
  }

 private:
  const std::unique_ptr<EventLog> events_;  // outlives db_, which calls it
  std::unique_ptr<lsm::DB> db_;
  const bool flush_on_close_;
};

}  // namespace

Status ParseBuiltinOptions(const AdapterOptions& options, lsm::Options* result) {
  return lsm::SetOptions(result, options);
}

std::vector<OptionDescription> DescribeBuiltinOptions() {
  const lsm::Options defaults;
  std::vector<OptionDescription> out;
  for (const lsm::OptionInfo& info : lsm::OptionTable()) {
    out.push_back({info.name, info.kind, info.min, info.max, info.choices, info.unit, info.doc,
                   info.get(defaults)});
  }
  return out;
}

Status CheckBuiltinOptions(const AdapterOptions& options) {
  lsm::Options o;
  return ParseBuiltinOptions(options, &o);
}

Status OpenBuiltinAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter) {
  lsm::Options o;
  Status s = ParseBuiltinOptions(options, &o);
  if (!s.ok()) return s;
  auto events = std::make_unique<EventLog>();
  o.listener = events.get();
  std::unique_ptr<lsm::DB> db;
  s = lsm::DB::Open(o, dir, &db);
  if (!s.ok()) return s;
  *adapter = std::make_unique<BuiltinAdapter>(std::move(events), std::move(db),
                                              o.wal == lsm::WalMode::kOff);
  return Status::OK();
}

}  // namespace lsmbench
