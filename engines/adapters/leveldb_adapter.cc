#include "adapters/leveldb_adapter.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>

#include "adapters/option_parser.h"

namespace lsmbench {

namespace {

using V = std::string_view;

// leveldb::config::kNumLevels, which is not in LevelDB's public headers.
constexpr int kLevelDbLevels = 7;
constexpr double kMiB = 1024.0 * 1024.0;

leveldb::Slice ToSlice(V s) { return leveldb::Slice(s.data(), s.size()); }

Status FromLevel(const leveldb::Status& s) {
  if (s.ok()) return Status::OK();
  const std::string msg = s.ToString();
  if (s.IsNotFound()) return Status::NotFound("leveldb", msg);
  if (s.IsCorruption()) return Status::Corruption("leveldb", msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument("leveldb", msg);
  if (s.IsNotSupportedError()) return Status::NotSupported("leveldb", msg);
  return Status::IOError("leveldb", msg);
}

struct LevelDbConfig {
  LevelDbConfig() { options.create_if_missing = true; }
  leveldb::Options options;
  leveldb::WriteOptions write;
  leveldb::ReadOptions read;
  int bloom_bits_per_key = 0;
  uint64_t cache_bytes = 0;
};

using C = LevelDbConfig;

Status ParseCompression(V name, V value, C* c) {
  static const std::vector<std::string> kNames = {"none", "snappy"};
  size_t i = 0;
  Status s = ParseChoice(name, value, kNames, &i);
  if (s.ok()) {
    c->options.compression = i == 0 ? leveldb::kNoCompression : leveldb::kSnappyCompression;
  }
  return s;
}

constexpr uint64_t kKiB = 1024, kMiBInt = 1024 * 1024, kGiB = 1024 * 1024 * 1024;
using LO = leveldb::Options;
constexpr auto kO = &C::options;

std::string CompressionText(const C& c) {
  return c.options.compression == leveldb::kNoCompression ? "none" : "snappy";
}

// Ranges are the ones LevelDB would otherwise clip values to silently.
const std::vector<OptionSpec<C>>& LevelDbOptionTable() {
  static const std::vector<OptionSpec<C>> table = {
      Int<1, 1 << 20, kO, &LO::block_restart_interval>(
          "block_restart_interval", "keys", "Keys between restart points of a data block."),
      Size<kKiB, 4 * kMiBInt, kO, &LO::block_size>("block_size", "bytes",
                                                    "Uncompressed size of a data block."),
      Int<0, 100, &C::bloom_bits_per_key>(
          "bloom_bits_per_key", "bits/key",
          "Bloom filter bits per key (NewBloomFilterPolicy); 0: no filter."),
      Size<0, 1024 * kGiB, &C::cache_bytes>(
          "cache_bytes", "bytes", "Block cache size (NewLRUCache); 0: LevelDB's internal 8 MiB."),
      {"compression", ParseCompression, OptionKind::kChoice, 0, 0, {"none", "snappy"}, "",
       "Block compression.", CompressionText},
      Bool<kO, &LO::create_if_missing>("create_if_missing",
                                        "Create the database if it is missing."),
      Bool<kO, &LO::error_if_exists>("error_if_exists", "Fail if the database exists."),
      Size<kMiBInt, kGiB, kO, &LO::max_file_size>("max_file_size", "bytes",
                                                   "Bytes written to a file before a new one."),
      Int<74, 50000, kO, &LO::max_open_files>("max_open_files", "files",
                                               "Open files the table cache may keep."),
      Bool<kO, &LO::paranoid_checks>("paranoid_checks", "Stop at the first corruption found."),
      Bool<kO, &LO::reuse_logs>("reuse_logs", "Append to existing logs and manifests at open."),
      Bool<&C::write, &leveldb::WriteOptions::sync>("sync",
                                                     "fsync the log before acknowledging."),
      Bool<&C::read, &leveldb::ReadOptions::verify_checksums>(
          "verify_checksums", "Verify the checksums of every block read."),
      Size<64 * kKiB, kGiB, kO, &LO::write_buffer_size>(
          "write_buffer_size", "bytes", "Memtable size before it is written to a level-0 file."),
  };
  return table;
}

// Sums of the per-level table of leveldb.stats:
//   Level  Files Size(MB) Time(sec) Read(MB) Write(MB)
//   --------------------------------------------------
//     0        2        0         0        0         0
struct LevelDbStatsTable {
  double size_mib = 0, seconds = 0, read_mib = 0, write_mib = 0;
};

// File bytes per level from "leveldb.sstables" (a "--- level N ---" line,
// then " number:size[smallest .. largest]" per file, keys escaped): exact,
// where leveldb.stats rounds each level to whole megabytes.
std::map<int, uint64_t> ParseSstableBytes(const std::string& text) {
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

LevelDbStatsTable ParseStats(const std::string& text) {
  LevelDbStatsTable t;
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
    t.size_mib += size;
    t.seconds += secs;
    t.read_mib += read;
    t.write_mib += write;
  }
  return t;
}

// Thread-safe: leveldb::DB is, the per-call options are immutable after
// open, the byte counter is atomic.
class LevelDbAdapter final : public KvAdapter {
 public:
  LevelDbAdapter(leveldb::DB* db, const LevelDbConfig& config,
                 std::unique_ptr<const leveldb::FilterPolicy> filter,
                 std::unique_ptr<leveldb::Cache> cache)
      : filter_(std::move(filter)),
        cache_(std::move(cache)),
        db_(db),
        write_(config.write),
        read_(config.read) {}
  ~LevelDbAdapter() override { Close(); }

  Status Put(V key, V value) override {
    user_bytes_.fetch_add(key.size() + value.size(), std::memory_order_relaxed);
    return FromLevel(db_->Put(write_, ToSlice(key), ToSlice(value)));
  }
  Status Delete(V key) override {
    user_bytes_.fetch_add(key.size(), std::memory_order_relaxed);
    return FromLevel(db_->Delete(write_, ToSlice(key)));
  }
  Status Get(V key, std::string* value) override {
    leveldb::Status s = db_->Get(read_, ToSlice(key), value);
    if (s.IsNotFound()) return Status::NotFound("leveldb");  // hot path: no message copy
    return FromLevel(s);
  }
  Status Scan(V start, size_t count, size_t* returned) override {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(read_));
    size_t n = 0;
    for (it->Seek(ToSlice(start)); n < count && it->Valid(); it->Next()) ++n;
    *returned = n;
    return FromLevel(it->status());
  }

  Metrics GetMetrics() override {
    Metrics m;
    // leveldb.num-files-at-level<N>.
    double total = 0;
    for (int level = 0; level < kLevelDbLevels; ++level) {
      std::string v;
      if (!db_->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v)) continue;
      const double files = std::strtod(v.c_str(), nullptr);
      m["disk_components.L" + std::to_string(level)] = files;
      total += files;
    }
    m["disk_components"] = total;

    // leveldb.stats: LevelDB adds a flush's output to the stats of the level
    // the table lands in, so Write(MB) is flushes plus compactions.
    const uint64_t user = user_bytes_.load(std::memory_order_relaxed);
    m["user_bytes"] = static_cast<double>(user);
    std::string stats;
    if (db_->GetProperty("leveldb.stats", &stats)) {
      const LevelDbStatsTable t = ParseStats(stats);
      m["bytes_merge_read"] = t.read_mib * kMiB;
      m["bytes_written"] = t.write_mib * kMiB;
      m["merge_seconds"] = t.seconds;
      m["write_amplification"] = user == 0 ? 0.0 : t.write_mib * kMiB / static_cast<double>(user);
    }

    std::string sstables;
    if (db_->GetProperty("leveldb.sstables", &sstables)) {
      double total_bytes = 0;
      for (const auto& [level, bytes] : ParseSstableBytes(sstables)) {
        m["disk_bytes.L" + std::to_string(level)] = static_cast<double>(bytes);
        total_bytes += static_cast<double>(bytes);
      }
      m["disk_bytes"] = total_bytes;
    }

    std::string memory;
    if (db_->GetProperty("leveldb.approximate-memory-usage", &memory)) {
      m["memory_bytes"] = std::strtod(memory.c_str(), nullptr);
    }
    return m;
  }

