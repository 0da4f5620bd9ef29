#include "adapters/rocksdb_adapter.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <utility>

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/write_batch.h>

#include "adapters/option_parser.h"
#include "adapters/settle_poll.h"

namespace lsmbench {

namespace {

using V = std::string_view;

rocksdb::Slice ToSlice(V s) { return rocksdb::Slice(s.data(), s.size()); }

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  const std::string msg = s.getState() != nullptr ? s.getState() : s.ToString();
  if (s.IsNotFound()) return Status::NotFound("rocksdb", msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument("rocksdb", msg);
  if (s.IsCorruption()) return Status::Corruption("rocksdb", msg);
  if (s.IsNotSupported()) return Status::NotSupported("rocksdb", msg);
  return Status::IOError("rocksdb", s.ToString());  // Busy, TimedOut, ... keep RocksDB's code name
}

// Counts background work exactly, in bytes, as RocksDB reports it to
// listeners (rocksdb.cfstats has the same figures only in GB with six
// decimals). Callbacks run on RocksDB's background threads.
class WorkCounter final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "lsmbench.WorkCounter"; }

  void OnTableFileCreated(const rocksdb::TableFileCreationInfo& info) override {
    if (!info.status.ok()) return;
    if (info.reason == rocksdb::TableFileCreationReason::kFlush) {
      bytes_flushed.fetch_add(info.file_size, std::memory_order_relaxed);
    } else if (info.reason == rocksdb::TableFileCreationReason::kCompaction) {
      bytes_merged.fetch_add(info.file_size, std::memory_order_relaxed);
    }
  }
  void OnFlushCompleted(rocksdb::DB*, const rocksdb::FlushJobInfo&) override {
    flushes.fetch_add(1, std::memory_order_relaxed);
  }
  void OnCompactionCompleted(rocksdb::DB*, const rocksdb::CompactionJobInfo& ci) override {
    if (!ci.status.ok()) return;
    merges.fetch_add(1, std::memory_order_relaxed);
    bytes_merge_read.fetch_add(ci.stats.total_input_bytes, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> bytes_flushed{0};
  std::atomic<uint64_t> bytes_merged{0};
  std::atomic<uint64_t> bytes_merge_read{0};
  std::atomic<uint64_t> flushes{0};
  std::atomic<uint64_t> merges{0};
};

// Adapter-level options that RocksDB's options-string API does not cover:
// rocksdb::WriteOptions fields, and the perf-context level of the threads
// that call the adapter.
struct CallOptions {
  rocksdb::WriteOptions write;
  // RocksDB's library default, kEnableCount, counts every key comparison
  // into a thread-local perf context (a __tls_get_addr call from the shared
  // library each time): measured 182k vs 206k puts/s in db_bench's own
  // fillrandom (engines/BENCHMARKS.md). db_bench runs with kDisable; so do we
  // unless asked.
  rocksdb::PerfLevel perf_level = rocksdb::PerfLevel::kDisable;
};

// The perf level last set on this thread by any adapter: RocksDB keeps it per
// thread, so each calling thread gets it set on its first call.
thread_local rocksdb::PerfLevel tls_perf_level = rocksdb::PerfLevel::kUninitialized;

// Thread-safe: rocksdb::DB is, the call options are immutable after open,
// and the adapter's counters are atomic.
class RocksDbAdapter final : public KvAdapter {
 public:
  RocksDbAdapter(rocksdb::DB* db, CallOptions call, int num_levels,
                 std::shared_ptr<WorkCounter> work)
      : db_(db),
        write_options_(call.write),
        perf_level_(call.perf_level),
        num_levels_(num_levels),
        work_(std::move(work)) {}
  ~RocksDbAdapter() override { Close(); }

  Status Put(V key, V value) override {
    SetThreadPerfLevel();
    user_bytes_.fetch_add(key.size() + value.size(), std::memory_order_relaxed);
    rocksdb::WriteBatch& batch = ThreadBatch();
    rocksdb::Status s = batch.Put(ToSlice(key), ToSlice(value));
    return FromRocks(s.ok() ? db_->Write(write_options_, &batch) : s);
  }
  Status Delete(V key) override {
    SetThreadPerfLevel();
    user_bytes_.fetch_add(key.size(), std::memory_order_relaxed);
    rocksdb::WriteBatch& batch = ThreadBatch();
    rocksdb::Status s = batch.Delete(ToSlice(key));
    return FromRocks(s.ok() ? db_->Write(write_options_, &batch) : s);
  }
  Status Get(V key, std::string* value) override {
    SetThreadPerfLevel();
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), value);
    if (s.IsNotFound()) return Status::NotFound("rocksdb");  // hot path: no message copy
    return FromRocks(s);
  }
  Status Scan(V start, size_t count, size_t* returned) override {
    SetThreadPerfLevel();
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    size_t n = 0;
    for (it->Seek(ToSlice(start)); n < count && it->Valid(); it->Next()) ++n;
    *returned = n;
    return FromRocks(it->status());
  }

