#include "driver/op_stream.h"

#include <errno.h>

#include <cstring>

namespace lsmbench {
namespace driver {

const char* StreamOpName(StreamOp op) {
  switch (op) {
    case StreamOp::kInsert: return "insert";
    case StreamOp::kUpdate: return "update";
    case StreamOp::kPut: return "put";
    case StreamOp::kDelete: return "delete";
    case StreamOp::kRead: return "read";
    case StreamOp::kScan: return "scan";
    case StreamOp::kRmw: return "rmw";
  }
  return "unknown";
}

Status OpStreamWriter::Start(FILE* out, const std::string& out_name, const std::string& source) {
  out_ = out;
  out_name_ = out_name;
  std::string text = source;
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line_ = std::string(kOpStreamMagic) + text + "\n" + kOpStreamColumns + "\n";
  if (fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) {
    return Status::IOError(out_name_, strerror(errno));
  }
  return Status::OK();
}

Status OpStreamWriter::Append(int64_t time_us, StreamOp op, std::string_view key,
                              int64_t value_size, int64_t scan_length) {
  static const char kHex[] = "0123456789abcdef";
  line_ = std::to_string(seq_);
  line_ += ',';
  if (time_us != kNone) line_ += std::to_string(time_us);
  line_ += ',';
  line_ += StreamOpName(op);
  line_ += ',';
  for (unsigned char c : key) {
    line_ += kHex[c >> 4];
    line_ += kHex[c & 0xf];
  }
  line_ += ',';
  if (value_size != kNone) line_ += std::to_string(value_size);
  line_ += ',';
  if (scan_length != kNone) line_ += std::to_string(scan_length);
  line_ += '\n';
  if (fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) {
    return Status::IOError(out_name_, strerror(errno));
  }
  seq_++;
  return Status::OK();
}

Status OpStreamWriter::Finish() {
  if (fflush(out_) != 0 || ferror(out_) != 0) return Status::IOError(out_name_, strerror(errno));
  return Status::OK();
}

}  // namespace driver
}  // namespace lsmbench
