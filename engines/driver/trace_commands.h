// lsm-driver's RocksDB-trace commands (engines/driver/README.md, "RocksDB
// traces"):
//   lsm-driver --trace-ops TRACE [--out FILE]
//       the trace's ops as an op stream (op_stream.h), stdout by default
//   lsm-driver --trace-summary TRACE [--distinct-keys-limit N]
//       what the trace holds, as JSON
// Exit codes as main.cc's: 0 done; 1 the output could not be written; 2 bad
// input (usage, a file that is not a readable trace, an output file that
// cannot be created).
#ifndef LSMBENCH_DRIVER_TRACE_COMMANDS_H_
#define LSMBENCH_DRIVER_TRACE_COMMANDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "driver/json_reader.h"
#include "driver/op_stream.h"
#include "driver/rocksdb_trace.h"

namespace lsmbench {
namespace driver {

// The op stream's op for a trace op: puts and merges `put` (a trace does not
// tell new keys from old; a merge writes an operand without reading), deletes
// and single deletes `delete`, gets and MultiGet keys `read`, seeks `scan`
// (the trace records the Seek, not the Nexts: no scan length). False for a
// delete_range, which has no op-stream form.
bool StreamOpOf(const TraceOp& op, StreamOp* out);

// Counts distinct keys by their 64-bit hashes in a flat table kept at most
// half full: at most the power of two >= 2 * limit slots of 8 bytes (64 MiB
// at the default limit). Exact while below the limit, but for hash
// collisions (about n^2 / 2^65: under 1e-6 at the default limit); a lower
// bound once the limit is reached, after which nothing more is stored.
class DistinctKeyCounter {
 public:
  static constexpr uint64_t kDefaultLimit = uint64_t{1} << 22;

  explicit DistinctKeyCounter(uint64_t limit = kDefaultLimit) : limit_(limit) {}
  void Add(std::string_view key);
  uint64_t count() const { return count_; }
  bool exact() const { return !saturated_; }

 private:
  void Grow();

  uint64_t limit_;
  uint64_t count_ = 0;
  bool saturated_ = false;
  bool has_zero_ = false;  // hash 0 marks an empty slot; counted apart
  std::vector<uint64_t> slots_;
};

// Reads the whole trace: the --trace-summary JSON, or the reader's error.
Status SummarizeTrace(const std::string& path, uint64_t distinct_keys_limit, Json* summary);

struct TraceConversion {
  uint64_t ops_written = 0;
  uint64_t ops_left_out = 0;  // delete_range ops
  std::string notice;         // the reader's
  bool output_failed = false;  // the error is the output's, not the trace's
};

// Writes the trace's ops to out as an op stream. An error is the reader's
// (bad input) or, with result->output_failed, the output's.
Status ConvertTraceToOpStream(const std::string& path, FILE* out, const std::string& out_name,
                              TraceConversion* result);

// argv[1] is --trace-ops or --trace-summary; returns the exit code.
bool IsTraceCommand(const std::string& arg);
int RunTraceCommand(int argc, char** argv);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_TRACE_COMMANDS_H_