  Metrics GetMetrics() override {
    Metrics m;
    auto d = [](uint64_t v) { return static_cast<double>(v); };

    // rocksdb.num-files-at-level<N> (a string property), N = 0..num_levels-1.
    uint64_t total = 0;
    for (int level = 0; level < num_levels_; ++level) {
      std::string v;
      if (!db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &v)) continue;
      const uint64_t files = std::strtoull(v.c_str(), nullptr, 10);
      m["disk_components.L" + std::to_string(level)] = d(files);
      total += files;
    }
    m["disk_components"] = d(total);

    auto int_property = [&](const std::string& property, const char* metric) {
      uint64_t v = 0;
      if (db_->GetIntProperty(property, &v)) m[metric] = d(v);
    };
    int_property(rocksdb::DB::Properties::kActualDelayedWriteRate, "delayed_write_rate");
    int_property(rocksdb::DB::Properties::kIsWriteStopped, "write_stopped");
    int_property(rocksdb::DB::Properties::kNumRunningCompactions, "merges_running");
    int_property(rocksdb::DB::Properties::kNumRunningFlushes, "flushes_running");
    // 1 when at least one compaction is needed (RocksDB has no count).
    int_property(rocksdb::DB::Properties::kCompactionPending, "merges_pending");
    int_property(rocksdb::DB::Properties::kEstimatePendingCompactionBytes, "pending_merge_bytes");
    int_property(rocksdb::DB::Properties::kNumImmutableMemTable, "memory_components_immutable");
    int_property(rocksdb::DB::Properties::kLiveSstFilesSize, "disk_bytes");
    rocksdb::ColumnFamilyMetaData meta;
    db_->GetColumnFamilyMetaData(&meta);
    for (const rocksdb::LevelMetaData& level : meta.levels) {
      m["disk_bytes.L" + std::to_string(level.level)] = d(level.size);
    }

    // rocksdb.cfstats (map): io_stalls.total_stop / total_slowdown count how
    // often RocksDB found the column family in a stop / slowdown condition
    // when recomputing it (after each flush or compaction), not stalled
    // writes.
    std::map<std::string, std::string> cfstats;
    if (db_->GetMapProperty(rocksdb::DB::Properties::kCFStats, &cfstats)) {
      const double stops = MapNumber(cfstats, "io_stalls.total_stop");
      const double slowdowns = MapNumber(cfstats, "io_stalls.total_slowdown");
      m["stall_stop_count"] = stops;
      m["stall_slowdown_count"] = slowdowns;
      m["stall_count"] = stops + slowdowns;
    }
    // rocksdb.dbstats (map): db.user_write_stall_micros is the time writers
    // spent delayed or stopped (the "Cumulative stall" line of rocksdb.stats).
    std::map<std::string, std::string> dbstats;
    if (db_->GetMapProperty(rocksdb::DB::Properties::kDBStats, &dbstats)) {
      m["stall_micros"] = MapNumber(dbstats, "db.user_write_stall_micros");
    }

