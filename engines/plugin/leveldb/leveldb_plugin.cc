// LevelDB as an engine plugin: built against engines/plugin/include/lsmbench/engine_plugin.h
// and LevelDB's public headers alone. LevelDB has no event listener and no property that
// names pending work, so the plugin cannot tell its flushes, merges or pending work
// (take_events and background_work NULL); its metrics come from LevelDB's properties.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <lsmbench/engine_plugin.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>

namespace {

// leveldb::config::kNumLevels, which is not in LevelDB's public headers.
constexpr int kLevels = 7;
constexpr double kMiB = 1024.0 * 1024.0;

lsmbench_code Say(lsmbench_message* m, lsmbench_code code, const std::string& text) {
  snprintf(m->text, LSMBENCH_MESSAGE_BYTES, "%s", text.c_str());
  return code;
}

lsmbench_code FromLevel(const leveldb::Status& s, lsmbench_message* m) {
  if (s.ok()) return LSMBENCH_OK;
  if (s.IsNotFound()) return LSMBENCH_NOT_FOUND;
  const lsmbench_code code = s.IsCorruption()           ? LSMBENCH_CORRUPTION
                             : s.IsInvalidArgument()    ? LSMBENCH_INVALID_ARGUMENT
                             : s.IsNotSupportedError()  ? LSMBENCH_NOT_SUPPORTED
                                                        : LSMBENCH_IO_ERROR;
  return Say(m, code, s.ToString());
}

constexpr double kKiB = 1024, kMiBD = 1024 * 1024, kGiB = 1024.0 * 1024 * 1024;

// Ranges are the ones LevelDB would otherwise clip values to silently; the defaults are
// leveldb::Options()'s.
const lsmbench_option kOptions[] = {
    {"block_restart_interval", LSMBENCH_OPTION_INT, 1, 1 << 20, "", "keys",
     "Keys between restart points of a data block.", "16"},
    {"block_size", LSMBENCH_OPTION_SIZE, kKiB, 4 * kMiBD, "", "bytes",
     "Uncompressed size of a data block.", "4096"},
    {"bloom_bits_per_key", LSMBENCH_OPTION_INT, 0, 100, "", "bits/key",
     "Bloom filter bits per key (NewBloomFilterPolicy); 0: no filter.", "0"},
    {"cache_bytes", LSMBENCH_OPTION_SIZE, 0, 1024 * kGiB, "", "bytes",
     "Block cache size (NewLRUCache); 0: LevelDB's internal 8 MiB.", "0"},
    {"compression", LSMBENCH_OPTION_CHOICE, 0, 0, "none,snappy", "", "Block compression.",
     "snappy"},
    {"create_if_missing", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Create the database if it is missing.", "true"},
    {"error_if_exists", LSMBENCH_OPTION_BOOL, 0, 0, "", "", "Fail if the database exists.",
     "false"},
    {"max_file_size", LSMBENCH_OPTION_SIZE, kMiBD, kGiB, "", "bytes",
     "Bytes written to a file before a new one.", "2097152"},
    {"max_open_files", LSMBENCH_OPTION_INT, 74, 50000, "", "files",
     "Open files the table cache may keep.", "1000"},
    {"paranoid_checks", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Stop at the first corruption found.", "false"},
    {"reuse_logs", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Append to existing logs and manifests at open.", "false"},
    {"sync", LSMBENCH_OPTION_BOOL, 0, 0, "", "", "fsync the log before acknowledging.",
     "false"},
    {"verify_checksums", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Verify the checksums of every block read.", "false"},
    {"write_buffer_size", LSMBENCH_OPTION_SIZE, 64 * kKiB, kGiB, "", "bytes",
     "Memtable size before it is written to a level-0 file.", "4194304"},
};

struct Engine {
  // Declared before db so they outlive it: the DB uses both until deleted.
  std::unique_ptr<const leveldb::FilterPolicy> filter;
  std::unique_ptr<leveldb::Cache> cache;
  std::unique_ptr<leveldb::DB> db;
  leveldb::WriteOptions write;
  leveldb::ReadOptions read;
  std::atomic<uint64_t> user_bytes{0};
};

Engine* Of(lsmbench_engine* e) { return reinterpret_cast<Engine*>(e); }

// Values arrive checked and canonical (the driver read the table).
void Apply(const std::string& name, const std::string& value, leveldb::Options* o, Engine* e,
           int* bloom_bits, uint64_t* cache_bytes) {
  const bool b = value == "true";
  const uint64_t n = std::strtoull(value.c_str(), nullptr, 10);
  if (name == "block_restart_interval") o->block_restart_interval = static_cast<int>(n);
  if (name == "block_size") o->block_size = n;
  if (name == "bloom_bits_per_key") *bloom_bits = static_cast<int>(n);
  if (name == "cache_bytes") *cache_bytes = n;
  if (name == "compression") {
    o->compression = value == "none" ? leveldb::kNoCompression : leveldb::kSnappyCompression;
  }
  if (name == "create_if_missing") o->create_if_missing = b;
  if (name == "error_if_exists") o->error_if_exists = b;
  if (name == "max_file_size") o->max_file_size = n;
  if (name == "max_open_files") o->max_open_files = static_cast<int>(n);
  if (name == "paranoid_checks") o->paranoid_checks = b;
  if (name == "reuse_logs") o->reuse_logs = b;
  if (name == "sync") e->write.sync = b;
  if (name == "verify_checksums") e->read.verify_checksums = b;
  if (name == "write_buffer_size") o->write_buffer_size = n;
}

lsmbench_code Open(const char* dir, const char* const* names, const char* const* values,
                   size_t count, uint32_t, lsmbench_engine** out, lsmbench_message* m) {
  auto e = std::make_unique<Engine>();
  leveldb::Options o;
  o.create_if_missing = true;
  int bloom_bits = 0;
  uint64_t cache_bytes = 0;
  for (size_t i = 0; i < count; i++) {
    Apply(names[i], values[i], &o, e.get(), &bloom_bits, &cache_bytes);
  }
  if (bloom_bits > 0) {
    e->filter.reset(leveldb::NewBloomFilterPolicy(bloom_bits));
    o.filter_policy = e->filter.get();
  }
  if (cache_bytes > 0) {
    e->cache.reset(leveldb::NewLRUCache(cache_bytes));
    o.block_cache = e->cache.get();
  }
  leveldb::DB* db = nullptr;
  const lsmbench_code code = FromLevel(leveldb::DB::Open(o, dir, &db), m);
  if (code != LSMBENCH_OK) return code;
  e->db.reset(db);
  *out = reinterpret_cast<lsmbench_engine*>(e.release());
  return LSMBENCH_OK;
}

// LevelDB has no explicit close: deleting the DB waits for its background compaction and
// releases the lock. Its log holds the memtable, so nothing is lost.
lsmbench_code Close(lsmbench_engine* engine, lsmbench_message*) {
  delete Of(engine);
  return LSMBENCH_OK;
}

leveldb::Slice S(const char* p, size_t n) { return leveldb::Slice(p, n); }

lsmbench_code Put(lsmbench_engine* engine, const char* key, size_t key_size, const char* value,
                  size_t value_size, lsmbench_message* m) {
  Engine* e = Of(engine);
  e->user_bytes.fetch_add(key_size + value_size, std::memory_order_relaxed);
  return FromLevel(e->db->Put(e->write, S(key, key_size), S(value, value_size)), m);
}

lsmbench_code Del(lsmbench_engine* engine, const char* key, size_t key_size,
                  lsmbench_message* m) {
  Engine* e = Of(engine);
  e->user_bytes.fetch_add(key_size, std::memory_order_relaxed);
  return FromLevel(e->db->Delete(e->write, S(key, key_size)), m);
}

lsmbench_code Get(lsmbench_engine* engine, const char* key, size_t key_size,
                  lsmbench_value_sink sink, void* context, lsmbench_message* m) {
  Engine* e = Of(engine);
  std::string value;
  leveldb::Status s = e->db->Get(e->read, S(key, key_size), &value);
  if (s.ok()) sink(context, value.data(), value.size());
  return FromLevel(s, m);
}

lsmbench_code Scan(lsmbench_engine* engine, const char* start, size_t start_size, size_t count,
                   size_t* returned, lsmbench_message* m) {
  Engine* e = Of(engine);
  std::unique_ptr<leveldb::Iterator> it(e->db->NewIterator(e->read));
  size_t n = 0;
  volatile size_t bytes = 0;  // the values are read, as an application would
  for (it->Seek(S(start, start_size)); n < count && it->Valid(); it->Next()) {
    bytes += it->key().size() + it->value().size();
    ++n;
  }
  *returned = n;
  return FromLevel(it->status(), m);
}

// Sums of the per-level table of leveldb.stats:
//   Level  Files Size(MB) Time(sec) Read(MB) Write(MB)
//   --------------------------------------------------
//     0        2        0         0        0         0
// LevelDB adds a flush's output to the level the table lands in, so Write(MB) is flushes
// plus compactions.
void StatsTable(const std::string& text, double* seconds, double* read_mib, double* write_mib) {
  std::istringstream in(text);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (!in_table) {
      in_table = line.rfind("-----", 0) == 0;
      continue;
    }
    int level = 0, files = 0;
    double size = 0, secs = 0, read = 0, write = 0;
    if (std::sscanf(line.c_str(), "%d %d %lf %lf %lf %lf", &level, &files, &size, &secs, &read,
                    &write) != 6) {
      break;
    }
    *seconds += secs;
    *read_mib += read;
    *write_mib += write;
  }
}

// File bytes per level from "leveldb.sstables" ("--- level N ---", then
// " number:size[smallest .. largest]" per file): exact, where leveldb.stats rounds to MB.
std::map<int, uint64_t> SstableBytes(const std::string& text) {
  std::map<int, uint64_t> bytes;
  std::istringstream in(text);
  std::string line;
  int level = -1;
  while (std::getline(in, line)) {
    int n = 0;
    unsigned long long number = 0, size = 0;
    if (std::sscanf(line.c_str(), "--- level %d ---", &n) == 1) {
      level = n;
      bytes[level] += 0;
    } else if (level >= 0 && std::sscanf(line.c_str(), " %llu:%llu[", &number, &size) == 2) {
      bytes[level] += size;
    }
  }
  return bytes;
}

lsmbench_code Metrics(lsmbench_engine* engine, lsmbench_metric_sink sink, void* context,
                      lsmbench_message*) {
  Engine* e = Of(engine);
  double total = 0;
  for (int level = 0; level < kLevels; ++level) {
    std::string v;
    if (!e->db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v)) continue;
    const double files = std::strtod(v.c_str(), nullptr);
    sink(context, ("disk_components.L" + std::to_string(level)).c_str(), files);
    total += files;
  }
  sink(context, "disk_components", total);
  const double user = static_cast<double>(e->user_bytes.load(std::memory_order_relaxed));
  sink(context, "user_bytes", user);
  std::string stats;
  if (e->db->GetProperty("leveldb.stats", &stats)) {
    double seconds = 0, read_mib = 0, write_mib = 0;
    StatsTable(stats, &seconds, &read_mib, &write_mib);
    sink(context, "bytes_merge_read", read_mib * kMiB);
    sink(context, "bytes_written", write_mib * kMiB);
    sink(context, "merge_seconds", seconds);
    sink(context, "write_amplification", user == 0 ? 0.0 : write_mib * kMiB / user);
  }
  std::string sstables;
  if (e->db->GetProperty("leveldb.sstables", &sstables)) {
    double total_bytes = 0;
    for (const auto& [level, bytes] : SstableBytes(sstables)) {
      sink(context, ("disk_bytes.L" + std::to_string(level)).c_str(), static_cast<double>(bytes));
      total_bytes += static_cast<double>(bytes);
    }
    sink(context, "disk_bytes", total_bytes);
  }
  std::string memory;
  if (e->db->GetProperty("leveldb.approximate-memory-usage", &memory)) {
    sink(context, "memory_bytes", std::strtod(memory.c_str(), nullptr));
  }
  return LSMBENCH_OK;
}

const lsmbench_engine_api kApi = [] {
  lsmbench_engine_api a{};
  a.abi_version = LSMBENCH_ENGINE_ABI_VERSION;
  a.api_size = sizeof(lsmbench_engine_api);
  a.option_size = sizeof(lsmbench_option);
  a.event_size = sizeof(lsmbench_event);
  a.work_size = sizeof(lsmbench_work);
  a.write_size = sizeof(lsmbench_write);
  a.name = "leveldb";
  static const std::string version = "leveldb " + std::to_string(leveldb::kMajorVersion) +
                                     "." + std::to_string(leveldb::kMinorVersion) +
                                     " (lsmbench plugin 1)";
  a.version = version.c_str();
  a.options = kOptions;
  a.option_count = sizeof(kOptions) / sizeof(kOptions[0]);
  a.open = Open;
  a.close = Close;
  a.put = Put;
  a.del = Del;
  a.get = Get;
  a.scan = Scan;
  a.metrics = Metrics;
  return a;
}();

}  // namespace

extern "C" LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api* lsmbench_engine_plugin(void) {
  return &kApi;
}
