// The builtin engine opened as a dataset (lsm/dataset.h): a primary index and
// one secondary index per secondary field of the workload.
//
// Metrics: the builtin adapter's names, summed over the trees (stalls also
// count the dataset's shared-memory stalls), then each tree's under
// "primary." and "secondary<i>."; and the dataset's own: flush_rounds,
// records_put, records_deleted, maintenance_lookups, antimatter_entries,
// queries, query_candidates, query_results, stale_entries_skipped.
// Events: the primary index's flushes and merges (one flush per flush round,
// so the testing phase's write cycles are the dataset's).
#include <utility>
#include <vector>

#include "adapters/builtin_adapter.h"
#include "adapters/builtin_shared.h"
#include "lsm/dataset.h"

namespace lsmbench {

namespace {

using V = std::string_view;

void AddPerLevel(const std::vector<uint64_t>& tree, std::vector<uint64_t>* sum) {
  if (sum->size() < tree.size()) sum->resize(tree.size());
  for (size_t i = 0; i < tree.size(); i++) (*sum)[i] += tree[i];
}

// The trees' counters added up; levels position by position.
lsm::Stats SumStats(const std::vector<lsm::Stats>& trees) {
  lsm::Stats sum;
  uint64_t flush_merge_bytes = 0;
  for (const lsm::Stats& t : trees) {
    sum.puts += t.puts;
    sum.deletes += t.deletes;
    sum.gets += t.gets;
    sum.user_bytes_written += t.user_bytes_written;
    sum.flushes_completed += t.flushes_completed;
    sum.flush_bytes_written += t.flush_bytes_written;
    sum.merges_completed += t.merges_completed;
    sum.merge_bytes_read += t.merge_bytes_read;
    sum.merge_bytes_written += t.merge_bytes_written;
    sum.memory_components_immutable += t.memory_components_immutable;
    sum.disk_components += t.disk_components;
    AddPerLevel(t.disk_components_per_level, &sum.disk_components_per_level);
    AddPerLevel(t.disk_bytes_per_level, &sum.disk_bytes_per_level);
    sum.disk_bytes += t.disk_bytes;
    sum.max_components += t.max_components;
    sum.constrained_components += t.constrained_components;
    sum.merges_pending += t.merges_pending;
    sum.merges_running += t.merges_running;
    AddPerLevel(t.merges_pending_per_level, &sum.merges_pending_per_level);
    AddPerLevel(t.merges_running_per_level, &sum.merges_running_per_level);
    sum.merge_remaining_input_bytes.insert(sum.merge_remaining_input_bytes.end(),
                                           t.merge_remaining_input_bytes.begin(),
                                           t.merge_remaining_input_bytes.end());
    sum.merge_stalls += t.merge_stalls;
    sum.merge_stall_micros += t.merge_stall_micros;
    sum.memory_stalls += t.memory_stalls;
    sum.memory_stall_micros += t.memory_stall_micros;
    sum.slowdowns += t.slowdowns;
    sum.slowdown_micros += t.slowdown_micros;
    sum.background_sync_micros += t.background_sync_micros;
    flush_merge_bytes += t.flush_bytes_written + t.merge_bytes_written;
    if (sum.background_error.empty()) sum.background_error = t.background_error;
  }
  if (sum.user_bytes_written > 0) {
    sum.write_amplification =
        static_cast<double>(flush_merge_bytes) / static_cast<double>(sum.user_bytes_written);
  }
  return sum;
}

// Thread-safe because lsm::Dataset is.
class BuiltinDatasetAdapter final : public KvAdapter {
 public:
  BuiltinDatasetAdapter(std::unique_ptr<builtin::EventLog> events,
                        std::unique_ptr<lsm::Dataset> dataset)
      : events_(std::move(events)), dataset_(std::move(dataset)) {}
  ~BuiltinDatasetAdapter() override { Close(); }