    // The listener's exact byte counts (see WorkCounter).
    const uint64_t flushed = work_->bytes_flushed.load(std::memory_order_relaxed);
    const uint64_t merged = work_->bytes_merged.load(std::memory_order_relaxed);
    m["bytes_flushed"] = d(flushed);
    m["bytes_merged"] = d(merged);
    m["bytes_merge_read"] = d(work_->bytes_merge_read.load(std::memory_order_relaxed));
    m["flushes"] = d(work_->flushes.load(std::memory_order_relaxed));
    m["merges"] = d(work_->merges.load(std::memory_order_relaxed));

    // Key + value bytes of puts, key bytes of deletes: counted here so that
    // write_amplification means the same as the builtin engine's (RocksDB's
    // db.user_bytes_written includes write-batch encoding overhead).
    const uint64_t user = user_bytes_.load(std::memory_order_relaxed);
    m["user_bytes"] = d(user);
    m["write_amplification"] = user == 0 ? 0.0 : d(flushed + merged) / d(user);
    return m;
  }

  // Polls what db_bench's waitforcompaction polled (RocksDB 7.8 has no
  // DB::WaitForCompact): a memtable waiting for its flush, a compaction
  // needed, flushes and compactions running.
  Status Settle(double timeout_s, SettleReport* report) override {
    return PollUntilIdle(timeout_s, [this](BackgroundWork* work) { return LookAtWork(work); },
                         report);
  }

  Status Close() override {
    if (!db_) return Status::OK();
    // With the WAL disabled RocksDB flushes the memtables here (its default
    // avoid_flush_during_shutdown=false).
    Status s = FromRocks(db_->Close());
    db_.reset();
    return s;
  }

 private:
  static double MapNumber(const std::map<std::string, std::string>& map, const std::string& key) {
    auto it = map.find(key);
    return it == map.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
  }

  Status LookAtWork(BackgroundWork* work) {
    using P = rocksdb::DB::Properties;
    uint64_t flush_pending = 0, compaction_pending = 0, flushes = 0, compactions = 0;
    if (!db_->GetIntProperty(P::kMemTableFlushPending, &flush_pending) ||
        !db_->GetIntProperty(P::kCompactionPending, &compaction_pending) ||
        !db_->GetIntProperty(P::kNumRunningFlushes, &flushes) ||
        !db_->GetIntProperty(P::kNumRunningCompactions, &compactions)) {
      return Status::IOError("rocksdb", "cannot read the flush and compaction properties");
    }
    work->busy = flush_pending + compaction_pending + flushes + compactions > 0;
    work->completed = work_->flushes.load(std::memory_order_relaxed) +
                      work_->merges.load(std::memory_order_relaxed);
    work->detail = "rocksdb.mem-table-flush-pending " + std::to_string(flush_pending) +
                   ", rocksdb.compaction-pending " + std::to_string(compaction_pending) +
                   ", rocksdb.num-running-flushes " + std::to_string(flushes) +
                   ", rocksdb.num-running-compactions " + std::to_string(compactions);
    return Status::OK();
  }

  // One batch per thread, cleared and reused for each write, as db_bench
  // does: DB::Put would build (allocate and free) a new one per call.
  static rocksdb::WriteBatch& ThreadBatch() {
    thread_local rocksdb::WriteBatch batch;
    batch.Clear();
    return batch;
  }

  void SetThreadPerfLevel() const {
    if (tls_perf_level != perf_level_) {
      rocksdb::SetPerfLevel(perf_level_);
      tls_perf_level = perf_level_;
    }
  }

  std::unique_ptr<rocksdb::DB> db_;
  const rocksdb::WriteOptions write_options_;
  const rocksdb::PerfLevel perf_level_;
  const int num_levels_;
  const std::shared_ptr<WorkCounter> work_;
  std::atomic<uint64_t> user_bytes_{0};
};

