#include "adapters/builtin_adapter.h"

#include <utility>

#include "lsm/db.h"
#include "lsm/option_table.h"

namespace lsmbench {

namespace {

using V = std::string_view;

// Thread-safe because lsm::DB is; the adapter adds no state of its own.
class BuiltinAdapter final : public KvAdapter {
 public:
  BuiltinAdapter(std::unique_ptr<lsm::DB> db, bool flush_on_close)
      : db_(std::move(db)), flush_on_close_(flush_on_close) {}
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
    return m;
  }

  Status Close() override {
    if (!db_) return Status::OK();
    Status s;
    if (flush_on_close_) s = db_->Flush();
    db_.reset();  // the destructor is the engine's clean close
    return s;
  }

 private:
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
  std::unique_ptr<lsm::DB> db;
  s = lsm::DB::Open(o, dir, &db);
  if (!s.ok()) return s;
  *adapter = std::make_unique<BuiltinAdapter>(std::move(db), o.wal == lsm::WalMode::kOff);
  return Status::OK();
}

}  // namespace lsmbench
