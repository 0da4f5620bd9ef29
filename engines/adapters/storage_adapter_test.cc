// The behaviour every storing engine (builtin, and the rocksdb and leveldb
// plugins: whichever this build has) must share, run against each of them
// through OpenAdapter.
#include <stdio.h>
#include <stdlib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adapters/adapter.h"
#include "adapters/adapter_test_util.h"
#include "gtest/gtest.h"

namespace lsmbench {
namespace {

// builtin when compiled in, and the project's storing plugins this build has.
std::vector<std::string> StorageEngines() {
  for (const char* plugin : {
#ifdef LSM_ROCKSDB_PLUGIN
           LSM_ROCKSDB_PLUGIN,
#endif
#ifdef LSM_LEVELDB_PLUGIN
           LSM_LEVELDB_PLUGIN,
#endif
           ""}) {
    std::string name;
    const Status s = *plugin != '\0' ? LoadEnginePlugin(plugin, &name) : Status::OK();
    if (!s.ok()) {  // before any test runs, where an EXPECT would not count
      fprintf(stderr, "%s\n", s.ToString().c_str());
      abort();
    }
  }
  std::vector<std::string> engines;
  for (const std::string& name : AdapterNames()) {
    if (name != "null") engines.push_back(name);
  }
  return engines;
}

// Options that make the engine flush every 64 KiB of writes.
AdapterOptions SmallBufferOptions(const std::string& engine) {
  if (engine == "builtin") return {{"memtable_bytes", "64K"}};
  return {{"write_buffer_size", "64K"}};  // rocksdb and leveldb spell it alike
}

class StorageAdapterTest : public ::testing::TestWithParam<std::string> {
 protected:
  void Open(const AdapterOptions& options = {}) {
    ASSERT_TRUE(OpenAdapter(GetParam(), dir_.Sub("db"), options, &db_).ok());
  }
  void TearDown() override {
    if (db_) {
      EXPECT_TRUE(db_->Close().ok());
    }
  }
  std::string MustGet(const std::string& key) {
    std::string value;
    Status s = db_->Get(key, &value);
    EXPECT_TRUE(s.ok()) << key << ": " << s.ToString();
    return value;
  }
  size_t ScanCount(const std::string& start, size_t count) {
    size_t returned = ~size_t{0};
    Status s = db_->Scan(start, count, &returned);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return returned;
  }

