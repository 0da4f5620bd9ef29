// What the RocksDB trace tests share: db_bench and ldb found as the tests
// find them, records built byte by byte (rocksdb_trace_format.h), and a
// fixture with a scratch directory that reads a trace whole.
#ifndef LSMBENCH_DRIVER_ROCKSDB_TRACE_TEST_UTIL_H_
#define LSMBENCH_DRIVER_ROCKSDB_TRACE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/rocksdb_trace.h"
#include "driver/rocksdb_trace_format.h"

namespace lsmbench {
namespace driver {
namespace rocksdb_trace_test {

namespace fmt = rocksdb_trace;

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

inline std::string Tool(const char* env, const char* fallback) {
  const char* v = getenv(env);
  return v != nullptr && *v != '\0' ? v : fallback;
}

inline bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

struct Output {
  int code = -1;
  std::string text;  // stdout and stderr
};

inline Output Shell(const std::string& command) {
  Output o;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) o.text.append(buf, n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string Hex(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

// --- raw records, built by hand from the format (not by our writer) ---

inline std::string Record(uint64_t ts, uint8_t type, const std::string& payload) {
  std::string r;
  fmt::PutFixed64(&r, ts);
  r.push_back(static_cast<char>(type));
  fmt::PutFixed32(&r, static_cast<uint32_t>(payload.size()));
  return r + payload;
}

inline std::string HeaderRecord(const std::string& version = "0.2", uint64_t ts = 100) {
  return Record(ts, fmt::kTraceBegin,
                "feedcafedeadbeef\tTrace Version: " + version +
                    "\tRocksDB Version: 7.8\tFormat: Timestamp OpType Payload\n");
}

inline std::string EndRecord(uint64_t ts = 999) { return Record(ts, fmt::kTraceEnd, ""); }

inline std::string BatchRep(uint32_t count, const std::string& entries) {
  std::string rep;
  fmt::PutFixed64(&rep, 0);
  fmt::PutFixed32(&rep, count);
  return rep + entries;
}

inline std::string PutEntry(const std::string& key, const std::string& value) {
  std::string e(1, static_cast<char>(fmt::kTypeValue));
  fmt::PutLengthPrefixed(&e, key);
  fmt::PutLengthPrefixed(&e, value);
  return e;
}

inline std::string WriteRecord(uint64_t ts, const std::string& rep) {
  std::string payload;
  fmt::PutFixed64(&payload, uint64_t{1} << fmt::kWriteBatchData);
  fmt::PutLengthPrefixed(&payload, rep);
  return Record(ts, fmt::kTraceWrite, payload);
}

inline std::string GetRecord(uint64_t ts, const std::string& key, uint32_t cf = 0) {
  std::string payload;
  fmt::PutFixed64(&payload, (uint64_t{1} << fmt::kGetCFID) | (uint64_t{1} << fmt::kGetKey));
  fmt::PutFixed32(&payload, cf);
  fmt::PutLengthPrefixed(&payload, key);
  return Record(ts, fmt::kTraceGet, payload);
}

class RocksDbTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lsm-rocksdb-trace-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Reads every op of bytes (written to a file); the error text, or "".
  std::string ReadAll(const std::string& bytes, std::vector<TraceOp>* ops = nullptr,
                      RocksDbTraceReader* reader = nullptr) {
    WriteFile(Path("t.trace"), bytes);
    RocksDbTraceReaderOptions options;
    options.keep_values = true;
    RocksDbTraceReader local(options);
    RocksDbTraceReader& r = reader != nullptr ? *reader : local;
    Status s = r.Open(Path("t.trace"));
    TraceOp op;
    while (s.ok() && r.Next(&op)) {
      if (ops != nullptr) ops->push_back(op);
    }
    if (s.ok()) s = r.status();
    return s.ok() ? "" : s.ToString();
  }

  std::string dir_;
};

}  // namespace rocksdb_trace_test
}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ROCKSDB_TRACE_TEST_UTIL_H_
