// The op stream: a plain CSV of operations, the common format lsmbench's
// analysis reads whatever produced it (a RocksDB trace here, the YCSB
// reference producer elsewhere):
//
//   # lsmbench op stream v1: <free text naming the source>
//   seq,time_us,op,key,value_size,scan_length
//   0,0,put,00000000000000ff3030303030303030,100,
//   1,12,scan,0000000000000a013030303030303030,,
//
// seq counts from 0; time_us is the op's time relative to the source's start
// (empty in a closed loop, where an op has no intended time);
// op is one of insert, update, put, delete, read, scan, rmw; key is the key's
// bytes in lowercase hex; value_size and scan_length are empty where the op
// has none (or the source does not know it).
#ifndef LSMBENCH_DRIVER_OP_STREAM_H_
#define LSMBENCH_DRIVER_OP_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "lsm/status.h"

namespace lsmbench {
namespace driver {

using lsm::Status;

enum class StreamOp { kInsert, kUpdate, kPut, kDelete, kRead, kScan, kRmw };

const char* StreamOpName(StreamOp op);

constexpr char kOpStreamMagic[] = "# lsmbench op stream v1: ";
constexpr char kOpStreamColumns[] = "seq,time_us,op,key,value_size,scan_length";

// Writes an op stream to a stdio stream the caller owns.
class OpStreamWriter {
 public:
  static constexpr int64_t kNone = -1;  // an empty time_us / value_size / scan_length

  // Writes the two header lines; `source` is the free text (line breaks in it
  // become spaces).
  Status Start(FILE* out, const std::string& out_name, const std::string& source);
  Status Append(int64_t time_us, StreamOp op, std::string_view key, int64_t value_size,
                int64_t scan_length);
  // Flushes; reports any write error since Start.
  Status Finish();

  uint64_t count() const { return seq_; }

 private:
  FILE* out_ = nullptr;
  std::string out_name_;
  std::string line_;
  uint64_t seq_ = 0;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_OP_STREAM_H_