Status PerfLevelField(std::string_view name, std::string_view value, CallOptions* call) {
  // RocksDB's enum spelling, as the options-string API spells its enums.
  static const std::vector<std::string> kNames = {
      "kDisable", "kEnableCount", "kEnableTimeExceptForMutex",
      "kEnableTimeAndCPUTimeExceptForMutex", "kEnableTime"};
  size_t index = 0;
  Status s = ParseChoice(name, value, kNames, &index);
  if (s.ok()) {
    call->perf_level = static_cast<rocksdb::PerfLevel>(
        static_cast<int>(rocksdb::PerfLevel::kDisable) + static_cast<int>(index));
  }
  return s;
}

// Per-call options are parsed but not described (--describe-options lists
// what opens the database), so only their name and setter are given.
OptionSpec<CallOptions> CallOption(const char* name,
                                   Status (*set)(std::string_view, std::string_view,
                                                 CallOptions*)) {
  OptionSpec<CallOptions> spec{};
  spec.name = name;
  spec.set = set;
  return spec;
}

const std::vector<OptionSpec<CallOptions>>& CallOptionTable() {
  static const std::vector<OptionSpec<CallOptions>> table = {
      CallOption("disableWAL", BoolField<&CallOptions::write, &rocksdb::WriteOptions::disableWAL>),
      CallOption("sync", BoolField<&CallOptions::write, &rocksdb::WriteOptions::sync>),
      CallOption("perf_level", PerfLevelField),
  };
  return table;
}

bool IsCallOption(const std::string& name) {
  for (const auto& spec : CallOptionTable()) {
    if (name == spec.name) return true;
  }
  return false;
}

// Applies options one at a time so that an error names the option: RocksDB's
// own messages do not always (e.g. "Error parsing:: compression").
Status ParseRocksDbOptions(const AdapterOptions& options, rocksdb::Options* result,
                           CallOptions* call) {
  AdapterOptions call_only;
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  std::string errors;
  auto add = [&errors](const Status& s) {
    if (!s.ok()) errors += (errors.empty() ? "" : "; ") + lsm::ErrorMessage(s);
  };
  for (const auto& [name, value] : options) {
    if (IsCallOption(name)) {
      call_only.emplace(name, value);
      continue;
    }
    // A ';' outside braces would smuggle in a second option.
    if (value.find(';') != std::string::npos && !(value.front() == '{' && value.back() == '}')) {
      add(BadOptionValue(name, value, "a value containing ';' must be wrapped in {}"));
      continue;
    }
    rocksdb::Options next;
    rocksdb::Status s = rocksdb::GetOptionsFromString(config, *result, name + "=" + value, &next);
    if (!s.ok()) {
      // RocksDB's own words, without its code prefix ("Invalid argument: ").
      add(Status::InvalidArgument("engine option '" + name + "'",
                                  s.getState() != nullptr ? s.getState() : s.ToString()));
      continue;
    }
    *result = std::move(next);
  }
  add(ApplyOptions(CallOptionTable(), call_only, call));
  return errors.empty() ? Status::OK() : Status::InvalidArgument(errors);
}

}  // namespace

Status OpenRocksDbAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter) {
  rocksdb::Options o;
  o.create_if_missing = true;
  CallOptions call;
  Status s = ParseRocksDbOptions(options, &o, &call);
  if (!s.ok()) return s;
  auto work = std::make_shared<WorkCounter>();
  o.listeners.push_back(work);
  rocksdb::DB* db = nullptr;
  s = FromRocks(rocksdb::DB::Open(o, dir, &db));
  if (!s.ok()) return s;
  *adapter = std::make_unique<RocksDbAdapter>(db, call, o.num_levels, std::move(work));
  return Status::OK();
}

Status CheckRocksDbOptions(const AdapterOptions& options) {
  rocksdb::Options o;
  CallOptions call;
  return ParseRocksDbOptions(options, &o, &call);
}

}  // namespace lsmbench
