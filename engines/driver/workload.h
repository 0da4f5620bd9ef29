// The workload: what records exist, what operations the writers issue and
// how their keys and values are chosen. The same schema is read from YAML
// files (workloads/*.yaml) and from the run.json "workload" object.
#ifndef LSMBENCH_DRIVER_WORKLOAD_H_
#define LSMBENCH_DRIVER_WORKLOAD_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/arrival.h"
#include "driver/json_reader.h"
#include "driver/mixgraph.h"
#include "driver/trace_workload.h"

namespace lsmbench {
namespace driver {

// kReadModifyWrite: YCSB's read-modify-write, a get and then a put of the
// same key, timed as one request; it counts as a write (it writes a record).
enum OpType : int { kInsert = 0, kUpdate, kDelete, kRead, kScan, kReadModifyWrite, kNumOpTypes };
// "insert", "update", "delete", "read", "scan", "rmw".
const char* OpTypeName(int type);
inline bool IsWrite(int type) { return type <= kDelete || type == kReadModifyWrite; }

// keys.h says what each draws.
enum class Distribution { kUniform, kZipfian, kLatest, kScrambledZipfian };
inline constexpr uint32_t kMaxSecondaryFields = 16;
const std::vector<std::string>& DistributionNames();

// How record ids become keys (YCSB's insertorder): "hashed" puts ids in a
// keyed random key order, "ordered" keeps id order (key = prefix + the id,
// zero-padded), so a range of ids is a range of keys.
enum class InsertOrder { kHashed, kOrdered };
const std::vector<std::string>& InsertOrderNames();

struct WorkloadSpec {
  std::string name;
  uint64_t record_count = 0;        // records the load stage inserts (ids 0..N-1)
  uint32_t key_size = 16;           // bytes, including the prefix
  std::string key_prefix = "user";
  InsertOrder insert_order = InsertOrder::kHashed;
  uint32_t value_size_min = 1000;   // bytes; min == max: fixed size
  uint32_t value_size_max = 1000;
  std::array<double, kNumOpTypes> mix = {0, 1, 0, 0, 0};  // proportions, sum 1
  Distribution distribution = Distribution::kUniform;
  double zipf_theta = 0.99;
  // scrambled_zipfian: the key numbers its ranks fold onto (YCSB's
  // insertcount + expectednewkeys + 1); 0: record_count + 1, as YCSB's for
  // a mix without inserts.
  uint64_t scrambled_zipfian_items = 0;
  uint32_t scan_length_min = 100;   // min == max: fixed length
  uint32_t scan_length_max = 100;
  // db_bench's mixgraph: when present, it decides the mix (get, put, seek as
  // read, update, scan), the keys, the value sizes and the scan lengths.
  std::optional<MixgraphSpec> mixgraph;
  // A RocksDB query trace to replay (trace_workload.h): the path as given,
  // and once the run configuration has found and measured it, its measure.
  std::string rocksdb_trace;
  std::shared_ptr<const TraceMeasure> trace;
  // A trace workload without record_count: the load inserts the distinct
  // keys the trace uses (set once measured: record_count is their number).
  bool load_trace_keys = false;
  // Replay the trace again from its start when it ends, for as long as the
  // phase lasts (its operations and keys again; time goes on).
  bool rocksdb_trace_repeat = false;
  // Records with secondary fields (a dataset: the engine keeps one secondary
  // index per field; Luo & Carey Sec. 7). Each insert and update draws every
  // field's value from [0, secondary_values) (0: record_count) by
  // secondary_distribution (uniform or zipfian).
  uint32_t secondary_fields = 0;
  uint64_t secondary_values = 0;
  Distribution secondary_distribution = Distribution::kUniform;
  uint64_t seed = 1;
  Json arrival;  // optional default arrival section (null when absent)

  // The number of distinct keys the key format can express.
  uint64_t KeyCapacity() const;
  uint64_t ScrambledZipfianItems() const {
    return scrambled_zipfian_items > 0 ? scrambled_zipfian_items : record_count + 1;
  }
  // The mean value size an insert or update writes (bytes).
  double MeanValueSize() const;
  // The values a secondary field takes: [0, SecondaryValues()).
  uint64_t SecondaryValues() const {
    return secondary_values > 0 ? secondary_values : std::max<uint64_t>(record_count, 1);
  }
  Json ToJson() const;
};

const std::vector<std::string>& WorkloadFields();

// A default WorkloadSpec as JSON (lsm-driver --describe-workload): what a workload that leaves a
// field out gets. Committed as pipelines/lsmbench/engine_options/driver-workload.json, which
// the orchestrator's estimates read (a test holds it to this).
std::string WorkloadDefaultsJson();

// Parses a workload object; `path` prefixes field names in errors. A
// rocksdb_trace is only named here: ApplyTraceMeasure completes the workload
// once the file is found and measured.
Status ParseWorkload(const Json& json, const std::string& path, WorkloadSpec* out);

// A trace workload's record count, key size, value sizes and mix, from the
// trace's measure; the error names `path`.rocksdb_trace or .record_count.
Status ApplyTraceMeasure(std::shared_ptr<const TraceMeasure> measure, const std::string& path,
                         WorkloadSpec* w);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_WORKLOAD_H_
