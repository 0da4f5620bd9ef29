// RocksDB as an engine plugin: built against engines/plugin/include/lsmbench/engine_plugin.h
// and RocksDB's public headers alone, nothing of lsmbench's. It tells metrics from RocksDB's
// properties, settle from the properties db_bench's waitforcompaction polls and, from its
// EventListener, every flush and compaction with its levels, bytes and times.
//
// Options: the table lists RocksDB's main knobs, and is open (options_open): any option
// RocksDB's options-string API knows (GetOptionsFromString) is accepted, checked one at a
// time by check_options so that an error names the option. disable_wal
// (WriteOptions::disableWAL, in the specs' lower case), sync and perf_level are the
// plugin's own (WriteOptions, the calling threads' perf level).
#include <lsmbench/engine_plugin.h>

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

// The bench build's twin (engines/plugin/CMakeLists.txt) takes another name, so that one
// driver can measure a build of it beside the one called rocksdb.
#ifndef LSMBENCH_ROCKSDB_PLUGIN_NAME
#define LSMBENCH_ROCKSDB_PLUGIN_NAME "rocksdb"
#endif

namespace {

int64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

lsmbench_code Say(lsmbench_message* m, lsmbench_code code, const std::string& text) {
  snprintf(m->text, LSMBENCH_MESSAGE_BYTES, "%s", text.c_str());
  return code;
}

lsmbench_code FromRocks(const rocksdb::Status& s, lsmbench_message* m) {
  if (s.ok()) return LSMBENCH_OK;
  if (s.IsNotFound()) return LSMBENCH_NOT_FOUND;
  const lsmbench_code code = s.IsInvalidArgument()  ? LSMBENCH_INVALID_ARGUMENT
                             : s.IsCorruption()     ? LSMBENCH_CORRUPTION
                             : s.IsNotSupported()   ? LSMBENCH_NOT_SUPPORTED
                             : s.IsIOError()        ? LSMBENCH_IO_ERROR
                                                    : LSMBENCH_FAILED;
  return Say(m, code, s.ToString());
}

// Flushes and compactions as RocksDB's background threads report them, queued in
// completion order for take_events; byte counts for the metrics.
class Listener final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "lsmbench.plugin"; }

  void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    flush_start_[{info.thread_id, info.job_id}] = NowNs();
  }
  void OnTableFileCreated(const rocksdb::TableFileCreationInfo& info) override {
    if (!info.status.ok()) return;
    if (info.reason == rocksdb::TableFileCreationReason::kFlush) {
      bytes_flushed.fetch_add(info.file_size, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(mu_);
      flush_bytes_[info.job_id] += info.file_size;
    } else if (info.reason == rocksdb::TableFileCreationReason::kCompaction) {
      bytes_merged.fetch_add(info.file_size, std::memory_order_relaxed);
    }
  }
  void OnFlushCompleted(rocksdb::DB*, const rocksdb::FlushJobInfo& info) override {
    lsmbench_event e{};
    e.kind = LSMBENCH_EVENT_FLUSH;
    e.entries = info.table_properties.num_entries;
    std::lock_guard<std::mutex> lock(mu_);
    auto start = flush_start_.find({info.thread_id, info.job_id});
    e.end_ns = NowNs();  // under the lock: the queue stays in completion order
    e.start_ns = start != flush_start_.end() ? start->second : e.end_ns;
    if (start != flush_start_.end()) flush_start_.erase(start);
    e.output_bytes = flush_bytes_[info.job_id];
    flush_bytes_.erase(info.job_id);
    events_.push_back(e);
    flushes.fetch_add(1, std::memory_order_relaxed);
    completed.fetch_add(1, std::memory_order_relaxed);
  }
  void OnCompactionCompleted(rocksdb::DB*, const rocksdb::CompactionJobInfo& ci) override {
    if (!ci.status.ok()) return;
    lsmbench_event e{};
    e.kind = LSMBENCH_EVENT_MERGE;
    e.output_level = ci.output_level;
    e.deepest_input_level = ci.base_input_level;
    for (const auto& f : ci.input_file_infos) {
      e.deepest_input_level = std::max(e.deepest_input_level, f.level);
    }
    e.inputs = std::max<uint64_t>(1, ci.input_files.size());
    e.input_bytes = ci.stats.total_input_bytes;
    e.output_bytes = ci.stats.total_output_bytes;
    e.entries = ci.stats.num_input_records;
    // A trivial move lists its files as inputs and outputs both (listener.h).
    const std::set<std::string> inputs(ci.input_files.begin(), ci.input_files.end());
    const bool moved = !ci.output_files.empty() &&
                       std::all_of(ci.output_files.begin(), ci.output_files.end(),
                                   [&](const std::string& f) { return inputs.count(f) > 0; });
    if (moved) {
      e.flags = LSMBENCH_EVENT_MOVED;
      e.output_bytes = 0;
    }
    bytes_merge_read.fetch_add(ci.stats.total_input_bytes, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    e.end_ns = NowNs();
    e.start_ns = std::max<int64_t>(1, e.end_ns - static_cast<int64_t>(ci.stats.elapsed_micros) * 1000);
    events_.push_back(e);
    merges.fetch_add(1, std::memory_order_relaxed);
    completed.fetch_add(1, std::memory_order_relaxed);
  }
  void OnStallConditionsChanged(const rocksdb::WriteStallInfo& info) override {
    using C = rocksdb::WriteStallCondition;
    if (info.condition.cur != C::kNormal && info.condition.prev == C::kNormal) {
      stall_count.fetch_add(1, std::memory_order_relaxed);
    }
  }

  size_t Take(lsmbench_event* out, size_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = std::min(capacity, events_.size());
    std::copy(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(n), out);
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(n));
    return n;
  }

  std::atomic<uint64_t> bytes_flushed{0}, bytes_merged{0}, bytes_merge_read{0};
  std::atomic<uint64_t> completed{0}, flushes{0}, merges{0}, stall_count{0};

 private:
  std::mutex mu_;
  std::map<std::pair<uint64_t, int>, int64_t> flush_start_;
  std::map<int, uint64_t> flush_bytes_;
  std::deque<lsmbench_event> events_;
};

