// One narrow key-value interface in front of every engine the driver can
// measure: the bundled engine, RocksDB, LevelDB and a `null` engine that
// calibrates the harness itself.
#ifndef LSMBENCH_ADAPTERS_ADAPTER_H_
#define LSMBENCH_ADAPTERS_ADAPTER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/option_table.h"
#include "lsm/status.h"

namespace lsmbench {

using lsm::Status;

// Options by name, as name=value strings (the run.json "engine_options").
using AdapterOptions = std::map<std::string, std::string>;

// Metrics by name: disk components total and per level
// ("disk_components", "disk_components.L0", ...), stalls ("stall_count",
// "stall_micros"), "bytes_flushed", "bytes_merged", "merges_running",
// "write_amplification", ... whatever the engine can tell.
using Metrics = std::map<std::string, double>;

// A flush or merge the engine completed. Times are CLOCK_MONOTONIC
// nanoseconds (the driver's NowNs()).
struct EngineEvent {
  enum class Kind { kFlush, kMerge };
  Kind kind = Kind::kFlush;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t sealed_ns = 0;        // flushes: the memtable stopped taking writes (0: unknown)
  int output_level = 0;         // flushes: 0
  int deepest_input_level = 0;  // merges
  uint64_t inputs = 0;          // merges: components merged
  uint64_t input_bytes = 0;     // merges
  uint64_t output_bytes = 0;    // bytes written (0 for a merge that only moved data down)
  uint64_t entries = 0;         // entries flushed, or read by the merge
  bool moved = false;
};

// What KvAdapter::Settle found.
struct SettleReport {
  bool supported = false;  // the engine can tell its pending and running flushes and merges
  bool idle = false;       // none was pending or running at the last look
  double waited_s = 0;
  std::string detail;      // the last look, in words; or why the engine cannot tell
};

// Every method is safe to call from many threads at once.
class KvAdapter {
 public:
  virtual ~KvAdapter() = default;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // NotFound if absent.
  virtual Status Get(std::string_view key, std::string* value) = 0;
  // Reads up to count entries from the first key >= start; *returned says
  // how many were read.
  virtual Status Scan(std::string_view start, size_t count, size_t* returned) = 0;
  virtual Metrics GetMetrics() = 0;
  // Datasets: records with secondary fields, in engines that keep a
  // secondary index per field (OpenDatasetAdapter). Others refuse.
  virtual Status PutRecord(std::string_view key, const std::vector<uint64_t>& /*fields*/,
                           std::string_view /*value*/) {
    return Status::NotSupported("records with secondary fields", std::string(key));
  }
  // Reads the current records whose secondary field `field` lies in
  // [low, high); *returned says how many.
  virtual Status QuerySecondary(int /*field*/, uint64_t /*low*/, uint64_t /*high*/,
                                size_t* returned) {
    *returned = 0;
    return Status::NotSupported("secondary queries");
  }
  // The flushes and merges completed since the last call, in completion
  // order; none from engines that do not tell (the default).
  virtual std::vector<EngineEvent> TakeEvents() { return {}; }
  // Waits until no flush or merge is pending or running, for at most
  // timeout_s (0: one look), so that a phase measured next starts from a
  // quiet tree rather than from the transient its predecessor left. OK with
  // *report saying whether the engine got there; the engine's error when a
  // flush or merge failed. The default: an engine that cannot tell.
  virtual Status Settle(double /*timeout_s*/, SettleReport* report) {
    *report = SettleReport();
    report->detail = "this engine cannot tell its pending flushes and merges";
    return Status::OK();
  }
  // Flushes what the engine buffers and closes; no other call may follow.
  virtual Status Close() = 0;
};

// The engines compiled into this build (builtin, null), then the engine
// plugins loaded.
std::vector<std::string> AdapterNames();

// The plugin path, in order: each directory of $LSMBENCH_PLUGIN_PATH
// (colon-separated), then plugins/ beside the running program's bin/, where a
// build puts the project's own plugins (rocksdb, leveldb, ...).
std::vector<std::string> EnginePluginPath();

// Loads lsmbench-NAME.so from the first directory of the plugin path that
// has it, unless an engine of that name is compiled in or loaded already.
// NotFound naming the directories looked in when none has it; a load's
// error as LoadEnginePlugin gives it.
Status LoadEnginePluginNamed(const std::string& name);

// Loads the engine plugin at path (engines/plugin/include/lsmbench/engine_plugin.h)
// and makes it known by its own name to every function here; *name = that
// name. InvalidArgument naming the path and the problem (plugin_adapter.h),
// or when the plugin takes the name of an engine compiled in. Loading the
// same path again is a no-op.
Status LoadEnginePlugin(const std::string& path, std::string* name);

// Opens engine `engine` on directory dir. An unknown engine, an unknown
// option name or a bad option value is InvalidArgument naming it (and the
// allowed names/values); an engine open failure carries the engine's message.
Status OpenAdapter(const std::string& engine, const std::string& dir,
                   const AdapterOptions& options, std::unique_ptr<KvAdapter>* adapter);

// Opens engine `engine` as a dataset with `secondary_indexes` (>= 1)
// secondary indexes. InvalidArgument naming the engine when it keeps none.
Status OpenDatasetAdapter(const std::string& engine, const std::string& dir,
                          const AdapterOptions& options, int secondary_indexes,
                          std::unique_ptr<KvAdapter>* adapter);

// Whether engine `engine` keeps secondary indexes (OpenDatasetAdapter).
bool AdapterHasSecondaryIndexes(const std::string& engine);

// What `lsm-driver --describe-options ENGINE` prints about one option.
struct OptionDescription {
  std::string name;
  lsm::OptionKind kind = lsm::OptionKind::kChoice;
  double min = 0;  // kInt, kSize, kReal
  double max = 0;
  std::vector<std::string> choices;  // kChoice
  std::string unit;
  std::string doc;
  std::string default_text;  // in the grammar of option_values.h; "" when unknown
  // lsm::OptionScopeName of the builtin engine's options ("merge-policy": lsm-sim's
  // decisions depend on it); "" for the other engines.
  std::string scope;
};

// The options engine `engine` accepts. NotSupported for rocksdb: RocksDB has
// hundreds of options and its own parser knows them (CheckAdapterOptions).
Status DescribeAdapterOptions(const std::string& engine, std::vector<OptionDescription>* out);

// Parses options exactly as OpenAdapter would, without opening anything:
// OK, or InvalidArgument naming every bad option the engine reports.
Status CheckAdapterOptions(const std::string& engine, const AdapterOptions& options);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_ADAPTER_H_
