#include "adapters/builtin_adapter.h"

#include <utility>

#include "adapters/option_parser.h"
#include "lsm/db.h"
#include "policy/policies.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsmbench {

namespace {

using V = std::string_view;
using O = lsm::Options;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kGiB = 1024 * 1024 * 1024;

Status ParseWal(V name, V value, O* o) {
  static const std::vector<std::string> kNames = {"off", "async", "sync"};
  static const lsm::WalMode kModes[] = {lsm::WalMode::kOff, lsm::WalMode::kAsync,
                                        lsm::WalMode::kSync};
  size_t i = 0;
  Status s = ParseChoice(name, value, kNames, &i);
  if (s.ok()) o->wal = kModes[i];
  return s;
}

std::vector<std::string> ConstraintNames() { return {"global", "local"}; }
std::vector<std::string> WriteControlNames() { return {"stop", "slowdown"}; }

// A string option whose value must be one of Names().
template <std::vector<std::string> (*Names)(), std::string O::*Field>
Status NameField(V name, V value, O* o) {
  const std::vector<std::string> names = Names();
  size_t i = 0;
  Status s = ParseChoice(name, value, names, &i);
  if (s.ok()) o->*Field = names[i];
  return s;
}

Status ParseSizeRatio(V name, V value, O* o) {
  double v = 0;
  Status s = ParseReal(name, value, 0, 1e6, &v);
  if (s.ok() && v != 0 && v <= 1) {
    return BadOptionValue(name, value, "expected 0 (the policy's default) or a number > 1");
  }
  if (s.ok()) o->size_ratio = v;
  return s;
}

// Every lsm::Options field but `env` (a pointer, not a setting), sorted by
// name. A new field is one line here.
const std::vector<OptionSpec<O>>& BuiltinOptionTable() {
  static const std::vector<OptionSpec<O>> table = {
      {"block_bytes", SizeField<256, 256 << 20, &O::block_bytes>},
      {"bloom_bits_per_key", IntField<0, 100, &O::bloom_bits_per_key>},
      {"constraint", NameField<ConstraintNames, &O::constraint>},
      {"create_if_missing", BoolField<&O::create_if_missing>},
      {"dynamic_level_sizes", BoolField<&O::dynamic_level_sizes>},
      {"error_if_exists", BoolField<&O::error_if_exists>},
      {"exploring_max", IntField<2, 1000, &O::exploring_max>},
      {"exploring_min", IntField<2, 1000, &O::exploring_min>},
      {"exploring_ratio", RealField<0, 1000, &O::exploring_ratio>},
      {"force_bytes", SizeField<0, 64 * kGiB, &O::force_bytes>},
      {"io_budget_bytes_per_sec", SizeField<0, 1024 * kGiB, &O::io_budget_bytes_per_sec>},
      {"greedy_k", IntField<1, 64, &O::greedy_k>},
      {"idle_delay_ms", IntField<0, lsm::sched::kMaxIdleDelayMs, &O::idle_delay_ms>},
      {"idle_mode", NameField<lsm::sched::IdleModeNames, &O::idle_mode>},
      {"idle_probe_ms",
       IntField<lsm::sched::kMinIdleProbeMs, lsm::sched::kMaxIdleProbeMs, &O::idle_probe_ms>},
      {"idle_threshold_bytes_per_sec",
       SizeField<0, 1024 * kGiB, &O::idle_threshold_bytes_per_sec>},
      {"io_budget_charge_reads", BoolField<&O::io_budget_charge_reads>},
      {"l0_merge_exact", BoolField<&O::l0_merge_exact>},
      {"l0_stop", IntField<1, lsm::policy::kMaxL0Files, &O::l0_stop>},
      {"l0_trigger", IntField<1, lsm::policy::kMaxL0Files, &O::l0_trigger>},
      {"level1_bytes", SizeField<0, 1024 * kGiB, &O::level1_bytes>},
      {"max_components", IntField<0, 1000000, &O::max_components>},
      {"max_components_per_level", IntField<0, 1000000, &O::max_components_per_level>},
      {"max_merge_components", IntField<2, 1000, &O::max_merge_components>},
      {"memory_components", IntField<2, 1024, &O::memory_components>},
      {"memtable_bytes", SizeField<4 * kKiB, 64 * kGiB, &O::memtable_bytes>},
      {"merge_exact_min", BoolField<&O::merge_exact_min>},
      {"merge_policy", NameField<lsm::policy::PolicyNames, &O::merge_policy>},
      {"merge_scheduler", NameField<lsm::sched::SchedulerNames, &O::merge_scheduler>},
      {"min_merge_components", IntField<2, 1000, &O::min_merge_components>},
      {"partition_bytes",
       SizeField<lsm::policy::kMinPartitionBytes, 64 * kGiB, &O::partition_bytes>},
      {"partition_pick", NameField<lsm::policy::PartitionPickNames, &O::partition_pick>},
      {"size_ratio", ParseSizeRatio},
      {"slowdown_components", IntField<0, 1000000, &O::slowdown_components>},
      {"sstable_bound", IntField<1, 1000, &O::sstable_bound>},
      {"verify_checksums", BoolField<&O::verify_checksums>},
      {"wal", ParseWal},
      {"write_control", NameField<WriteControlNames, &O::write_control>},
  };
  return table;
}

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
  Status s = ApplyOptions(BuiltinOptionTable(), options, result);
  if (s.ok() && result->min_merge_components > result->max_merge_components) {
    s = Status::InvalidArgument("engine option 'min_merge_components': " +
                                std::to_string(result->min_merge_components) +
                                " exceeds max_merge_components " +
                                std::to_string(result->max_merge_components));
  }
  return s;
}

std::vector<std::string> BuiltinOptionNames() { return OptionNames(BuiltinOptionTable()); }

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
