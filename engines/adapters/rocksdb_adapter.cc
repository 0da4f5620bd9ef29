#include "adapters/rocksdb_adapter.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <utility>

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>

#include "adapters/option_parser.h"

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

// Thread-safe: rocksdb::DB is, the write options are immutable after open,
// and the adapter's counters are atomic.
class RocksDbAdapter final : public KvAdapter {
 public:
  RocksDbAdapter(rocksdb::DB* db, rocksdb::WriteOptions write_options, int num_levels,
                 std::shared_ptr<WorkCounter> work)
      : db_(db), write_options_(write_options), num_levels_(num_levels), work_(std::move(work)) {}
  ~RocksDbAdapter() override { Close(); }

  Status Put(V key, V value) override {
    user_bytes_.fetch_add(key.size() + value.size(), std::memory_order_relaxed);
    return FromRocks(db_->Put(write_options_, ToSlice(key), ToSlice(value)));
  }
  Status Delete(V key) override {
    user_bytes_.fetch_add(key.size(), std::memory_order_relaxed);
    return FromRocks(db_->Delete(write_options_, ToSlice(key)));
  }
  Status Get(V key, std::string* value) override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), value);
    if (s.IsNotFound()) return Status::NotFound("rocksdb");  // hot path: no message copy
    return FromRocks(s);
  }
  Status Scan(V start, size_t count, size_t* returned) override {
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

  std::unique_ptr<rocksdb::DB> db_;
  const rocksdb::WriteOptions write_options_;
  const int num_levels_;
  const std::shared_ptr<WorkCounter> work_;
  std::atomic<uint64_t> user_bytes_{0};
};

// Adapter-level options: rocksdb::WriteOptions fields, which RocksDB's
// options-string API does not cover.
const std::vector<OptionSpec<rocksdb::WriteOptions>>& WriteOptionTable() {
  using W = rocksdb::WriteOptions;
  static const std::vector<OptionSpec<W>> table = {
      {"disableWAL", BoolField<&W::disableWAL>},
      {"sync", BoolField<&W::sync>},
  };
  return table;
}

bool IsWriteOption(const std::string& name) {
  for (const auto& spec : WriteOptionTable()) {
    if (name == spec.name) return true;
  }
  return false;
}

// Applies options one at a time so that an error names the option: RocksDB's
// own messages do not always (e.g. "Error parsing:: compression").
Status ParseRocksDbOptions(const AdapterOptions& options, rocksdb::Options* result,
                           rocksdb::WriteOptions* write_options) {
  AdapterOptions write_only;
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  for (const auto& [name, value] : options) {
    if (IsWriteOption(name)) {
      write_only.emplace(name, value);
      continue;
    }
    // A ';' outside braces would smuggle in a second option.
    if (value.find(';') != std::string::npos && !(value.front() == '{' && value.back() == '}')) {
      return BadOptionValue(name, value, "a value containing ';' must be wrapped in {}");
    }
    rocksdb::Options next;
    rocksdb::Status s = rocksdb::GetOptionsFromString(config, *result, name + "=" + value, &next);
    if (!s.ok()) {
      return Status::InvalidArgument("engine option '" + name + "'", s.ToString());
    }
    *result = std::move(next);
  }
  return ApplyOptions(WriteOptionTable(), write_only, write_options);
}

}  // namespace

Status OpenRocksDbAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter) {
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::WriteOptions w;
  Status s = ParseRocksDbOptions(options, &o, &w);
  if (!s.ok()) return s;
  auto work = std::make_shared<WorkCounter>();
  o.listeners.push_back(work);
  rocksdb::DB* db = nullptr;
  s = FromRocks(rocksdb::DB::Open(o, dir, &db));
  if (!s.ok()) return s;
  *adapter = std::make_unique<RocksDbAdapter>(db, w, o.num_levels, std::move(work));
  return Status::OK();
}

}  // namespace lsmbench
