// A RocksDB query trace as the workload (run.json's workload.rocksdb_trace):
// the writers replay the trace's operations in order, into any engine.
//
// The trace is streamed, never read whole: a first pass when the
// configuration is read takes its measure (operations, span in time, value
// sizes, the distinct keys a load would insert), then the phase reads it
// again as it runs. Which ops replay, and as what:
//
//   put, merge          update (a put of a value of the traced size; a merge
//                       operand is written as a value, since engines merge
//                       differently)
//   delete, single_del  delete
//   get, multiget key   read
//   seek, seek_for_prev scan of the workload's scan_length entries (the trace
//                       records the seek, not the nexts; default 1)
//   delete_range        not replayed (no engine-neutral form): counted
#ifndef LSMBENCH_DRIVER_TRACE_WORKLOAD_H_
#define LSMBENCH_DRIVER_TRACE_WORKLOAD_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/rocksdb_trace.h"

namespace lsmbench {
namespace driver {

// The driver's operation type a trace op replays as; false for delete_range.
bool ReplayType(TraceOpKind kind, int* type);

// The measure of a trace, from one streamed pass.
struct TraceMeasure {
  std::string path;
  uint64_t ops = 0;                // replayed (delete_range left out)
  uint64_t skipped_ops = 0;        // delete_range
  uint64_t first_us = 0;           // the first replayed op's timestamp
  uint64_t span_us = 0;            // last op's timestamp - first's
  uint64_t ops_by_type[8] = {};    // by driver OpType
  uint64_t max_value_size = 0;
  double mean_value_size = 0;      // of puts
  uint32_t max_key_size = 0;
  bool end_record_seen = false;
  // The distinct keys, in the order they first appear (the load inserts
  // them), unless there are more than the limit it was measured with.
  std::shared_ptr<std::vector<std::string>> keys;
  bool keys_complete = false;

  // Requests per second at the trace's own pace (0 for a trace of one
  // instant).
  double NativeRate() const { return span_us > 0 ? ops / (span_us / 1e6) : 0; }
};

// Streams the whole trace once. Keeps at most max_keys distinct keys.
Status MeasureTrace(const std::string& path, uint64_t max_keys, TraceMeasure* out);

// The replay's op source: ops by sequence number (0, 1, ...) from a window
// that the file is streamed into. Each op is taken once; the window moves on
// past the ops taken, so a writer that holds an early sequence number keeps
// later ones from being read until it has taken its op (a window of `window`
// ops: far more than writers ever hold at once). Thread-safe.
class TraceSource {
 public:
  // With repeat, the trace starts again from its first op when it ends.
  static Status Open(const std::string& path, size_t window, bool repeat,
                     std::unique_ptr<TraceSource>* out);

  // Op number seq: false once the trace has no such op (end of the trace,
  // or a read error: status()), or when *stop became true while waiting.
  bool Take(uint64_t seq, TraceOp* out, const std::atomic<bool>* stop);
  Status status();

 private:
  TraceSource(const std::string& path, size_t window, bool repeat)
      : path_(path), repeat_(repeat), ring_(window), taken_(window, false) {}
  bool FillOne();  // REQUIRES: mu_ held, room in the window

  const std::string path_;
  const bool repeat_;
  std::mutex mu_;
  std::condition_variable moved_;
  std::unique_ptr<RocksDbTraceReader> reader_;
  std::vector<TraceOp> ring_;
  std::vector<bool> taken_;
  uint64_t base_ = 0;   // the oldest op not yet taken
  uint64_t end_ = 0;    // ops read into the window so far
  bool exhausted_ = false;
  Status status_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_TRACE_WORKLOAD_H_
