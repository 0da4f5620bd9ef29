// Options: every knob of the engine, as a plain struct with in-class defaults.
// The fields are declared once, in options.def, with their range and
// documentation; option_table.h parses, checks and describes them by name.
#ifndef LSM_INCLUDE_LSM_OPTIONS_H_
#define LSM_INCLUDE_LSM_OPTIONS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace lsm {

class Env;

// Write-ahead logging of acknowledged writes (see the `wal` option).
enum class WalMode {
  kOff,    // no log: writes since the last flush are lost on a crash
  kAsync,  // logged, handed to the OS per write, not fsynced: survives a process crash
  kSync,   // logged and fsynced before acknowledging (concurrent writers share one fsync)
};

// The names of closed value sets, in one place: the option table accepts
// exactly these, the policy and scheduler factories construct them.
// kWalModeNames is indexed by WalMode.
inline constexpr std::array<const char*, 3> kWalModeNames = {"off", "async", "sync"};
inline constexpr std::array<const char*, 9> kMergePolicyNames = {
    "leveling", "tiering",   "size-tiered", "partitioned", "bigtable",
    "exploring", "constant", "minlatency",  "binomial"};
inline constexpr std::array<const char*, 6> kMergeSchedulerNames = {
    "single", "fair", "greedy", "greedy_k", "idle", "leveldb"};
inline constexpr std::array<const char*, 2> kPartitionPickNames = {"round-robin", "choose-best"};
inline constexpr std::array<const char*, 2> kIdleModeNames = {"rate", "after_burst"};
inline constexpr std::array<const char*, 2> kConstraintNames = {"global", "local"};
inline constexpr std::array<const char*, 2> kWriteControlNames = {"stop", "slowdown"};
inline constexpr std::array<const char*, 0> kNoChoices = {};

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// Limits on entry sizes; larger ones are rejected with InvalidArgument.
inline constexpr size_t kMaxKeyBytes = 64 * 1024;
inline constexpr size_t kMaxValueBytes = 16 * 1024 * 1024;

struct Options {
  // File and clock access. nullptr means Env::Default() (POSIX). Not owned.
  // Not a setting, so not in the option table.
  Env* env = nullptr;

#define LSM_OPTION(Type, name, default_value, kind, min, max, choices, unit, doc) \
  Type name = default_value;
#include "lsm/options.def"
#undef LSM_OPTION
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_OPTIONS_H_
