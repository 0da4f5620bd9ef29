// run.json: the description of one phase run of lsm-driver (schema in
// engines/driver/README.md). Parsing is strict: an unknown field anywhere is
// an error naming its JSON path, and every value is range-checked.
#ifndef LSMBENCH_DRIVER_RUN_CONFIG_H_
#define LSMBENCH_DRIVER_RUN_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "driver/arrival.h"
#include "driver/json_reader.h"
#include "driver/workload.h"

namespace lsmbench {
namespace driver {

enum class Phase { kLoad, kTesting, kRunning };
const std::vector<std::string>& PhaseNames();

// Closed-loop query threads running beside the writers.
struct QuerySpec {
  uint32_t threads = 0;
  double get = 1.0;   // share of point lookups
  double scan = 0.0;  // share of scans
  // Share of secondary queries (workloads with secondary fields): the records
  // whose secondary field `field` lies in a range of `selectivity`
  // consecutive values, placed uniformly (Luo & Carey Sec. 7.2).
  double secondary = 0.0;
  uint32_t field = 0;
  uint64_t selectivity = 1;
  uint32_t scan_length = 100;
  Distribution distribution = Distribution::kUniform;
  Json ToJson() const;
};

struct RunConfig {
  std::string engine;
  // An engine plugin's shared object (engines/plugin/include/lsmbench/
  // engine_plugin.h): loaded while parsing, and `engine` must be its name.
  std::string engine_plugin;
  std::map<std::string, std::string> engine_options;
  std::string dir;            // engine data directory
  std::string label;          // free text, echoed
  WorkloadSpec workload;
  std::string workload_file;  // resolved path, empty if inline only
  Phase phase = Phase::kTesting;
  double duration_s = 0;      // 0 (load only): until every record is loaded
  double warmup_s = 0;        // excluded from the measured window
  uint32_t threads = 1;       // writer threads
  uint32_t interval_ms = 1000;
  ArrivalSpec arrival;        // running phase
  QuerySpec queries;
  uint64_t seed = 1;
  uint64_t max_ops = 0;       // 0: no limit
  uint64_t insert_start = 0;  // first id for new inserts
  double progress_s = 5;      // stderr progress period, 0: off
  double spin_us = 50;        // open loop: busy-wait this close to an arrival
  double drain_s = 0;         // open loop: time allowed to finish queued requests
  double slow_ms = 100;       // writes at least this slow count as stalled
  // > 0: before the phase starts, wait at most this long until the engine
  // has no flush or merge pending or running (KvAdapter::Settle).
  double settle_s = 0;

  Json ToJson() const;
};

// Parses a run.json document. Relative workload_file and trace_file paths
// are looked up in the current directory first, then in config_dir.
// `engines` is the list of known engine names; an engine_plugin is loaded
// (LoadEnginePlugin) and adds its own.
Status ParseRunConfig(const Json& json, const std::string& config_dir,
                      const std::vector<std::string>& engines, RunConfig* out);

// Reads and parses a run.json file.
Status LoadRunConfig(const std::string& path, const std::vector<std::string>& engines,
                     RunConfig* out);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_RUN_CONFIG_H_
