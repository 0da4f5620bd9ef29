// lsm-bench's view of an engine: just what a fill-then-read benchmark needs.
// One implementation per engine, each in its own file so that lsm-bench
// builds whether or not an engine is available.
#ifndef ENGINES_BENCH_BENCH_ENGINE_H_
#define ENGINES_BENCH_BENCH_ENGINE_H_

#include <cstddef>
#include <memory>
#include <map>
#include <string>
#include <string_view>

#include "lsm/status.h"

namespace lsmbench {

// Settings applied identically to every engine.
// What both engines are given alike, and the bundled engine's own options.
struct BenchConfig {
  size_t memtable_bytes = 4 << 20;  // LevelDB's default write buffer, for both
  int bloom_bits_per_key = 10;
  bool verify_checksums = true;
  // The bundled engine's other options by name, as text (lsm/options.def; applied with
  // lsm::SetOptions, which ParseFlags has already run once). lsm-bench's own choices
  // beside the engine's defaults: leveling (LevelDB's shape) and no WAL (LevelDB's
  // fill runs without one either).
  std::map<std::string, std::string> lsm_options = {{"merge_policy", "leveling"},
                                                    {"wal", "off"}};
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