struct CallOptions {
  rocksdb::WriteOptions write;
  // RocksDB's default, kEnableCount, counts every key comparison into a thread-local perf
  // context; db_bench runs with kDisable, and so does this plugin unless asked.
  rocksdb::PerfLevel perf_level = rocksdb::PerfLevel::kDisable;
};

const char* const kPerfLevels[] = {"kDisable", "kEnableCount", "kEnableTimeExceptForMutex",
                                   "kEnableTimeAndCPUTimeExceptForMutex", "kEnableTime"};

// Applies one option to o or call; "" or what is wrong with it.
std::string ApplyOption(const std::string& name, const std::string& value, rocksdb::Options* o,
                        CallOptions* call) {
  if (name == "disable_wal" || name == "sync") {
    if (value != "true" && value != "false") return "expected true or false";
    (name == "sync" ? call->write.sync : call->write.disableWAL) = value == "true";
    return "";
  }
  if (name == "perf_level") {
    for (size_t i = 0; i < sizeof(kPerfLevels) / sizeof(kPerfLevels[0]); i++) {
      if (value == kPerfLevels[i]) {
        call->perf_level = static_cast<rocksdb::PerfLevel>(
            static_cast<int>(rocksdb::PerfLevel::kDisable) + static_cast<int>(i));
        return "";
      }
    }
    return "choose from: kDisable, kEnableCount, kEnableTimeExceptForMutex, "
           "kEnableTimeAndCPUTimeExceptForMutex, kEnableTime";
  }
  // A ';' outside braces would smuggle in a second option.
  if (value.find(';') != std::string::npos && !(value.front() == '{' && value.back() == '}')) {
    return "a value containing ';' must be wrapped in {}";
  }
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  rocksdb::Options next;
  rocksdb::Status s = rocksdb::GetOptionsFromString(config, *o, name + "=" + value, &next);
  if (!s.ok()) return s.getState() != nullptr ? s.getState() : s.ToString();
  *o = std::move(next);
  return "";
}

