// lsm-driver --generate-ops: the operations a phase would send, as an op
// stream (op_stream.h), without an engine. The workload-shape analysis reads
// them (pipelines/lsmbench/workload_shape/), e.g. beside db_bench's trace.
#ifndef LSMBENCH_DRIVER_GENERATE_OPS_H_
#define LSMBENCH_DRIVER_GENERATE_OPS_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "driver/run_config.h"

namespace lsmbench {
namespace driver {

// The first `count` operations the phase of `config` would send, in
// sequence order, with their intended arrival times (microseconds, rounded)
// when the phase is an open loop (running); a load phase gives its inserts.
Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out);

// The same operations as a RocksDB query trace (rocksdb_trace.h), so that a
// campaign's workload replays elsewhere (db_bench --benchmarks=replay, or
// this driver's rocksdb_trace workload). Time stamps: the intended arrivals
// in an open loop, else one microsecond apart. Inserts and updates are puts
// of values of their size; scans are seeks (a trace holds no nexts).
Status WriteGeneratedTrace(const RunConfig& config, uint64_t count, const std::string& path);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_GENERATE_OPS_H_