  Status Put(V key, V /*value*/) override {
    return Status::InvalidArgument("a dataset's records need their secondary fields",
                                   std::string(key));
  }
  Status PutRecord(V key, const std::vector<uint64_t>& fields, V value) override {
    return dataset_->Put(key, fields, value);
  }
  Status Delete(V key) override { return dataset_->Delete(key); }
  Status Get(V key, std::string* value) override {
    Status s = dataset_->Get(key, &record_scratch());
    if (s.ok()) value->swap(record_scratch().payload);
    return s;
  }
  Status Scan(V /*start*/, size_t /*count*/, size_t* returned) override {
    *returned = 0;
    return Status::NotSupported("scans of a dataset's primary index");
  }
  Status QuerySecondary(int field, uint64_t low, uint64_t high, size_t* returned) override {
    thread_local std::vector<lsm::Record> records;
    Status s = dataset_->Query(field, low, high, &records);
    *returned = records.size();
    return s;
  }

  Metrics GetMetrics() override {
    const lsm::DatasetStats st = dataset_->GetStats();
    lsm::Stats total = SumStats(st.trees);
    total.memory_stalls += st.memory_stalls;
    total.memory_stall_micros += st.memory_stall_micros;
    total.io_budget_granted_bytes = st.io_budget_granted_bytes;
    total.io_budget_unused_bytes = st.io_budget_unused_bytes;
    if (total.background_error.empty()) total.background_error = st.background_error;
    Metrics m;
    builtin::AddStatsMetrics(total, "", &m);
    for (size_t t = 0; t < st.trees.size(); t++) {
      const std::string prefix = t == 0 ? "primary." : "secondary" + std::to_string(t - 1) + ".";
      builtin::AddStatsMetrics(st.trees[t], prefix, &m);
    }
    auto d = [](uint64_t v) { return static_cast<double>(v); };
    m["flush_rounds"] = d(st.flush_rounds);
    m["records_put"] = d(st.records_put);
    m["records_deleted"] = d(st.records_deleted);
    m["maintenance_lookups"] = d(st.maintenance_lookups);
    m["antimatter_entries"] = d(st.antimatter_entries);
    m["queries"] = d(st.queries);
    m["query_candidates"] = d(st.query_candidates);
    m["query_results"] = d(st.query_results);
    m["stale_entries_skipped"] = d(st.stale_entries_skipped);
    return m;
  }

  std::vector<EngineEvent> TakeEvents() override { return events_->Take(); }

  // Every tree's flushes and merges (see BuiltinAdapter::Settle).
  Status Settle(double timeout_s, SettleReport* report) override {
    return PollUntilIdle(
        timeout_s,
        [this](BackgroundWork* work) {
          const lsm::DatasetStats st = dataset_->GetStats();
          return builtin::LookAtWork(st.trees, st.background_error, work);
        },
        report);
  }

  Status Close() override {
    dataset_.reset();  // the destructor flushes every tree
    return Status::OK();
  }

 private:
  static lsm::Record& record_scratch() {
    thread_local lsm::Record record;
    return record;
  }

  const std::unique_ptr<builtin::EventLog> events_;  // outlives dataset_, which calls it
  std::unique_ptr<lsm::Dataset> dataset_;
};

}  // namespace

Status OpenBuiltinDatasetAdapter(const std::string& dir, const AdapterOptions& options,
                                 int secondary_indexes, std::unique_ptr<KvAdapter>* adapter) {
  lsm::DatasetOptions o;
  Status s = ParseBuiltinOptions(options, &o.options);
  if (!s.ok()) return s;
  o.secondary_indexes = secondary_indexes;
  auto events = std::make_unique<builtin::EventLog>();
  o.options.listener = events.get();
  std::unique_ptr<lsm::Dataset> dataset;
  s = lsm::Dataset::Open(o, dir, &dataset);
  if (!s.ok()) return s;
  *adapter = std::make_unique<BuiltinDatasetAdapter>(std::move(events), std::move(dataset));
  return Status::OK();
}

}  // namespace lsmbench
