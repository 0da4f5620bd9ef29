// Options: every knob of the engine, as a plain struct with in-class defaults.
// The driver's `builtin` adapter sets each field by its name.
#ifndef LSM_INCLUDE_LSM_OPTIONS_H_
#define LSM_INCLUDE_LSM_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace lsm {

class Env;

// Write-ahead logging of acknowledged writes.
enum class WalMode {
  kOff,    // no log: writes since the last flush are lost on a crash
  kAsync,  // logged, handed to the OS per write, not fsynced: survives a process crash
  kSync,   // logged and fsynced before acknowledging (concurrent writers share one fsync)
};

// Limits on entry sizes; larger ones are rejected with InvalidArgument.
inline constexpr size_t kMaxKeyBytes = 64 * 1024;
inline constexpr size_t kMaxValueBytes = 16 * 1024 * 1024;

struct Options {
  // File and clock access. nullptr means Env::Default() (POSIX). Not owned.
  Env* env = nullptr;

  // Create the data directory if it does not exist.
  bool create_if_missing = true;

  // Fail Open if the directory already holds a database.
  bool error_if_exists = false;

  // Byte budget of one memory component (memtable). When the active one is
  // full it becomes immutable and is flushed to a new disk component.
  size_t memtable_bytes = 32 << 20;

  // Memory components in total: one active plus (n-1) that may wait for or
  // be in flush. Writers stall when all are full. At least 2 (1 would leave
  // no memtable to switch to): writes go on while a flush runs (the paper's
  // setting).
  int memory_components = 2;

  // Write-ahead log mode.
  WalMode wal = WalMode::kAsync;

  // Target uncompressed size of a data block in a disk component.
  size_t block_bytes = 4096;

  // Bloom filter bits per key in each disk component (10 gives about 1 %
  // false positives). 0 disables the filter.
  int bloom_bits_per_key = 10;

  // Merge policy by name: "leveling", "tiering", "size-tiered" or
  // "partitioned", or one of the bounded-depth policies of Mao et al. 2019:
  // "bigtable", "exploring", "constant", "minlatency", "binomial".
  std::string merge_policy = "tiering";

  // Size ratio T of the policy; 0 means the policy's default (leveling 10,
  // tiering 3, size-tiered 1.2).
  double size_ratio = 0;

  // leveling: size levels from the largest one down (largest / T^k), so the
  // last level stays nearly full (the paper's Sec. 5.2.3 note).
  bool dynamic_level_sizes = false;

  // size-tiered: fewest and most components one merge takes.
  int min_merge_components = 2;
  int max_merge_components = 10;

  // size-tiered: always merge exactly min_merge_components (the paper's way
  // to measure a sustainable lower bound in Sec. 5.3).
  bool merge_exact_min = false;

  // partitioned (LevelDB-style leveling over range-partitioned files; Luo &
  // Carey Sec. 6). Level 0 holds flushed components; each level i >= 1 is one
  // sorted run split into files of about partition_bytes and holds up to
  // level1_bytes * T^(i-1) (T = size_ratio, default 10). A merge takes the
  // level-0 files once there are l0_trigger of them (all of them, or exactly
  // l0_trigger with l0_merge_exact, the paper's Sec. 6.2 fix), or one file
  // of a full level picked by partition_pick ("round-robin", LevelDB's
  // compact pointer, or "choose-best": fewest overlapping bytes in the next
  // level), plus the overlapping files of the next level. The default
  // constraint stops writes above l0_stop level-0 files (each level >= 1
  // counts as one component). level1_bytes 0: l0_trigger * memtable_bytes.
  uint64_t partition_bytes = 8 << 20;
  uint64_t level1_bytes = 0;
  int l0_trigger = 4;
  int l0_stop = 12;
  std::string partition_pick = "round-robin";
  bool l0_merge_exact = false;