lsmbench_code ParseOptions(const char* const* names, const char* const* values, size_t count,
                           rocksdb::Options* o, CallOptions* call, lsmbench_message* m) {
  std::string errors;
  for (size_t i = 0; i < count; i++) {
    const std::string why = ApplyOption(names[i], values[i], o, call);
    if (!why.empty()) {
      errors += std::string(errors.empty() ? "" : "; ") + "engine option '" + names[i] +
                "': bad value '" + values[i] + "' (" + why + ")";
    }
  }
  return errors.empty() ? LSMBENCH_OK : Say(m, LSMBENCH_INVALID_ARGUMENT, errors);
}

struct Engine {
  std::unique_ptr<rocksdb::DB> db;
  std::shared_ptr<Listener> listener;
  CallOptions call;
  int num_levels = 7;
  std::atomic<uint64_t> user_bytes{0};
};

Engine* Of(lsmbench_engine* e) { return reinterpret_cast<Engine*>(e); }

thread_local rocksdb::PerfLevel tls_perf_level = rocksdb::PerfLevel::kUninitialized;

void SetThreadPerfLevel(const Engine* e) {
  if (tls_perf_level != e->call.perf_level) {
    rocksdb::SetPerfLevel(e->call.perf_level);
    tls_perf_level = e->call.perf_level;
  }
}

// One batch per thread, cleared and reused, as db_bench does.
rocksdb::WriteBatch& ThreadBatch() {
  thread_local rocksdb::WriteBatch batch;
  batch.Clear();
  return batch;
}

lsmbench_code CheckOptions(const char* const* names, const char* const* values, size_t count,
                           lsmbench_message* m) {
  rocksdb::Options o;
  CallOptions call;
  return ParseOptions(names, values, count, &o, &call, m);
}

lsmbench_code Open(const char* dir, const char* const* names, const char* const* values,
                   size_t count, uint32_t, lsmbench_engine** out, lsmbench_message* m) {
  auto e = std::make_unique<Engine>();
  rocksdb::Options o;
  o.create_if_missing = true;
  lsmbench_code code = ParseOptions(names, values, count, &o, &e->call, m);
  if (code != LSMBENCH_OK) return code;
  e->listener = std::make_shared<Listener>();
  o.listeners.push_back(e->listener);
  e->num_levels = o.num_levels;
  rocksdb::DB* db = nullptr;
  code = FromRocks(rocksdb::DB::Open(o, dir, &db), m);
  if (code != LSMBENCH_OK) return code;
  e->db.reset(db);
  *out = reinterpret_cast<lsmbench_engine*>(e.release());
  return LSMBENCH_OK;
}

lsmbench_code Close(lsmbench_engine* engine, lsmbench_message* m) {
  std::unique_ptr<Engine> e(Of(engine));
  // With the WAL disabled RocksDB flushes the memtables here.
  return FromRocks(e->db->Close(), m);
}

rocksdb::Slice S(const char* p, size_t n) { return rocksdb::Slice(p, n); }

lsmbench_code Put(lsmbench_engine* engine, const char* key, size_t key_size, const char* value,
                  size_t value_size, lsmbench_message* m) {
  Engine* e = Of(engine);
  SetThreadPerfLevel(e);
  e->user_bytes.fetch_add(key_size + value_size, std::memory_order_relaxed);
  rocksdb::WriteBatch& batch = ThreadBatch();
  rocksdb::Status s = batch.Put(S(key, key_size), S(value, value_size));
  return FromRocks(s.ok() ? e->db->Write(e->call.write, &batch) : s, m);
}

lsmbench_code Del(lsmbench_engine* engine, const char* key, size_t key_size,
                  lsmbench_message* m) {
  Engine* e = Of(engine);
  SetThreadPerfLevel(e);
  e->user_bytes.fetch_add(key_size, std::memory_order_relaxed);
  rocksdb::WriteBatch& batch = ThreadBatch();
  rocksdb::Status s = batch.Delete(S(key, key_size));
  return FromRocks(s.ok() ? e->db->Write(e->call.write, &batch) : s, m);
}

