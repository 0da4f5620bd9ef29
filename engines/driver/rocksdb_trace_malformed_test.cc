// RocksDB query traces that are not what they should be: truncated, wrong
// magic, unknown records, a missing end, another version; each read names
// the file, the offset and what is wrong, or reads on with a notice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/rocksdb_trace.h"
#include "driver/rocksdb_trace_format.h"
#include "driver/rocksdb_trace_test_util.h"

namespace lsmbench {
namespace driver {
namespace {

using rocksdb_trace_test::RocksDbTraceTest;
using namespace rocksdb_trace_test;  // NOLINT: the trace builders

// ---------------------------------------------------------------------------
// Malformed input: each names the file, the offset and what is wrong.

TEST_F(RocksDbTraceTest, MalformedInputs) {
  const std::string file = Path("t.trace");
  const std::string h = HeaderRecord();
  const std::string get = GetRecord(200, "key");
  struct Case {
    const char* name;
    std::string bytes;
    std::vector<std::string> message;
  };
  std::string huge = Record(200, fmt::kTraceGet, "");
  huge[9] = huge[10] = huge[11] = '\xff';  // a payload length of 0xfffffff0 and more
  huge[12] = '\x7f';
  std::string block_cache_header;
  fmt::PutLengthPrefixed(&block_cache_header, "feedcafedeadbeef");
  fmt::PutFixed32(&block_cache_header, 7);
  fmt::PutFixed32(&block_cache_header, 8);
  std::string unknown_field;
  fmt::PutFixed64(&unknown_field, (uint64_t{1} << fmt::kGetKey) | (uint64_t{1} << fmt::kIterKey));
  fmt::PutLengthPrefixed(&unknown_field, "k");
  fmt::PutLengthPrefixed(&unknown_field, "k");
  std::string short_key;
  fmt::PutFixed64(&short_key, uint64_t{1} << fmt::kGetKey);
  fmt::PutVarint32(&short_key, 10);
  short_key += "abc";
  const std::vector<Case> cases = {
      {"empty file", "", {file + ": offset 0: empty file: not a RocksDB trace"}},
      {"not a trace at all",
       "hello, this is a text file\n",
       {file + ": offset 0: not a RocksDB trace: the first record's type is 0x68"}},
      {"wrong magic",
       Record(1, fmt::kTraceBegin, "feedcafedeadbeeF\tTrace Version: 0.2\t"),
       {file + ": offset 13: not a RocksDB trace", "magic 'feedcafedeadbeef'"}},
      {"a block cache trace",
       Record(1, fmt::kTraceBegin, block_cache_header),
       {"offset 13: a RocksDB block cache or IO trace", "not a query trace"}},
      {"unsupported version",
       HeaderRecord("0.3"),
       {"offset 13: unsupported trace version '0.3'", "knows 0.1 and 0.2"}},
      {"no version field",
       Record(1, fmt::kTraceBegin, "feedcafedeadbeef\tRocksDB Version: 7.8\t"),
       {"no 'Trace Version: ' field"}},
      {"truncated header",
       h.substr(0, 7),
       {file + ": offset 0: truncated header: the file has 7 bytes, a record's header needs 13"}},
      {"truncated header payload",
       h.substr(0, 40),
       {"offset 0: truncated header: a payload of 90 bytes declared, the file ends after 27"}},
      {"truncated payload",
       h + get.substr(0, 20),
       {file + ": offset 103: get record: truncated record: a payload of 16 bytes declared, "
               "the file ends after 7 of them (at byte 123)"}},
      {"truncated record header",
       h + get + get.substr(0, 5),
       {file + ": offset 132: truncated record: 5 bytes left, a record's header needs 13"}},
      {"unknown type byte",
       h + Record(200, 0x2a, "xyz"),
       {file + ": offset 103: unknown record type 0x2a"}},
      {"type zero",
       h + Record(200, 0, ""),
       {"offset 103: unknown record type 0x0"}},
      {"huge payload length",
       h + huge,
       {file + ": offset 103: get record: a payload of 2147483647 bytes declared, beyond the "
               "reader's limit of 67108864"}},
      {"bad batch tag",
       h + WriteRecord(200, BatchRep(1, "c")),
       {file + ": offset 103: write record: malformed write batch: unknown tag 0x63 at byte 12 "
               "of the batch"}},
      {"timestamp tag, not a batch tag",
       h + WriteRecord(200, BatchRep(1, PutEntry("k", "v") + "\x14")),
       {"unknown tag 0x14 at byte 17 of the batch"}},
      {"batch count mismatch",
       h + WriteRecord(200, BatchRep(2, PutEntry("k", "v"))),
       {file + ": offset 103: write record: malformed write batch: its header counts 2 "
               "entries, it holds 1"}},
      {"batch entry past its end",
       h + WriteRecord(200, BatchRep(1, PutEntry("key", "value").substr(0, 7))),
       {"malformed write batch: the put entry at byte 12 runs past the batch's end"}},
      {"batch shorter than its header",
       h + WriteRecord(200, "12345"),
       {"malformed write batch: 5 bytes, shorter than its 12-byte header"}},
      {"payload map names another type's field",
       h + Record(200, fmt::kTraceGet, unknown_field),
       {"offset 103: get record: payload map 0x28 names field 5, which a get record does not "
        "have"}},
      {"payload map without the key",
       h + Record(200, fmt::kTraceGet, std::string(8, '\0')),
       {"payload map 0x0 lacks the key field"}},
      {"payload ends inside a field",
       h + Record(200, fmt::kTraceGet, short_key),
       {"get record: the payload (12 bytes) ends inside its key field"}},
      {"payload shorter than its map",
       h + Record(200, fmt::kTraceWrite, "abc"),
       {"write record: its payload of 3 bytes is shorter than the 8-byte payload map"}},
      {"a second header",
       h + get + h,
       {"offset 132: begin record: a second header record"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string error = ReadAll(c.bytes);
    ASSERT_FALSE(error.empty());
    for (const std::string& m : c.message) EXPECT_CONTAINS(error, m);
  }
}

TEST_F(RocksDbTraceTest, MultiGetMalformed) {
  const std::string h = HeaderRecord();
  auto multiget = [](uint32_t n, const std::string& cfs, const std::string& keys) {
    std::string p;
    fmt::PutFixed64(&p, (uint64_t{1} << fmt::kMultiGetSize) | (uint64_t{1} << fmt::kMultiGetCFIDs) |
                            (uint64_t{1} << fmt::kMultiGetKeys));
    fmt::PutFixed32(&p, n);
    fmt::PutLengthPrefixed(&p, cfs);
    fmt::PutLengthPrefixed(&p, keys);
    return Record(200, fmt::kTraceMultiGet, p);
  };
  std::string two_keys;
  fmt::PutLengthPrefixed(&two_keys, "a");
  fmt::PutLengthPrefixed(&two_keys, "b");
  const std::string cfs(8, '\0');
  EXPECT_CONTAINS(ReadAll(h + multiget(0, "", "")), "a MultiGet of 0 keys");
  EXPECT_CONTAINS(ReadAll(h + multiget(2, cfs.substr(0, 4), two_keys)),
                  "a MultiGet of 2 keys has 4 bytes of column families, not 8");
  EXPECT_CONTAINS(ReadAll(h + multiget(3, cfs + cfs.substr(0, 4), two_keys)),
                  "a MultiGet of 3 keys holds only 2");
  EXPECT_CONTAINS(ReadAll(h + multiget(1, cfs.substr(0, 4), two_keys)),
                  "2 bytes follow the MultiGet's 1 keys");
  std::vector<TraceOp> ops;
  EXPECT_EQ(ReadAll(h + multiget(2, cfs, two_keys) + EndRecord(), &ops), "");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].key, "b");
  EXPECT_EQ(ops[1].index_in_record, 1u);
}

// A trace cut right after a record (the tracing process killed) reads to
// that record, with a notice and no error; one cut inside a record does not.
TEST_F(RocksDbTraceTest, NoEndRecordReadsWithNotice) {
  const std::string body = HeaderRecord() + GetRecord(200, "a") + GetRecord(201, "b");
  std::vector<TraceOp> ops;
  RocksDbTraceReader reader;
  EXPECT_EQ(ReadAll(body, &ops, &reader), "");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].key, "b");
  EXPECT_FALSE(reader.end_record_seen());
  EXPECT_CONTAINS(reader.notice(), "no end record: the trace stops after its record at offset 130");
  EXPECT_EQ(reader.stats().last_timestamp_us, 201u);

