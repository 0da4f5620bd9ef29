// lsm-driver --generate-ops: the operations a phase would send, as an op
// stream (op_stream.h), without an engine. The workload-shape analysis reads
// them (pipelines/lsmbench/workload_shape/), e.g. beside db_bench's trace.
#ifndef LSMBENCH_DRIVER_GENERATE_OPS_H_
#define LSMBENCH_DRIVER_GENERATE_OPS_H_

#include <cstdint>
#include <cstdio>

#include "driver/run_config.h"

namespace lsmbench {
namespace driver {

// The first `count` operations the phase of `config` would send, in
// sequence order, with their intended arrival times (microseconds, rounded)
// when the phase is an open loop (running); a load phase gives its inserts.
Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_GENERATE_OPS_H_
