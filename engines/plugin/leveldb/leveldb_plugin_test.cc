// The LevelDB plugin (leveldb_plugin.cc) through the driver's loader: its
// options, metrics, and what it cannot tell.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "adapters/adapter.h"
#include "adapters/adapter_test_util.h"
#include "adapters/plugin_adapter.h"

namespace lsmbench {
namespace {

// The plugin, loaded before any test and known to OpenAdapter as "leveldb".
const EnginePlugin* Plugin() { return LoadedPlugin(LSM_LEVELDB_PLUGIN); }
const auto* const kLoadPlugin =
    ::testing::AddGlobalTestEnvironment(new LoadPluginFirst(LSM_LEVELDB_PLUGIN));

std::string Key(int i) { return TestKey(i); }

Status OpenStatus(const TempDir& dir, const AdapterOptions& options) {
  std::unique_ptr<KvAdapter> db;
  return OpenAdapter("leveldb", dir.Sub("db"), options, &db);
}

TEST(LevelDbPluginTest, OptionErrorsNameTheOption) {
  TempDir dir;
  EXPECT_EQ(
      "Invalid argument: engine plugin 'leveldb': engine option 'write_buffer': unknown (choose from: "
      "block_restart_interval, block_size, bloom_bits_per_key, cache_bytes, compression, "
      "create_if_missing, error_if_exists, max_file_size, max_open_files, paranoid_checks, "
      "reuse_logs, sync, verify_checksums, write_buffer_size)",
      OpenStatus(dir, {{"write_buffer", "1M"}}).ToString());
  EXPECT_EQ(
      "Invalid argument: engine plugin 'leveldb': engine option 'compression': bad value "
      "'zlib' (choose from: none, snappy)",
      OpenStatus(dir, {{"compression", "zlib"}}).ToString());
  Status s = OpenStatus(dir, {{"write_buffer_size", "1K"}});  // LevelDB's floor is 64K
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(std::string::npos, s.ToString().find("'write_buffer_size': bad value '1K'"))
      << s.ToString();
  s = OpenStatus(dir, {{"max_open_files", "10"}});
  EXPECT_NE(std::string::npos, s.ToString().find("'max_open_files': bad value '10'"))
      << s.ToString();
}

TEST(LevelDbPluginTest, ErrorIfExists) {
  TempDir dir;
  ASSERT_TRUE(OpenStatus(dir, {}).ok());
  Status s = OpenStatus(dir, {{"error_if_exists", "true"}});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("exists")) << s.ToString();
}

TEST(LevelDbPluginTest, AllOptionsOpenAndWork) {
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

// LevelDB exposes no pending-compaction property, so the plugin leaves
// background_work out and Settle says so at once.
TEST(LevelDbPluginTest, SettleIsUnsupported) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("leveldb", dir.Sub("db"), {}, &db).ok());
  SettleReport r;
  ASSERT_TRUE(db->Settle(60, &r).ok());
  EXPECT_FALSE(r.supported);
  EXPECT_FALSE(r.idle);
  EXPECT_EQ(0, r.waited_s);
  EXPECT_NE(std::string::npos, r.detail.find("cannot tell its pending flushes and merges"))
      << r.detail;
  EXPECT_TRUE(db->Close().ok());
}

TEST(LevelDbPluginTest, StoresAndSaysWhatItCannotTell) {
  const EnginePlugin* plugin = Plugin();
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->name(), "leveldb");
  EXPECT_EQ(plugin->CannotTell(), (std::vector<std::string>{"events", "settle"}));
  Status s = plugin->CheckOptions({{"write_bufer_size", "1M"}});
  EXPECT_NE(s.ToString().find("did you mean 'write_buffer_size'"), std::string::npos)
      << s.ToString();
  const std::string dir = ::testing::TempDir() + "/leveldb-plugin";
  std::string cmd = "rm -rf '" + dir + "'";
  ASSERT_EQ(system(cmd.c_str()), 0);
  std::unique_ptr<KvAdapter> db;
  s = plugin->Open(dir, {{"write_buffer_size", "64K"}, {"compression", "none"},
                         {"bloom_bits_per_key", "10"}, {"cache_bytes", "1M"}},
                   0, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string value(1000, 'v');
  for (int i = 0; i < 4000; i++) ASSERT_TRUE(db->Put(Key(i % 2000), value).ok());
  ASSERT_TRUE(db->Delete(Key(7)).ok());
  std::string got;
  ASSERT_TRUE(db->Get(Key(42), &got).ok());
  EXPECT_EQ(got, value);
  EXPECT_TRUE(db->Get(Key(7), &got).IsNotFound());
  size_t returned = 0;
  ASSERT_TRUE(db->Scan(Key(0), 5000, &returned).ok());
  EXPECT_EQ(returned, 1999u);
  SettleReport report;
  ASSERT_TRUE(db->Settle(1.0, &report).ok());
  EXPECT_FALSE(report.supported);
  const Metrics m = db->GetMetrics();
  EXPECT_GT(m.at("disk_components"), 0);
  EXPECT_GT(m.at("bytes_written"), 0);
  EXPECT_TRUE(db->Close().ok());
  // Reopened, the data is there (the log held the memtable).
  ASSERT_TRUE(plugin->Open(dir, {{"error_if_exists", "true"}}, 0, &db).IsInvalidArgument());
  ASSERT_TRUE(plugin->Open(dir, {}, 0, &db).ok());
  ASSERT_TRUE(db->Get(Key(1999), &got).ok());
  EXPECT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace lsmbench
