#include "adapters/builtin_adapter.h"

#include <utility>

#include "adapters/builtin_shared.h"
#include "lsm/db.h"
#include "lsm/option_table.h"

namespace lsmbench {

namespace {

using V = std::string_view;

// Thread-safe because lsm::DB is; the adapter adds no state of its own.
class BuiltinAdapter final : public KvAdapter {
 public:
  BuiltinAdapter(std::unique_ptr<builtin::EventLog> events, std::unique_ptr<lsm::DB> db,
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
    Metrics m;
    builtin::AddStatsMetrics(db_->GetStats(), "", &m);
    return m;
  }

  std::vector<EngineEvent> TakeEvents() override { return events_->Take(); }

  // Polls the stats, not DB::WaitForIdle: that has no time limit, and with
  // idle-time merges (merge_scheduler=idle) or a slow I/O budget the limit
  // is what the caller asked for.
  Status Settle(double timeout_s, SettleReport* report) override {
    return PollUntilIdle(
        timeout_s,
        [this](BackgroundWork* work) { return builtin::LookAtWork({db_->GetStats()}, "", work); },
        report);
  }

  Status Close() override {
    if (!db_) return Status::OK();
    Status s;
    if (flush_on_close_) s = db_->Flush();
    db_.reset();  // the destructor is the engine's clean close
    return s;
  }

 private:
  const std::unique_ptr<builtin::EventLog> events_;  // outlives db_, which calls it
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
                   info.get(defaults), lsm::OptionScopeName(info.scope)});
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
  auto events = std::make_unique<builtin::EventLog>();
  o.listener = events.get();
  std::unique_ptr<lsm::DB> db;
  s = lsm::DB::Open(o, dir, &db);
  if (!s.ok()) return s;
  *adapter = std::make_unique<BuiltinAdapter>(std::move(events), std::move(db),
                                              o.wal == lsm::WalMode::kOff);
  return Status::OK();
}

}  // namespace lsmbench