  // The header alone: no ops, the same notice.
  RocksDbTraceReader header_only;
  ops.clear();
  EXPECT_EQ(ReadAll(HeaderRecord(), &ops, &header_only), "");
  EXPECT_TRUE(ops.empty());
  EXPECT_CONTAINS(header_only.notice(), "no end record");

  // With the end record: no notice; bytes after it are counted, not read.
  RocksDbTraceReader ended;
  EXPECT_EQ(ReadAll(body + EndRecord(), nullptr, &ended), "");
  EXPECT_TRUE(ended.end_record_seen());
  EXPECT_EQ(ended.notice(), "");
  RocksDbTraceReader trailing;
  EXPECT_EQ(ReadAll(body + EndRecord() + "garbage", nullptr, &trailing), "");
  EXPECT_EQ(trailing.trailing_bytes(), 7u);
  EXPECT_CONTAINS(trailing.notice(), "7 bytes after the end record, not read");
}

// Records of types that give no ops, and batch entries that give none, are
// skipped and counted.
TEST_F(RocksDbTraceTest, SkipsAndCounts) {
  std::string markers(1, static_cast<char>(fmt::kTypeNoop));
  markers += static_cast<char>(fmt::kTypeLogData);
  fmt::PutLengthPrefixed(&markers, "blob");
  markers += PutEntry("k", "v");
  markers += static_cast<char>(fmt::kTypeBlobIndex);
  fmt::PutLengthPrefixed(&markers, "bk");
  fmt::PutLengthPrefixed(&markers, "index");
  markers += static_cast<char>(fmt::kTypeBeginPrepareXID);
  markers += static_cast<char>(fmt::kTypeEndPrepareXID);
  fmt::PutLengthPrefixed(&markers, "xid");
  std::vector<TraceOp> ops;
  RocksDbTraceReader reader;
  // count 2: the put and the blob index; the markers are not counted.
  EXPECT_EQ(ReadAll(HeaderRecord() + Record(150, fmt::kBlockTraceDataBlock, "block access") +
                        WriteRecord(200, BatchRep(2, markers)) + Record(210, fmt::kIOTracer, "") +
                        GetRecord(220, "g") + EndRecord(),
                    &ops, &reader),
            "");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].kind, TraceOpKind::kPut);
  EXPECT_EQ(ops[0].ops_in_record, 1u);
  EXPECT_EQ(ops[1].kind, TraceOpKind::kGet);
  const RocksDbTraceStats& st = reader.stats();
  EXPECT_EQ(st.skipped_records, 2u);
  EXPECT_EQ(st.records_by_type[fmt::kBlockTraceDataBlock], 1u);
  EXPECT_EQ(st.records_by_type[fmt::kIOTracer], 1u);
  EXPECT_EQ(st.records, 6u);
  const std::map<std::string, uint64_t> want = {
      {"begin_prepare", 1}, {"blob_index", 1}, {"end_prepare", 1}, {"log_data", 1}, {"noop", 1}};
  EXPECT_EQ(st.skipped_batch_entries, want);
}

