// LevelDB (Debian libleveldb-dev) with settings matched to the bundled
// engine's where LevelDB has them.
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>

#include <sstream>

#include "bench_engine.h"

namespace lsmbench {
namespace {

// leveldb::config::kNumLevels is not in the public headers.
constexpr int kLevelDbLevels = 7;

lsm::Status FromLevelDb(const leveldb::Status& s) {
  if (s.ok()) return lsm::Status::OK();
  if (s.IsNotFound()) return lsm::Status::NotFound("leveldb", s.ToString());
  if (s.IsCorruption()) return lsm::Status::Corruption("leveldb", s.ToString());
  return lsm::Status::IOError("leveldb", s.ToString());
}

class LevelDbBenchEngine final : public BenchEngine {
 public:
  explicit LevelDbBenchEngine(const BenchConfig& config)
      : filter_(config.bloom_bits_per_key > 0
                    ? leveldb::NewBloomFilterPolicy(config.bloom_bits_per_key)
                    : nullptr) {
    options_.create_if_missing = true;
    options_.error_if_exists = true;
    options_.write_buffer_size = config.memtable_bytes;
    options_.filter_policy = filter_.get();
    options_.compression = leveldb::kNoCompression;  // the bundled engine has none
    bloom_bits_per_key_ = config.bloom_bits_per_key;
    // LevelDB cannot turn its log off; an unsynced log write is the closest
    // (the write goes to the OS, never to the disk, per Put).
    write_options_.sync = false;
    read_options_.verify_checksums = config.verify_checksums;
  }

  ~LevelDbBenchEngine() override { Close(); }

  const char* name() const override { return "leveldb"; }

  std::string Describe() const override {
    std::ostringstream o;
    o << "write_buffer_size=" << options_.write_buffer_size
      << " wal=on,sync=false (LevelDB has no WAL-off switch)"
      << " bloom_bits_per_key=" << bloom_bits_per_key_ << " compression=none"
      << " block_size=" << options_.block_size << " block_cache=8MiB (LevelDB default)"
      << " max_file_size=" << options_.max_file_size
      << " verify_checksums=" << read_options_.verify_checksums;
    return o.str();
  }

  lsm::Status Open(const std::string& dir) override {
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options_, dir, &db);
    db_.reset(db);
    return FromLevelDb(s);
  }

  lsm::Status Put(std::string_view key, std::string_view value) override {
    return FromLevelDb(db_->Put(write_options_, leveldb::Slice(key.data(), key.size()),
                                leveldb::Slice(value.data(), value.size())));
  }

  lsm::Status Get(std::string_view key, std::string* value) override {
    return FromLevelDb(db_->Get(read_options_, leveldb::Slice(key.data(), key.size()), value));
  }

  bool WaitForIdle(lsm::Status*) override { return false; }

  std::string StatsLine() override {
    std::ostringstream o;
    o << "files_per_level=[";
    for (int level = 0; level < kLevelDbLevels; level++) {
      std::string v;
      db_->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v);
      o << (level ? " " : "") << v;
    }
    std::string usage;
    db_->GetProperty("leveldb.approximate-memory-usage", &usage);
    o << "] approximate_memory_usage=" << usage;
    return o.str();
  }

  lsm::Status Close() override {
    db_.reset();  // before the filter policy it uses
    return lsm::Status::OK();
  }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  int bloom_bits_per_key_ = 0;
  leveldb::Options options_;
  leveldb::WriteOptions write_options_;
  leveldb::ReadOptions read_options_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace

std::unique_ptr<BenchEngine> NewLevelDbBenchEngine(const BenchConfig& config) {
  return std::make_unique<LevelDbBenchEngine>(config);
}

}  // namespace lsmbench