  TempDir dir_;
  std::unique_ptr<KvAdapter> db_;
};

TEST_P(StorageAdapterTest, PutGetDeleteScan) {
  Open();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(db_->Put(TestKey(i), "v" + std::to_string(i)).ok());
  for (int i = 0; i < 100; ++i) EXPECT_EQ("v" + std::to_string(i), MustGet(TestKey(i)));

  std::string value = "untouched";
  EXPECT_TRUE(db_->Get("absent", &value).IsNotFound());
  EXPECT_TRUE(db_->Get(TestKey(100), &value).IsNotFound());

  ASSERT_TRUE(db_->Delete(TestKey(50)).ok());
  EXPECT_TRUE(db_->Get(TestKey(50), &value).IsNotFound());
  ASSERT_TRUE(db_->Delete("never-written").ok());

  EXPECT_EQ(5u, ScanCount(TestKey(10), 5));
  EXPECT_EQ(2u, ScanCount(TestKey(98), 10));  // 98, 99
  EXPECT_EQ(51u, ScanCount(TestKey(48), 1000));  // 48..99 without the deleted 50
  EXPECT_EQ(99u, ScanCount("", 1000));
  EXPECT_EQ(0u, ScanCount("zzz", 10));
  EXPECT_EQ(0u, ScanCount(TestKey(0), 0));
}

TEST_P(StorageAdapterTest, OverwriteReturnsNewest) {
  Open();
  ASSERT_TRUE(db_->Put("k", "old").ok());
  ASSERT_TRUE(db_->Put("k", "new").ok());
  EXPECT_EQ("new", MustGet("k"));
  ASSERT_TRUE(db_->Delete("k").ok());
  ASSERT_TRUE(db_->Put("k", "again").ok());
  EXPECT_EQ("again", MustGet("k"));
}

TEST_P(StorageAdapterTest, DataSurvivesCloseAndReopen) {
  Open();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(db_->Put(TestKey(i), std::to_string(i)).ok());
  ASSERT_TRUE(db_->Delete(TestKey(7)).ok());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  Open();
  EXPECT_EQ("999", MustGet(TestKey(999)));
  std::string value;
  EXPECT_TRUE(db_->Get(TestKey(7), &value).IsNotFound());
  EXPECT_EQ(999u, ScanCount("", 5000));
}

TEST_P(StorageAdapterTest, FlushesShowInMetrics) {
  Open(SmallBufferOptions(GetParam()));
  const std::string value(100, 'x');
  const int n = 40000;  // about 4.5 MiB: many 64 KiB write buffers
  for (int i = 0; i < n; ++i) ASSERT_TRUE(db_->Put(TestKey(i * 7919 % n), value).ok());
  const Metrics m = db_->GetMetrics();
  ASSERT_TRUE(m.count("disk_components"));
  EXPECT_GE(m.at("disk_components"), 1);
  ASSERT_TRUE(m.count("disk_components.L0"));
  double per_level = 0;
  for (const auto& [name, v] : m) {
    if (name.rfind("disk_components.L", 0) == 0) per_level += v;
  }
  EXPECT_EQ(m.at("disk_components"), per_level);
  // Bytes per level: the levels' files add up to the engine's total (not
  // exactly for every engine: a merge may end between the two readings).
  double bytes_per_level = 0;
  for (const auto& [name, v] : m) {
    if (name.rfind("disk_bytes.L", 0) == 0) bytes_per_level += v;
  }
  ASSERT_TRUE(m.count("disk_bytes"));
  EXPECT_GT(bytes_per_level, 0.5 * m.at("disk_bytes"));
  EXPECT_LT(bytes_per_level, 2.0 * m.at("disk_bytes"));
  ASSERT_TRUE(m.count("user_bytes"));
  EXPECT_EQ(static_cast<double>(n) * (TestKey(0).size() + value.size()), m.at("user_bytes"));
  ASSERT_TRUE(m.count("write_amplification"));
  EXPECT_GT(m.at("write_amplification"), 0);
  // Everything written is still readable across flushes.
  for (int i = 0; i < n; i += 997) EXPECT_EQ(value, MustGet(TestKey(i)));
  EXPECT_EQ(static_cast<size_t>(n), ScanCount("", n + 10));
}

TEST_P(StorageAdapterTest, ConcurrentWritersAndReaders) {
  Open(SmallBufferOptions(GetParam()));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 3000;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string key = TestKey(t * kPerThread + i);
        if (!db_->Put(key, key).ok()) failures++;
        std::string value;
        if (!db_->Get(key, &value).ok() || value != key) failures++;
        if (i % 500 == 0) db_->GetMetrics();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(static_cast<size_t>(kThreads * kPerThread), ScanCount("", kThreads * kPerThread + 1));
}

TEST_P(StorageAdapterTest, UnknownOptionIsNamed) {
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter(GetParam(), dir_.Sub("db"), {{"no_such_option", "1"}}, &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("no_such_option")) << s.ToString();
  EXPECT_EQ(nullptr, db);
}

TEST_P(StorageAdapterTest, OpenFailureCarriesEngineMessage) {
  // A regular file where the directory should be.
  const std::string path = dir_.Sub("file");
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(nullptr, f);
  std::fclose(f);
  std::unique_ptr<KvAdapter> db;
  Status s = OpenAdapter(GetParam(), path, {}, &db);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(nullptr, db);
}

INSTANTIATE_TEST_SUITE_P(Engines, StorageAdapterTest, ::testing::ValuesIn(StorageEngines()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StorageAdapterTest);

}  // namespace
}  // namespace lsmbench