lsmbench_code Get(lsmbench_engine* engine, const char* key, size_t key_size,
                  lsmbench_value_sink sink, void* context, lsmbench_message* m) {
  Engine* e = Of(engine);
  SetThreadPerfLevel(e);
  rocksdb::PinnableSlice value;
  rocksdb::Status s = e->db->Get(rocksdb::ReadOptions(), e->db->DefaultColumnFamily(),
                                 S(key, key_size), &value);
  if (s.ok()) sink(context, value.data(), value.size());
  return FromRocks(s, m);
}

lsmbench_code Scan(lsmbench_engine* engine, const char* start, size_t start_size, size_t count,
                   size_t* returned, lsmbench_message* m) {
  Engine* e = Of(engine);
  SetThreadPerfLevel(e);
  std::unique_ptr<rocksdb::Iterator> it(e->db->NewIterator(rocksdb::ReadOptions()));
  size_t n = 0;
  volatile size_t bytes = 0;  // the values are read, as an application would
  for (it->Seek(S(start, start_size)); n < count && it->Valid(); it->Next()) {
    bytes += it->key().size() + it->value().size();
    ++n;
  }
  *returned = n;
  return FromRocks(it->status(), m);
}

lsmbench_code WriteBatch(lsmbench_engine* engine, const lsmbench_write* writes, size_t count,
                         lsmbench_message* m) {
  Engine* e = Of(engine);
  SetThreadPerfLevel(e);
  rocksdb::WriteBatch& batch = ThreadBatch();
  uint64_t bytes = 0;
  for (size_t i = 0; i < count; i++) {
    const lsmbench_write& w = writes[i];
    rocksdb::Status s = w.kind == LSMBENCH_WRITE_DELETE
                            ? batch.Delete(S(w.key, w.key_size))
                            : batch.Put(S(w.key, w.key_size), S(w.value, w.value_size));
    if (!s.ok()) return FromRocks(s, m);
    bytes += w.key_size + (w.kind == LSMBENCH_WRITE_DELETE ? 0 : w.value_size);
  }
  e->user_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return FromRocks(e->db->Write(e->call.write, &batch), m);
}

double MapNumber(const std::map<std::string, std::string>& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
}

lsmbench_code Metrics(lsmbench_engine* engine, lsmbench_metric_sink sink, void* context,
                      lsmbench_message*) {
  Engine* e = Of(engine);
  rocksdb::DB* db = e->db.get();
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  uint64_t total = 0;
  for (int level = 0; level < e->num_levels; ++level) {
    std::string v;
    if (!db->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &v)) continue;
    const uint64_t files = std::strtoull(v.c_str(), nullptr, 10);
    sink(context, ("disk_components.L" + std::to_string(level)).c_str(), d(files));
    total += files;
  }
  sink(context, "disk_components", d(total));
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  for (const rocksdb::LevelMetaData& level : meta.levels) {
    sink(context, ("disk_bytes.L" + std::to_string(level.level)).c_str(), d(level.size));
  }
  using P = rocksdb::DB::Properties;
  const std::pair<const std::string*, const char*> ints[] = {
      {&P::kActualDelayedWriteRate, "delayed_write_rate"},
      {&P::kIsWriteStopped, "write_stopped"},
      {&P::kNumRunningCompactions, "merges_running"},
      {&P::kNumRunningFlushes, "flushes_running"},
      {&P::kCompactionPending, "merges_pending"},  // 1: at least one is needed (no count)
      {&P::kEstimatePendingCompactionBytes, "pending_merge_bytes"},
      {&P::kNumImmutableMemTable, "memory_components_immutable"},
      {&P::kCurSizeAllMemTables, "memory_bytes"},
      {&P::kLiveSstFilesSize, "disk_bytes"},
  };
  for (const auto& [property, metric] : ints) {
    uint64_t v = 0;
    if (db->GetIntProperty(*property, &v)) sink(context, metric, d(v));
  }
  std::map<std::string, std::string> dbstats;
  if (db->GetMapProperty(P::kDBStats, &dbstats)) {
    sink(context, "stall_micros", MapNumber(dbstats, "db.user_write_stall_micros"));
  }
  // Entries into a slowdown or stop condition (OnStallConditionsChanged).
  sink(context, "stall_count", d(e->listener->stall_count.load(std::memory_order_relaxed)));
  sink(context, "flushes", d(e->listener->flushes.load(std::memory_order_relaxed)));
  sink(context, "merges", d(e->listener->merges.load(std::memory_order_relaxed)));
  const uint64_t flushed = e->listener->bytes_flushed.load(std::memory_order_relaxed);
  const uint64_t merged = e->listener->bytes_merged.load(std::memory_order_relaxed);
  const uint64_t user = e->user_bytes.load(std::memory_order_relaxed);
  sink(context, "bytes_flushed", d(flushed));
  sink(context, "bytes_merged", d(merged));
  sink(context, "bytes_merge_read",
       d(e->listener->bytes_merge_read.load(std::memory_order_relaxed)));
  sink(context, "user_bytes", d(user));
  sink(context, "write_amplification", user == 0 ? 0.0 : d(flushed + merged) / d(user));
  return LSMBENCH_OK;
}

