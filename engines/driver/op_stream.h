// The op stream: one line per operation a workload sends, as CSV, the
// common format of lsmbench's workload-shape analysis
// (pipelines/lsmbench/workload_shape/): the driver writes its generator's
// operations in it, and RocksDB traces and YCSB's CoreWorkload are converted
// to it, so that one reader compares them all.
//
//   # lsmbench op stream v1: <the source>
//   seq,time_us,op,key,value_size,scan_length
//
// op: insert, update, put, delete, read, scan or rmw; key: lowercase hex of
// the key's bytes; time_us: the intended arrival in microseconds from the
// start (empty in a closed loop); value_size and scan_length empty where an
// operation has none.
#ifndef LSMBENCH_DRIVER_OP_STREAM_H_
#define LSMBENCH_DRIVER_OP_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "driver/run_config.h"

namespace lsmbench {
namespace driver {

class OpStreamWriter {
 public:
  // Writes the header to `out` (not owned).
  OpStreamWriter(FILE* out, const std::string& source);
  // time_us, value_size, scan_length < 0: empty.
  void Write(uint64_t seq, double time_us, std::string_view op, std::string_view key,
             int64_t value_size, int64_t scan_length);
  bool ok() const { return !ferror(out_); }

 private:
  FILE* out_;
  std::string line_;
};

// The first `count` operations the phase of `config` would send, in
// sequence order, with their intended arrival times when the phase is an
// open loop (running); a load phase gives its inserts. No engine is opened.
Status WriteGeneratedOps(const RunConfig& config, uint64_t count, FILE* out);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_OP_STREAM_H_
