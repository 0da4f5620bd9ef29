// The RocksDB plugin (rocksdb_plugin.cc) through the driver's loader: its
// options, its events and metrics, settle, and RocksDB's perf context.
#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "adapters/adapter.h"
#include "adapters/adapter_test_util.h"
#include "adapters/plugin_adapter.h"

namespace lsmbench {
namespace {

// The plugin, loaded before any test and known to OpenAdapter as "rocksdb".
const EnginePlugin* Plugin() { return LoadedPlugin(LSM_ROCKSDB_PLUGIN); }
const auto* const kLoadPlugin =
    ::testing::AddGlobalTestEnvironment(new LoadPluginFirst(LSM_ROCKSDB_PLUGIN));

std::string Key(int i) { return TestKey(i); }

// 64 KiB memtables and a small L1: a few MiB of writes flush and compact many times.
AdapterOptions SmallTree() {
  return {{"write_buffer_size", "64K"},
          {"level0_file_num_compaction_trigger", "2"},
          {"target_file_size_base", "256K"},
          {"max_bytes_for_level_base", "512K"}};
}

Status OpenStatus(const TempDir& dir, const AdapterOptions& options) {
  std::unique_ptr<KvAdapter> db;
  return OpenAdapter("rocksdb", dir.Sub("db"), options, &db);
}

void ExpectNamed(const Status& s, const std::string& name) {
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("engine option '" + name + "'")) << s.ToString();
}

TEST(RocksDbPluginTest, OptionErrorsNameTheOption) {
  TempDir dir;
  Status s = OpenStatus(dir, {{"write_buffr_size", "64K"}});
  ExpectNamed(s, "write_buffr_size");
  // RocksDB's own message is passed through.
  EXPECT_NE(std::string::npos, s.ToString().find("Could not find option")) << s.ToString();
  ExpectNamed(OpenStatus(dir, {{"write_buffer_size", "abc"}}), "write_buffer_size");
  ExpectNamed(OpenStatus(dir, {{"compression", "none"}}), "compression");
  ExpectNamed(OpenStatus(dir, {{"sync", "maybe"}}), "sync");
  ExpectNamed(OpenStatus(dir, {{"disable_wal", "2"}}), "disable_wal");
  ExpectNamed(OpenStatus(dir, {{"perf_level", "count"}}), "perf_level");
  // A ';' would smuggle a second option past the per-option check.
  ExpectNamed(OpenStatus(dir, {{"write_buffer_size", "64K;max_write_buffer_number=4"}}),
              "write_buffer_size");
}

TEST(RocksDbPluginTest, AcceptsStringApiAndWriteOptions) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter("rocksdb", dir.Sub("db"),
                         {{"write_buffer_size", "1M"},
                          {"compression", "kNoCompression"},
                          {"max_background_jobs", "2"},
                          {"block_based_table_factory",
                           "{block_size=8K;cache_index_and_filter_blocks=true}"},
                          {"disable_wal", "true"},
                          {"sync", "false"}},
                         &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(db->Put("k", "v").ok());
  // With the WAL off, Close must flush for the data to survive.
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(OpenAdapter("rocksdb", dir.Sub("db"), {}, &db).ok());
  std::string value;
  ASSERT_TRUE(db->Get("k", &value).ok());
  EXPECT_EQ("v", value);
}

// Puts kCount keys on this thread; returns the key comparisons RocksDB's
// perf context counted meanwhile.
uint64_t ComparisonsCounted(KvAdapter* db) {
  constexpr int kCount = 200;
  rocksdb::get_perf_context()->Reset();
  for (int i = 0; i < kCount; ++i) EXPECT_TRUE(db->Put(TestKey(i * 7919 % kCount), "v").ok());
  return rocksdb::get_perf_context()->user_key_comparison_count;
}

TEST(RocksDbPluginTest, PerfContextOffByDefaultAndSettable) {
  TempDir dir;
  std::unique_ptr<KvAdapter> quiet, counting;
  ASSERT_TRUE(OpenAdapter("rocksdb", dir.Sub("quiet"), {}, &quiet).ok());
  ASSERT_TRUE(
      OpenAdapter("rocksdb", dir.Sub("counting"), {{"perf_level", "kEnableCount"}}, &counting)
          .ok());
  // RocksDB's own default (kEnableCount) would count here.
  EXPECT_EQ(0u, ComparisonsCounted(quiet.get()));
  // The level follows the adapter called, on the same thread, both ways.
  EXPECT_GT(ComparisonsCounted(counting.get()), 200u);
  EXPECT_EQ(0u, ComparisonsCounted(quiet.get()));
  // And on another thread than the one that opened the adapter.
  uint64_t counted_elsewhere = 0;
  std::thread t([&] { counted_elsewhere = ComparisonsCounted(counting.get()); });
  t.join();
  EXPECT_GT(counted_elsewhere, 200u);
}

TEST(RocksDbPluginTest, SyncWritesWork) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("rocksdb", dir.Sub("db"), {{"sync", "1"}}, &db).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(db->Put(TestKey(i), "v").ok());
  size_t n = 0;
  ASSERT_TRUE(db->Scan("", 100, &n).ok());
  EXPECT_EQ(20u, n);
}