size_t TakeEvents(lsmbench_engine* engine, lsmbench_event* events, size_t capacity) {
  return Of(engine)->listener->Take(events, capacity);
}

// What db_bench's waitforcompaction polls (RocksDB 7.8 has no DB::WaitForCompact).
lsmbench_code BackgroundWork(lsmbench_engine* engine, lsmbench_work* work, lsmbench_message* m) {
  Engine* e = Of(engine);
  using P = rocksdb::DB::Properties;
  uint64_t flush_pending = 0, compaction_pending = 0, flushes = 0, compactions = 0;
  if (!e->db->GetIntProperty(P::kMemTableFlushPending, &flush_pending) ||
      !e->db->GetIntProperty(P::kCompactionPending, &compaction_pending) ||
      !e->db->GetIntProperty(P::kNumRunningFlushes, &flushes) ||
      !e->db->GetIntProperty(P::kNumRunningCompactions, &compactions)) {
    return Say(m, LSMBENCH_IO_ERROR, "cannot read the flush and compaction properties");
  }
  work->flushes_pending = flush_pending;
  work->flushes_running = flushes;
  work->merges_pending = compaction_pending;
  work->merges_running = compactions;
  work->completed = e->listener->completed.load(std::memory_order_relaxed);
  return LSMBENCH_OK;
}

// The table: RocksDB's main knobs, with the defaults of rocksdb::Options().
struct Table {
  std::vector<std::string> defaults;  // owns the default strings
  std::vector<lsmbench_option> options;
  lsmbench_engine_api api{};
  std::string version;
};

