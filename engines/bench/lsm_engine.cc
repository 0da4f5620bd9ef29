// The bundled engine through its public API (lsm/db.h).
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "bench_engine.h"
#include "lsm/db.h"
#include "lsm/option_table.h"

namespace lsmbench {
namespace {

class LsmBenchEngine final : public BenchEngine {
 public:
  explicit LsmBenchEngine(const BenchConfig& config) {
    options_.create_if_missing = true;
    options_.error_if_exists = true;
    options_.memtable_bytes = config.memtable_bytes;
    options_.bloom_bits_per_key = config.bloom_bits_per_key;
    options_.verify_checksums = config.verify_checksums;
    // ParseFlags checked them against the same table: this cannot fail.
    const lsm::Status s = lsm::SetOptions(&options_, config.lsm_options);
    if (!s.ok()) {
      std::fprintf(stderr, "lsm-bench: %s\n", s.ToString().c_str());
      std::exit(2);
    }
  }

  const char* name() const override { return "lsm"; }

  std::string Describe() const override {
    std::ostringstream o;
    o << "memtable_bytes=" << options_.memtable_bytes
      << " memory_components=" << options_.memory_components
      << " wal=" << lsm::ToString(options_.wal)
      << " bloom_bits_per_key=" << options_.bloom_bits_per_key
      << " merge_policy=" << lsm::ToString(options_.merge_policy)
      << " partition_bytes=" << options_.partition_bytes << " size_ratio=" << options_.size_ratio
      << " (0 = policy default) block_bytes=" << options_.block_bytes
      << " verify_checksums=" << options_.verify_checksums;
    return o.str();
  }

  lsm::Status Open(const std::string& dir) override { return lsm::DB::Open(options_, dir, &db_); }

  lsm::Status Put(std::string_view key, std::string_view value) override {
    return db_->Put(key, value);
  }

  lsm::Status Get(std::string_view key, std::string* value) override {
    return db_->Get(key, value);
  }

  bool WaitForIdle(lsm::Status* s) override {
    *s = db_->WaitForIdle();
    return true;
  }

  std::string StatsLine() override {
    lsm::Stats st = db_->GetStats();
    std::ostringstream o;
    o << "flushes=" << st.flushes_completed << " merges=" << st.merges_completed
      << " disk_components=" << st.disk_components << " per_level=[";
    for (size_t i = 0; i < st.disk_components_per_level.size(); i++) {
      o << (i ? " " : "") << st.disk_components_per_level[i];
    }
    o << "] disk_bytes=" << st.disk_bytes << " write_amp=" << st.write_amplification
      << " merge_stalls=" << st.merge_stalls << " memory_stalls=" << st.memory_stalls;
    return o.str();
  }

  lsm::Status Close() override {
    db_.reset();
    return lsm::Status::OK();
  }

 private:
  lsm::Options options_;
  std::unique_ptr<lsm::DB> db_;
};

}  // namespace

std::unique_ptr<BenchEngine> NewLsmBenchEngine(const BenchConfig& config) {
  return std::make_unique<LsmBenchEngine>(config);
}

}  // namespace lsmbench
