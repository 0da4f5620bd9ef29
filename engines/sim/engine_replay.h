// The engine side of the validation (issue 6, "the paper's Fig. 6-7 done
// right"): runs the bundled engine on an insert-only workload with a tiny
// memtable, one flush at a time (after each flush the writer waits until
// every merge has completed, the instant model of the simulator), records
// the size of every flushed component, then runs the simulator on exactly
// those sizes and compares write amplification and average SSTable count.
// With updates (Mao et al.'s Sec. V-E, Fig. 4) the engine's merges drop the
// overwritten versions while the simulator's model keeps every byte: the
// model is then an upper bound (the paper's Sec. III), not a prediction.
#ifndef LSM_SIM_ENGINE_REPLAY_H_
#define LSM_SIM_ENGINE_REPLAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lsm/options.h"
#include "lsm/status.h"

namespace lsm::sim {

// Memtables of the replay unless ReplayOptions::engine says otherwise: small, so that 2,000
// flushes take seconds (the engine's default is Options().memtable_bytes).
inline constexpr size_t kReplayMemtableBytes = 64 << 10;

struct ReplayOptions {
  ReplayOptions() { engine.memtable_bytes = kReplayMemtableBytes; }

  std::string policy;  // set on top of `engine`, as the run's merge_policy
  int k = 6;           // ... and sstable_bound
  // Every other engine option, the engine's and the simulator's alike (wal and
  // error_if_exists are the replay's own: off, true).
  Options engine;
  uint64_t flushes = 2000;
  uint64_t value_bytes = 1000;  // ~1 KB records, as in the paper
  std::string dir;  // a fresh directory for the engine (removed afterwards)
  // Mao et al.'s Fig. 4: this fraction of the writes update an existing key,
  // chosen by a zipfian distance back from the newest insert (YCSB's
  // "latest"), with parameter update_theta; the rest insert new keys.
  double update_fraction = 0;
  double update_theta = 0.99;
  uint64_t seed = 1;  // the updates' choices: a run is reproducible
  // Mao et al.'s Fig. 6: when > 0, both sides' figures after every
  // `series_every`-th flush and after the last (ReplayResult::series).
  uint64_t series_every = 0;
};

// Both sides after the same flush: write amplification so far and the
// SSTables present once that flush's merges are done.
struct SeriesPoint {
  uint64_t flushes = 0;
  double engine_write_amp = 0;
  double sim_write_amp = 0;
  uint64_t engine_sstables = 0;
  uint64_t sim_sstables = 0;
};

struct ReplayResult {
  std::vector<uint64_t> flush_sizes;  // bytes of each flushed component
  uint64_t updates = 0;  // writes that overwrote an existing key
  // Engine: (flush + merge bytes written) / flush bytes, Stats::average_sstables.
  double engine_write_amp = 0;
  double engine_avg_sstables = 0;
  uint64_t engine_max_sstables = 0;  // most components once a flush settled
  // lsm-sim on flush_sizes.
  double sim_write_amp = 0;
  double sim_avg_sstables = 0;
  std::vector<SeriesPoint> series;  // empty unless ReplayOptions::series_every

  double WriteAmpDiffPercent() const {
    return sim_write_amp > 0 ? 100 * (engine_write_amp - sim_write_amp) / sim_write_amp : 0;
  }
  double AvgDiff() const { return engine_avg_sstables - sim_avg_sstables; }
};

// Agreement goals of the issue.
inline constexpr double kMaxWriteAmpDiffPercent = 5;
inline constexpr double kMaxAvgSstablesDiff = 0.2;

Status RunReplay(const ReplayOptions& options, ReplayResult* result);

}  // namespace lsm::sim

#endif  // LSM_SIM_ENGINE_REPLAY_H_