TEST(RocksDbPluginTest, MetricsAfterFlushesAndCompactions) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  AdapterOptions options = SmallTree();
  options["compression"] = "kNoCompression";  // byte counts as written
  ASSERT_TRUE(OpenAdapter("rocksdb", dir.Sub("db"), options, &db).ok());
  const int n = 40000;
  PutBurst(db.get(), n);

  // Compactions run in the background; wait (bounded) until one completed.
  Metrics m = db->GetMetrics();
  for (int i = 0; i < 300 && m.at("merges") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    m = db->GetMetrics();
  }
  for (const char* key :
       {"disk_components", "disk_components.L0", "disk_components.L6", "disk_bytes.L0",
        "stall_count", "stall_micros", "write_stopped",
        "delayed_write_rate", "merges_running", "flushes_running", "merges_pending",
        "pending_merge_bytes", "memory_components_immutable", "bytes_flushed", "bytes_merged",
        "bytes_merge_read", "flushes", "merges", "disk_bytes", "user_bytes",
        "write_amplification"}) {
    EXPECT_TRUE(m.count(key)) << key;
  }
  EXPECT_FALSE(m.count("disk_components.L7"));  // num_levels = 7
  EXPECT_GE(m["disk_components"], 1);
  EXPECT_GE(m["flushes"], 10);  // 4.5 MiB through 64 KiB buffers
  EXPECT_GT(m["bytes_flushed"], 1e6);
  EXPECT_GE(m["merges"], 1);
  EXPECT_GT(m["bytes_merged"], 0);
  EXPECT_GT(m["bytes_merge_read"], 0);
  EXPECT_GT(m["disk_bytes"], 0);
  EXPECT_EQ(n * 111.0, m["user_bytes"]);
  EXPECT_DOUBLE_EQ((m["bytes_flushed"] + m["bytes_merged"]) / m["user_bytes"],
                   m["write_amplification"]);
  EXPECT_GE(m["stall_micros"], 0);
  EXPECT_TRUE(db->Close().ok());
}

// A burst of writes through small memtables leaves flushes and compactions
// behind; Settle waits them out and the properties agree afterwards.
TEST(RocksDbPluginTest, SettlesAfterABurst) {
  TempDir dir;
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("rocksdb", dir.Sub("db"), SmallTree(), &db).ok());
  PutBurst(db.get(), 20000);
  SettleReport r;
  ASSERT_TRUE(db->Settle(120, &r).ok());
  EXPECT_TRUE(r.supported);
  ASSERT_TRUE(r.idle) << r.detail;
  EXPECT_NE(std::string::npos, r.detail.find("merges pending 0, running 0")) << r.detail;
  const Metrics m = db->GetMetrics();
  EXPECT_EQ(0, m.at("merges_running"));
  EXPECT_EQ(0, m.at("flushes_running"));
  EXPECT_EQ(0, m.at("merges_pending"));
  EXPECT_TRUE(db->Close().ok());
}

