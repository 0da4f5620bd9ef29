// Status: the outcome of an engine call. Errors travel as values across the
// public API; the engine never throws.
#ifndef LSM_INCLUDE_LSM_STATUS_H_
#define LSM_INCLUDE_LSM_STATUS_H_

#include <string>
#include <string_view>
#include <utility>

namespace lsm {

class Status {
 public:
  Status() noexcept = default;  // OK

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg, std::string_view detail = {}) {
    return Status(Code::kNotFound, msg, detail);
  }
  static Status Corruption(std::string_view msg, std::string_view detail = {}) {
    return Status(Code::kCorruption, msg, detail);
  }
  static Status InvalidArgument(std::string_view msg, std::string_view detail = {}) {
    return Status(Code::kInvalidArgument, msg, detail);
  }
  static Status IOError(std::string_view msg, std::string_view detail = {}) {
    return Status(Code::kIOError, msg, detail);
  }
  static Status NotSupported(std::string_view msg, std::string_view detail = {}) {
    return Status(Code::kNotSupported, msg, detail);
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }

  // "OK", or e.g. "Corruption: bad block checksum: /data/000012.sst".
  std::string ToString() const {
    if (ok()) return "OK";
    std::string result = CodeName();
    result += ": ";
    result += message_;
    return result;
  }

 private:
  enum class Code { kOk, kNotFound, kCorruption, kInvalidArgument, kIOError, kNotSupported };

  Status(Code code, std::string_view msg, std::string_view detail) : code_(code), message_(msg) {
    if (!detail.empty()) {
      message_ += ": ";
      message_ += detail;
    }
  }

  const char* CodeName() const {
    switch (code_) {
      case Code::kOk: return "OK";
      case Code::kNotFound: return "NotFound";
      case Code::kCorruption: return "Corruption";
      case Code::kInvalidArgument: return "Invalid argument";
      case Code::kIOError: return "IO error";
      case Code::kNotSupported: return "Not supported";
    }
    return "Unknown";
  }

  Code code_ = Code::kOk;
  std::string message_;  // empty when ok(): an OK status never allocates
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_STATUS_H_