  // Unsupported, and said so: LevelDB's properties name no pending or
  // running compaction and no memtable waiting for its flush.
  Status Settle(double /*timeout_s*/, SettleReport* report) override {
    *report = SettleReport();
    report->detail =
        "LevelDB exposes no pending-compaction property: it cannot tell its pending flushes "
        "and merges";
    return Status::OK();
  }

  Status Close() override {
    // LevelDB has no explicit close: deleting the DB waits for its
    // background compaction and releases the lock. Its log holds the
    // memtable, so nothing is lost.
    db_.reset();
    return Status::OK();
  }

 private:
  // Declared before db_ so they outlive it: the DB uses both until deleted.
  const std::unique_ptr<const leveldb::FilterPolicy> filter_;
  const std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<leveldb::DB> db_;
  const leveldb::WriteOptions write_;
  const leveldb::ReadOptions read_;
  std::atomic<uint64_t> user_bytes_{0};
};

}  // namespace

Status OpenLevelDbAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter) {
  LevelDbConfig config;
  Status s = ApplyOptions(LevelDbOptionTable(), options, &config);
  if (!s.ok()) return s;
  std::unique_ptr<const leveldb::FilterPolicy> filter;
  if (config.bloom_bits_per_key > 0) {
    filter.reset(leveldb::NewBloomFilterPolicy(config.bloom_bits_per_key));
    config.options.filter_policy = filter.get();
  }
  std::unique_ptr<leveldb::Cache> cache;
  if (config.cache_bytes > 0) {
    cache.reset(leveldb::NewLRUCache(config.cache_bytes));
    config.options.block_cache = cache.get();
  }
  leveldb::DB* db = nullptr;
  s = FromLevel(leveldb::DB::Open(config.options, dir, &db));
  if (!s.ok()) return s;
  *adapter = std::make_unique<LevelDbAdapter>(db, config, std::move(filter), std::move(cache));
  return Status::OK();
}

std::vector<OptionDescription> DescribeLevelDbOptions() {
  return Describe(LevelDbOptionTable(), LevelDbConfig());
}

Status CheckLevelDbOptions(const AdapterOptions& options) {
  LevelDbConfig config;
  return ApplyOptions(LevelDbOptionTable(), options, &config);
}

}  // namespace lsmbench
