// lsm-bench's view of an engine: just what a fill-then-read benchmark needs.
// One implementation per engine, each in its own file so that lsm-bench
// builds whether or not an engine is available.
#ifndef ENGINES_BENCH_BENCH_ENGINE_H_
#define ENGINES_BENCH_BENCH_ENGINE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "lsm/status.h"

namespace lsmbench {

// Settings applied identically to every engine.
struct BenchConfig {
  size_t memtable_bytes = 4 << 20;
  int bloom_bits_per_key = 10;
  bool verify_checksums = true;
  std::string merge_policy = "leveling";  // the bundled engine only
  uint64_t partition_bytes = 0;           // the bundled engine only; 0: its default
  std::string lsm_wal = "off";            // the bundled engine only: off | async | sync
};

// Not thread-safe; lsm-bench drives it from one thread.
class BenchEngine {
 public:
  virtual ~BenchEngine() = default;
  virtual const char* name() const = 0;
  // One line on the engine's settings, printed before the run.
  virtual std::string Describe() const = 0;
  // dir must not exist yet.
  virtual lsm::Status Open(const std::string& dir) = 0;
  virtual lsm::Status Put(std::string_view key, std::string_view value) = 0;
  // NotFound if absent.
  virtual lsm::Status Get(std::string_view key, std::string* value) = 0;
  // Waits until no background work is left. Returns false if the engine has
  // no such call (then the caller reports no figure for it).
  virtual bool WaitForIdle(lsm::Status* s) = 0;
  // One line on the engine's internal state (components, amplification).
  virtual std::string StatsLine() = 0;
  virtual lsm::Status Close() = 0;
};

// Defined in lsm_engine.cc / leveldb_engine.cc; lsm-bench links those that
// are available (LSM_BENCH_HAVE_LSM / LSM_BENCH_HAVE_LEVELDB).
std::unique_ptr<BenchEngine> NewLsmBenchEngine(const BenchConfig& config);
std::unique_ptr<BenchEngine> NewLevelDbBenchEngine(const BenchConfig& config);

}  // namespace lsmbench

#endif  // ENGINES_BENCH_BENCH_ENGINE_H_
