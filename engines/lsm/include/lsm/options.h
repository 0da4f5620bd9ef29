// Options: every knob of the engine, as a plain struct with in-class defaults.
// The fields are declared once, in options.def, with their range and
// documentation; option_table.h parses, checks and describes them by name.
#ifndef LSM_INCLUDE_LSM_OPTIONS_H_
#define LSM_INCLUDE_LSM_OPTIONS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lsm {

class Env;
class EventListener;

// Write-ahead logging of acknowledged writes (see the `wal` option).
enum class WalMode {
  kOff,    // no log: writes since the last flush are lost on a crash or a power cut
  kAsync,  // logged, handed to the OS per write, not fsynced: survives a process crash;
           // a power cut keeps what the last flush wrote
  kSync,   // logged and fsynced before acknowledging (concurrent writers share one
           // fsync): survives a power cut
};

// Closed value sets: an enum each, with its names in one array indexed by the
// enumerator (the option table accepts exactly these names; ToString and
// ParseName convert).
enum class PolicyKind {
  kLeveling, kTiering, kSizeTiered, kPartitioned,
  // Mao et al. 2019's bounded-depth policies.
  kBigtable, kExploring, kConstant, kMinLatency, kBinomial,
};
enum class SchedulerKind { kSingle, kFair, kGreedy, kGreedyK, kIdle, kLevelDb };
enum class PartitionPick { kRoundRobin, kChooseBest };
enum class IdleMode { kRate, kAfterBurst };
enum class ConstraintScope { kGlobal, kLocal };
enum class WriteControl { kStop, kSlowdown };
// How a dataset (dataset.h) keeps its secondary indexes up to date.
enum class SecondaryMaintenance { kEager, kLazy };

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
inline constexpr std::array<const char*, 2> kSecondaryMaintenanceNames = {"eager", "lazy"};
inline constexpr std::array<const char*, 0> kNoChoices = {};

// The names of an enum's values.
template <typename E>
struct EnumNames;
template <>
struct EnumNames<WalMode> {
  static constexpr const auto& kNames = kWalModeNames;
};
template <>
struct EnumNames<PolicyKind> {
  static constexpr const auto& kNames = kMergePolicyNames;
};
template <>
struct EnumNames<SchedulerKind> {
  static constexpr const auto& kNames = kMergeSchedulerNames;
};
template <>
struct EnumNames<PartitionPick> {
  static constexpr const auto& kNames = kPartitionPickNames;
};
template <>
struct EnumNames<IdleMode> {
  static constexpr const auto& kNames = kIdleModeNames;
};
template <>
struct EnumNames<ConstraintScope> {
  static constexpr const auto& kNames = kConstraintNames;
};
template <>
struct EnumNames<WriteControl> {
  static constexpr const auto& kNames = kWriteControlNames;
};
template <>
struct EnumNames<SecondaryMaintenance> {
  static constexpr const auto& kNames = kSecondaryMaintenanceNames;
};

// "leveling" for PolicyKind::kLeveling; "?" for a value outside the enum.
template <typename E>
const char* ToString(E value) {
  const auto& names = EnumNames<E>::kNames;
  const size_t i = static_cast<size_t>(value);
  return i < names.size() ? names[i] : "?";
}

// The value named `name` (exact match); false, *value unchanged, for none.
template <typename E>
bool ParseName(std::string_view name, E* value) {
  const auto& names = EnumNames<E>::kNames;
  for (size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) {
      *value = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// Limits on entry sizes; larger ones are rejected with InvalidArgument.
inline constexpr size_t kMaxKeyBytes = 64 * 1024;
inline constexpr size_t kMaxValueBytes = 16 * 1024 * 1024;

struct Options {
  // File and clock access. nullptr means Env::Default() (POSIX). Not owned.
  // Not a setting, so not in the option table.
  Env* env = nullptr;

  // Told of every completed flush and merge (listener.h); nullptr: nobody.
  // Not owned. Not a setting either.
  EventListener* listener = nullptr;

#define LSM_OPTION(Type, name, default_value, kind, min, max, choices, unit, scope, doc) \
  Type name = default_value;
#include "lsm/options.def"
#undef LSM_OPTION
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_OPTIONS_H_
