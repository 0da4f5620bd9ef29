#include "adapters/leveldb_adapter.h"

#include "adapters/adapter_test_util.h"
#include "gtest/gtest.h"

namespace lsmbench {
namespace {

Status OpenStatus(const TempDir& dir, const AdapterOptions& options) {
  std::unique_ptr<KvAdapter> db;
  return OpenAdapter("leveldb", dir.Sub("db"), options, &db);
}

TEST(LevelDbAdapterTest, OptionErrorsNameTheOption) {
  TempDir dir;
  EXPECT_EQ(
      "Invalid argument: engine option 'write_buffer': unknown (choose from: "
      "block_restart_interval, block_size, bloom_bits_per_key, cache_bytes, compression, "
      "create_if_missing, error_if_exists, max_file_size, max_open_files, paranoid_checks, "
      "reuse_logs, sync, verify_checksums, write_buffer_size)",
      OpenStatus(dir, {{"write_buffer", "1M"}}).ToString());
  EXPECT_EQ(
      "Invalid argument: engine option 'compression': bad value 'zlib' (choose from: none, "
      "snappy)",
      OpenStatus(dir, {{"compression", "zlib"}}).ToString());
  Status s = OpenStatus(dir, {{"write_buffer_size", "1K"}});  // LevelDB's floor is 64K
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(std::string::npos, s.ToString().find("'write_buffer_size': bad value '1K'"))
      << s.ToString();
  s = OpenStatus(dir, {{"max_open_files", "10"}});
  EXPECT_NE(std::string::npos, s.ToString().find("'max_open_files': bad value '10'"))
      << s.ToString();
}

TEST(LevelDbAdapterTest, ErrorIfExists) {
  TempDir dir;
  ASSERT_TRUE(OpenStatus(dir, {}).ok());
  Status s = OpenStatus(dir, {{"error_if_exists", "true"}});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("exists")) << s.ToString();
}

TEST(LevelDbAdapterTest, AllOptionsOpenAndWork) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter("leveldb", dir.Sub("db"),
                         {{"write_buffer_size", "64K"},
                          {"max_open_files", "100"},
                          {"block_size", "8K"},
                          {"block_restart_interval", "8"},
                          {"max_file_size", "1M"},
                          {"compression", "none"},
                          {"bloom_bits_per_key", "10"},
                          {"paranoid_checks", "true"},
                          {"reuse_logs", "false"},
                          {"cache_bytes", "1M"},
                          {"sync", "false"},
                          {"verify_checksums", "true"}},
                         &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string value(100, 'y');
  const int n = 40000;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(db->Put(TestKey(i * 7919 % n), value).ok());
  for (int i = 0; i < n; i += 101) {
    std::string v;
    ASSERT_TRUE(db->Get(TestKey(i), &v).ok());
    EXPECT_EQ(value, v);
  }
  std::string v;
  EXPECT_TRUE(db->Get("missing", &v).IsNotFound());

  const Metrics m = db->GetMetrics();
  for (const char* key : {"disk_components", "disk_components.L0", "disk_components.L6",
                          "bytes_merge_read", "bytes_written", "disk_bytes", "merge_seconds",
                          "memory_bytes", "user_bytes", "write_amplification"}) {
    EXPECT_TRUE(m.count(key)) << key;
  }
  EXPECT_FALSE(m.count("disk_components.L7"));
  EXPECT_GE(m.at("disk_components"), 1);
  // Flushed tables alone are most of 4.5 MiB; LevelDB reports whole MiB.
  EXPECT_GE(m.at("bytes_written"), 1 << 20);
  EXPECT_GT(m.at("memory_bytes"), 0);
  EXPECT_EQ(n * 111.0, m.at("user_bytes"));
  EXPECT_DOUBLE_EQ(m.at("bytes_written") / m.at("user_bytes"), m.at("write_amplification"));
  EXPECT_TRUE(db->Close().ok());
}

// LevelDB cannot tell its pending compactions: Settle says so at once.
TEST(LevelDbAdapterTest, SettleIsUnsupported) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("leveldb", dir.Sub("db"), {}, &db).ok());
  SettleReport r;
  ASSERT_TRUE(db->Settle(60, &r).ok());
  EXPECT_FALSE(r.supported);
  EXPECT_FALSE(r.idle);
  EXPECT_EQ(0, r.waited_s);
  EXPECT_NE(std::string::npos, r.detail.find("LevelDB exposes no pending-compaction property"))
      << r.detail;
  EXPECT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace lsmbench