// Version 0.1 (RocksDB before 6.18, whose PR #7977 brought 0.2): no payload maps.
TEST_F(RocksDbTraceTest, ReadsVersion01) {
  std::string get, seek;
  fmt::PutFixed32(&get, 4);
  fmt::PutLengthPrefixed(&get, "old-get");
  fmt::PutFixed32(&seek, 0);
  fmt::PutLengthPrefixed(&seek, "old-seek");
  std::vector<TraceOp> ops;
  RocksDbTraceReaderOptions options;
  options.keep_values = true;
  RocksDbTraceReader reader(options);
  EXPECT_EQ(ReadAll(HeaderRecord("0.1") +
                        Record(200, fmt::kTraceWrite, BatchRep(1, PutEntry("old-put", "v1"))) +
                        Record(201, fmt::kTraceGet, get) +
                        Record(202, fmt::kTraceIteratorSeekForPrev, seek) + EndRecord(),
                    &ops, &reader),
            "");
  EXPECT_EQ(reader.trace_version(), "0.1");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].key, "old-put");
  EXPECT_EQ(ops[0].value, "v1");
  EXPECT_EQ(ops[1].kind, TraceOpKind::kGet);
  EXPECT_EQ(ops[1].key, "old-get");
  EXPECT_EQ(ops[1].column_family, 4u);
  EXPECT_EQ(ops[2].kind, TraceOpKind::kSeekForPrev);
  EXPECT_EQ(ops[2].key, "old-seek");
  // 0.1 had no MultiGet; a 0.2-style payload in a 0.1 trace is malformed.
  EXPECT_CONTAINS(ReadAll(HeaderRecord("0.1") + Record(200, fmt::kTraceMultiGet, "x")),
                  "a MultiGet record in a version 0.1 trace");
  EXPECT_CONTAINS(ReadAll(HeaderRecord("0.1") + GetRecord(200, "k")),
                  "get record: 9 bytes follow its key");
}

// ---------------------------------------------------------------------------
// Streaming: a trace far larger than the buffer is read in bounded memory.

}  // namespace
}  // namespace driver
}  // namespace lsmbench
