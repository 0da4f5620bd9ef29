// Test-only files over std::string, so the table tests do not depend on an
// Env implementation.
#ifndef LSM_SRC_TABLE_TEST_UTIL_H_
#define LSM_SRC_TABLE_TEST_UTIL_H_

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>

#include "lsm/env.h"
#include "lsm/status.h"
#include "table/internal_iterator.h"

namespace lsm::test {

// The expected contents of a table: key -> newest entry.
struct Val {
  ValueType type;
  std::string value;
};
using Model = std::map<std::string, Val>;

// A seed for randomized tests, always printed; $LSM_TEST_SEED replays one.
inline unsigned Seed() {
  const char* env = std::getenv("LSM_TEST_SEED");
  const unsigned seed = env != nullptr ? static_cast<unsigned>(std::strtoul(env, nullptr, 10))
                                       : std::random_device{}();
  std::printf("seed %u (replay with LSM_TEST_SEED=%u)\n", seed, seed);
  return seed;
}

class StringSink : public WritableFile {
 public:
  Status Append(std::string_view data) override {
    if (closed_) return Status::IOError("append to closed file");
    if (fail_appends_) return Status::IOError("injected append failure");
    contents_.append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }

  const std::string& contents() const { return contents_; }
  void set_fail_appends(bool fail) { fail_appends_ = fail; }

 private:
  std::string contents_;
  bool closed_ = false;
  bool fail_appends_ = false;
};

// Positional reads over a string. Like pread, a read past the end is short,
// not an error. With copy_to_scratch, results live in the caller's scratch
// (like a POSIX file); without, they point into the string (like mmap or an
// in-memory Env). Thread-safe.
class StringSource : public RandomAccessFile {
 public:
  explicit StringSource(std::string contents, bool copy_to_scratch = true)
      : contents_(std::move(contents)), copy_to_scratch_(copy_to_scratch) {}

  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    reads_.fetch_add(1, std::memory_order_relaxed);
    if (offset >= contents_.size()) {
      *result = {};
      return Status::OK();
    }
    n = std::min<size_t>(n, contents_.size() - offset);
    if (copy_to_scratch_) {
      std::memcpy(scratch, contents_.data() + offset, n);
      *result = std::string_view(scratch, n);
    } else {
      *result = std::string_view(contents_.data() + offset, n);
    }
    return Status::OK();
  }

  size_t reads() const { return reads_.load(std::memory_order_relaxed); }

 private:
  const std::string contents_;
  const bool copy_to_scratch_;
  mutable std::atomic<size_t> reads_{0};
};

}  // namespace lsm::test

#endif  // LSM_SRC_TABLE_TEST_UTIL_H_