TEST(RocksDbPluginTest, TellsFlushesAndCompactionsWithTheirLevels) {
  const EnginePlugin* plugin = Plugin();
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->name(), "rocksdb");
  EXPECT_TRUE(plugin->options_open());
  EXPECT_TRUE(plugin->CannotTell().empty());
  // Listed options are checked by the table, the others by RocksDB's own parser.
  EXPECT_TRUE(plugin->CheckOptions({{"write_buffer_size", "64K"}, {"bloom_locality", "1"}}).ok());
  Status s = plugin->CheckOptions({{"write_bufer_size", "64K"}});
  EXPECT_NE(s.ToString().find("engine option 'write_bufer_size'"), std::string::npos)
      << s.ToString();
  s = plugin->CheckOptions({{"compaction_style", "kCompactionStyleTiered"}});
  EXPECT_NE(s.ToString().find("choose from: kCompactionStyleLevel"), std::string::npos)
      << s.ToString();
  // A listed option the table refuses and an open one RocksDB refuses: both in one answer.
  s = plugin->CheckOptions({{"write_buffer_size", "1K"}, {"arena_block_size", "bad"}});
  EXPECT_NE(s.ToString().find("engine option 'write_buffer_size': bad value '1K'"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("; engine option 'arena_block_size': bad value 'bad'"),
            std::string::npos)
      << s.ToString();

  const std::string dir = ::testing::TempDir() + "/rocksdb-plugin";
  std::string cmd = "rm -rf '" + dir + "'";
  ASSERT_EQ(system(cmd.c_str()), 0);
  std::unique_ptr<KvAdapter> db;
  s = plugin->Open(dir, {{"write_buffer_size", "64K"}, {"level0_file_num_compaction_trigger", "2"},
                         {"max_bytes_for_level_base", "1M"}, {"target_file_size_base", "64K"},
                         {"disable_wal", "true"},
                         {"compression", "kNoCompression"}},
                   0, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string value(1000, 'v');
  for (int i = 0; i < 6000; i++) ASSERT_TRUE(db->Put(Key(i % 3000), value).ok());
  SettleReport report;
  ASSERT_TRUE(db->Settle(60.0, &report).ok());
  EXPECT_TRUE(report.supported);
  EXPECT_TRUE(report.idle) << report.detail;
  std::string got;
  ASSERT_TRUE(db->Get(Key(42), &got).ok());
  EXPECT_EQ(got, value);
  EXPECT_TRUE(db->Get("absent", &got).IsNotFound());
  size_t returned = 0;
  ASSERT_TRUE(db->Scan(Key(0), 5000, &returned).ok());
  EXPECT_EQ(returned, 3000u);
  int flushes = 0, merges = 0, deepest = 0;
  for (const EngineEvent& e : db->TakeEvents()) {
    if (e.kind == EngineEvent::Kind::kFlush) {
      flushes++;
      EXPECT_GT(e.output_bytes, 0u);
      EXPECT_GT(e.entries, 0u);
    } else {
      merges++;
      EXPECT_GE(e.output_level, 1);
      deepest = std::max(deepest, e.output_level);
    }
  }
  EXPECT_GE(flushes, 6000 * 1000 / (64 * 1024) / 2);  // ~91 memtables' worth
  EXPECT_GT(merges, 0);
  EXPECT_GE(deepest, 1);
  const Metrics m = db->GetMetrics();
  EXPECT_GT(m.at("bytes_flushed"), 0);
  EXPECT_GT(m.at("write_amplification"), 1.0);
  EXPECT_GT(m.at("disk_components"), 0);
  EXPECT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace lsmbench