const Table& MakeTable() {
  static const Table* table = [] {
    auto* t = new Table();
    const rocksdb::Options o;
    constexpr double kG = 1024.0 * 1024 * 1024;
    struct Row {
      const char* name;
      uint32_t kind;
      double min, max;
      const char* choices;
      const char* unit;
      const char* doc;
      std::string def;
    };
    const std::vector<Row> rows = {
        {"write_buffer_size", LSMBENCH_OPTION_SIZE, 64 * 1024, 64 * kG, "", "bytes",
         "Memtable size before it is sealed and flushed.", std::to_string(o.write_buffer_size)},
        {"max_write_buffer_number", LSMBENCH_OPTION_INT, 2, 64, "", "memtables",
         "Memtables (active and sealed) before writes stop.",
         std::to_string(o.max_write_buffer_number)},
        {"level0_file_num_compaction_trigger", LSMBENCH_OPTION_INT, 1, 1 << 20, "", "files",
         "L0 files that trigger a compaction into L1.",
         std::to_string(o.level0_file_num_compaction_trigger)},
        {"level0_slowdown_writes_trigger", LSMBENCH_OPTION_INT, 1, 1 << 20, "", "files",
         "L0 files at which writes are slowed down.",
         std::to_string(o.level0_slowdown_writes_trigger)},
        {"level0_stop_writes_trigger", LSMBENCH_OPTION_INT, 1, 1 << 20, "", "files",
         "L0 files at which writes stop.", std::to_string(o.level0_stop_writes_trigger)},
        {"max_bytes_for_level_base", LSMBENCH_OPTION_SIZE, 64 * 1024, 1024 * kG, "", "bytes",
         "Capacity of L1.", std::to_string(o.max_bytes_for_level_base)},
        {"max_bytes_for_level_multiplier", LSMBENCH_OPTION_REAL, 1, 1000, "", "",
         "Size ratio between adjacent levels.", "10"},
        {"target_file_size_base", LSMBENCH_OPTION_SIZE, 64 * 1024, 64 * kG, "", "bytes",
         "SST file size in L1.", std::to_string(o.target_file_size_base)},
        {"num_levels", LSMBENCH_OPTION_INT, 1, 64, "", "levels", "Levels of the tree.",
         std::to_string(o.num_levels)},
        {"compaction_style", LSMBENCH_OPTION_CHOICE, 0, 0,
         "kCompactionStyleLevel,kCompactionStyleUniversal,kCompactionStyleFIFO", "",
         "Leveled, universal (tiered) or FIFO compaction.", "kCompactionStyleLevel"},
        {"level_compaction_dynamic_level_bytes", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
         "Size the levels from the last one up.",
         o.level_compaction_dynamic_level_bytes ? "true" : "false"},
        {"max_background_jobs", LSMBENCH_OPTION_INT, 1, 1024, "", "threads",
         "Background flush and compaction threads.", std::to_string(o.max_background_jobs)},
        {"compression", LSMBENCH_OPTION_CHOICE, 0, 0,
         "kNoCompression,kSnappyCompression,kZlibCompression,kLZ4Compression,kZSTD", "",
         "Block compression.", "kSnappyCompression"},
        {"disable_wal", LSMBENCH_OPTION_BOOL, 0, 0, "", "", "Write no log (WriteOptions).",
         "false"},
        {"sync", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
         "fsync the log before acknowledging (WriteOptions).", "false"},
        {"perf_level", LSMBENCH_OPTION_CHOICE, 0, 0,
         "kDisable,kEnableCount,kEnableTimeExceptForMutex,kEnableTimeAndCPUTimeExceptForMutex,"
         "kEnableTime",
         "", "The calling threads' perf-context level.", "kDisable"},
    };
    t->defaults.reserve(rows.size());
    for (const Row& r : rows) t->defaults.push_back(r.def);
    for (size_t i = 0; i < rows.size(); i++) {
      const Row& r = rows[i];
      t->options.push_back({r.name, r.kind, r.min, r.max, r.choices, r.unit, r.doc,
                            t->defaults[i].c_str()});
    }
    t->version = "rocksdb " + std::to_string(ROCKSDB_MAJOR) + "." +
                 std::to_string(ROCKSDB_MINOR) + "." + std::to_string(ROCKSDB_PATCH) +
                 " (lsmbench plugin 1)";
    lsmbench_engine_api& a = t->api;
    a.abi_version = LSMBENCH_ENGINE_ABI_VERSION;
    a.api_size = sizeof(lsmbench_engine_api);
    a.option_size = sizeof(lsmbench_option);
    a.event_size = sizeof(lsmbench_event);
    a.work_size = sizeof(lsmbench_work);
    a.write_size = sizeof(lsmbench_write);
    a.name = LSMBENCH_ROCKSDB_PLUGIN_NAME;
    a.version = t->version.c_str();
    a.options = t->options.data();
    a.option_count = t->options.size();
    a.options_open = 1;
    a.check_options = CheckOptions;
    a.open = Open;
    a.close = Close;
    a.put = Put;
    a.del = Del;
    a.get = Get;
    a.scan = Scan;
    a.write_batch = WriteBatch;
    a.metrics = Metrics;
    a.take_events = TakeEvents;
    a.background_work = BackgroundWork;
    return t;
  }();
  return *table;
}

}  // namespace

extern "C" LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api* lsmbench_engine_plugin(void) {
  return &MakeTable().api;
}