  // Bounded-depth policies (bigtable, exploring, constant, minlatency,
  // binomial): the SSTable bound k, in [1, 1000]. Once a flush's merge
  // completes at most k disk components exist; while it runs, k + 1 (the
  // default constraint: writers stall beyond it).
  int sstable_bound = 6;

  // exploring (HBase's default policy as Mao et al. describe it): a run of
  // exploring_min..exploring_max (C..D) components qualifies when its largest
  // is at most exploring_ratio (lambda, in (0, 1000]) times the sum of the
  // others. 2 <= C <= D <= 1000.
  double exploring_ratio = 1.2;
  int exploring_min = 2;
  int exploring_max = 10;

  // Merge scheduler by name: when each created merge runs and how merges
  // share the I/O budget. "single": one at a time in creation order; "fair":
  // all at once, the budget split evenly; "greedy": only the merge with the
  // fewest remaining input bytes runs, the others pause at a block boundary
  // (Luo & Carey's Fig. 7); "greedy_k": the greedy_k smallest run; "idle"
  // (Pramanik & Venkatesh, Sec. 6.3.2): like "single", but merges wait while
  // the client writes (see idle_mode) unless the component count is within
  // one of the constraint; flushes always run. Only "idle" costs a timer
  // thread; the write path is unchanged.
  std::string merge_scheduler = "single";

  // greedy_k: how many of the smallest merges run at once.
  int greedy_k = 2;

  // idle: the window (ms, in [10, 3600000]) over which the client write rate
  // is measured; the engine re-decides every fifth of it (at least 10 ms).
  int idle_probe_ms = 500;

  // idle, mode "rate": merges wait while the client writes more user bytes
  // per second than this over the last idle_probe_ms (the paper's 0.5 MB/s).
  size_t idle_threshold_bytes_per_sec = 512 << 10;

  // idle: "rate" (defer while the write rate is above the threshold) or
  // "after_burst" (defer until idle_delay_ms have passed since the last
  // write, measured to the timer's precision; the paper's Fig. 24).
  std::string idle_mode = "rate";

  // idle, mode "after_burst": quiet time (ms, in [0, 3600000]) after the last
  // write before merges start.
  int idle_delay_ms = 1000;

  // Global component constraint: writers stall while more disk components
  // than this exist. 0 means the policy's default: 2*L for leveling, 2*T*L
  // for tiering (L = current number of levels), 50 for size-tiered.
  int max_components = 0;

  // Component constraint: "global" (at most max_components disk components
  // in total; the paper's recommendation) or "local" (at most
  // max_components_per_level at any one level, as bLSM does).
  std::string constraint = "global";

  // The local constraint; 0 means the policy's default: 2 for leveling, 2*T
  // for tiering, 50 for size-tiered (which has no levels).
  int max_components_per_level = 0;

  // What writes do as the constraint nears: "stop" processes writes as fast
  // as possible and blocks them only while the constraint is exceeded (the
  // paper's Theorem 1); "slowdown" (LevelDB's way) also delays each write by
  // 1 ms once slowdown_components is passed.
  std::string write_control = "stop";

  // slowdown: the component count (total for the global constraint, per
  // level for the local one) above which writes are delayed; 0 means two
  // thirds of the constraint (LevelDB's 8 of 12).
  int slowdown_components = 0;

  // Verify the crc32c of every block read (always on for merges).
  bool verify_checksums = true;

  // I/O bandwidth budget of flushes and merges in bytes/s (0 = unlimited): a
  // token bucket charged by every byte they write, flushes served before
  // merges (the paper's 100 MB/s rate limiter). The WAL is not charged.
  size_t io_budget_bytes_per_sec = 0;

  // Charge the bytes flushes and merges read to the budget too.
  bool io_budget_charge_reads = false;

  // Flushes and merges fsync their output every this many bytes (0 = only at
  // the end). Bounds the OS write-back queue (the paper's 16 MB disk force)
  // and keeps write-back in the engine's own threads, where a cgroup v1
  // blkio throttle can see it.
  size_t force_bytes = 16 << 20;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_OPTIONS_H_
