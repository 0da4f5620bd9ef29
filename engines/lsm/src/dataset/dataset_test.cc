#include "lsm/dataset.h"

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "dataset/dataset_test_util.h"
#include "dataset/record_format.h"
#include "db/test_util.h"
#include "lsm/env.h"
#include "lsm/listener.h"

namespace lsm {
namespace {

DatasetOptions SmallDataset(SecondaryMaintenance maintenance, int indexes = 2) {
  DatasetOptions o;
  o.options.memtable_bytes = 32 * 1024;  // flush rounds all the time
  o.options.merge_policy = PolicyKind::kTiering;
  o.options.merge_scheduler = SchedulerKind::kGreedy;
  o.options.secondary_maintenance = maintenance;
  o.secondary_indexes = indexes;
  return o;
}

std::string Key(uint64_t i) { return "pk" + std::to_string(1000000 + i); }

int LogFiles(const std::string& dir) {
  std::vector<std::string> children;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  int n = 0;
  for (const auto& c : children) n += c.rfind("dataset-", 0) == 0;
  return n;
}

TEST(RecordFormatTest, RoundTrips) {
  std::vector<uint64_t> fields;
  std::string payload;
  ASSERT_TRUE(dataset::DecodeRecordValue(dataset::EncodeRecordValue({7, UINT64_MAX}, "abc"),
                                         &fields, &payload));
  EXPECT_EQ(fields, (std::vector<uint64_t>{7, UINT64_MAX}));
  EXPECT_EQ(payload, "abc");
  EXPECT_FALSE(dataset::DecodeRecordValue("\x03short", &fields, &payload));

  // Secondary keys order by field value first, as numbers.
  EXPECT_LT(dataset::SecondaryKey(255, "z"), dataset::SecondaryKey(256, "a"));
  uint64_t f;
  std::string_view pk;  // a view into `key`, which must outlive it
  const std::string key = dataset::SecondaryKey(1u << 20, "key");
  ASSERT_TRUE(dataset::ParseSecondaryKey(key, &f, &pk));
  EXPECT_EQ(f, 1u << 20);
  EXPECT_EQ(pk, "key");

  std::vector<dataset::TreeWrite> writes = {{0, false, "k", "v"}, {2, true, "s", ""}};
  std::vector<dataset::TreeWrite> back;
  ASSERT_TRUE(dataset::DecodeLogRecord(dataset::EncodeLogRecord(writes), &back));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].tree, 2u);
  EXPECT_TRUE(back[1].is_delete);
  EXPECT_EQ(back[0].value, "v");
}

class MaintenanceTest : public ::testing::TestWithParam<SecondaryMaintenance> {};

// Updates move records between field values; queries must follow them under
// both strategies, and only lazy maintenance leaves stale entries to skip.
TEST_P(MaintenanceTest, QueriesFollowUpdatesAndDeletes) {
  test::TempDir dir;
  const bool eager = GetParam() == SecondaryMaintenance::kEager;
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(Dataset::Open(SmallDataset(GetParam()), dir.path(), &ds).ok());
  test::DatasetModel model;
  for (uint64_t i = 0; i < 300; i++) {
    test::ModelRecord r{{i % 50, i % 7}, "payload" + std::to_string(i)};
    ASSERT_TRUE(ds->Put(Key(i), r.fields, r.payload).ok());
    model[Key(i)] = r;
  }
  ASSERT_NO_FATAL_FAILURE(test::CheckQuery(ds.get(), model, 0, 10, 20, "after inserts"));
  const uint64_t stale_before = ds->GetStats().stale_entries_skipped;
  EXPECT_EQ(stale_before, 0u);
  // Move every record of field-0 values 10..19 to 100+, delete a few.
  for (uint64_t i = 0; i < 300; i++) {
    if (i % 50 < 10 || i % 50 >= 20) continue;
    test::ModelRecord r{{100 + i, i % 7}, "moved"};
    ASSERT_TRUE(ds->Put(Key(i), r.fields, r.payload).ok());
    model[Key(i)] = r;
  }
  for (uint64_t i = 0; i < 300; i += 9) {
    ASSERT_TRUE(ds->Delete(Key(i)).ok());
    model.erase(Key(i));
  }
  ASSERT_NO_FATAL_FAILURE(test::CheckQuery(ds.get(), model, 0, 10, 20, "after moves"));
  ASSERT_NO_FATAL_FAILURE(test::CheckQuery(ds.get(), model, 0, 100, 400, "new values"));
  ASSERT_NO_FATAL_FAILURE(test::CheckWholeDataset(ds.get(), model, 2, "whole"));
  ASSERT_TRUE(ds->WaitForIdle().ok());
  DatasetStats st = ds->GetStats();
  if (eager) {
    EXPECT_EQ(st.stale_entries_skipped, 0u) << "eager maintenance left old entries behind";
    EXPECT_GT(st.antimatter_entries, 0u);
    EXPECT_EQ(st.maintenance_lookups, st.records_put + st.records_deleted);
  } else {
    // The 10..19 range alone holds 60 moved records' old entries.
    EXPECT_GE(st.stale_entries_skipped, 60u);
    EXPECT_EQ(st.antimatter_entries, 0u);
    EXPECT_EQ(st.maintenance_lookups, 0u);
  }
  EXPECT_GT(st.flush_rounds, 0u);
  ASSERT_EQ(st.trees.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Strategies, MaintenanceTest,
                         ::testing::Values(SecondaryMaintenance::kEager,
                                           SecondaryMaintenance::kLazy),
                         [](const auto& info) { return std::string(ToString(info.param)); });

// One memory budget: when it is spent every tree flushes, so each tree has
// as many flushes as there were rounds, and the old logs are gone.
struct CountingListener : EventListener {
  std::atomic<uint64_t> flushes{0};
  void OnFlushCompleted(const FlushInfo&) override { flushes++; }
};

TEST(DatasetTest, TreesFlushTogetherAndLogsAreRemoved) {
  test::TempDir dir;
  std::unique_ptr<Dataset> ds;
  CountingListener listener;
  DatasetOptions options = SmallDataset(SecondaryMaintenance::kLazy);
  options.options.listener = &listener;
  ASSERT_TRUE(Dataset::Open(options, dir.path(), &ds).ok());
  for (uint64_t i = 0; i < 2000; i++) {
    ASSERT_TRUE(ds->Put(Key(i), {i, i * 3}, std::string(100, 'x')).ok());
  }
  ASSERT_TRUE(ds->Flush().ok());
  ASSERT_TRUE(ds->WaitForIdle().ok());
  DatasetStats st = ds->GetStats();
  EXPECT_GE(st.flush_rounds, 5u);  // ~2000 x 190 bytes over a 32 KiB budget
  for (size_t t = 0; t < st.trees.size(); t++) {
    // Every write reaches every tree, so they flush in the same rounds: all
    // but one with nothing written (the explicit Flush may find none).
    EXPECT_EQ(st.trees[t].flushes_completed, st.trees[0].flushes_completed) << "tree " << t;
    EXPECT_GE(st.trees[t].flushes_completed + 1, st.flush_rounds) << "tree " << t;
    EXPECT_EQ(st.trees[t].memory_stalls, 0u) << "tree " << t << " filled up on its own";
  }
  // The primary holds the payloads, the secondaries 8-byte fields and keys.
  EXPECT_GT(st.trees[0].user_bytes_written, 4 * st.trees[1].user_bytes_written);
  EXPECT_EQ(LogFiles(dir.path()), 1) << "only the current log remains";
  // The listener hears the primary index: one flush per round.
  EXPECT_EQ(listener.flushes.load(), st.trees[0].flushes_completed);
}

// The trees share the dataset's I/O budget: it is charged for every tree's
// flushes, and no tree has one of its own.
TEST(DatasetTest, TreesShareOneIoBudget) {
  test::TempDir dir;
  DatasetOptions o = SmallDataset(SecondaryMaintenance::kEager);
  o.options.io_budget_bytes_per_sec = 64 << 20;
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(Dataset::Open(o, dir.path(), &ds).ok());
  for (uint64_t i = 0; i < 1000; i++) {
    ASSERT_TRUE(ds->Put(Key(i % 400), {i, i / 2}, std::string(100, 'y')).ok());
  }
  ASSERT_TRUE(ds->Flush().ok());
  ASSERT_TRUE(ds->WaitForIdle().ok());
  DatasetStats st = ds->GetStats();
  uint64_t written = 0;
  for (const Stats& t : st.trees) {
    EXPECT_EQ(t.io_budget_granted_bytes, 0u) << "a tree has a budget of its own";
    written += t.flush_bytes_written + t.merge_bytes_written;
  }
  EXPECT_GE(st.io_budget_granted_bytes, written);
  EXPECT_GT(st.trees[1].flush_bytes_written, 0u);
}

TEST(DatasetTest, ReopenKeepsEverythingAndChecksTheIndexCount) {
  test::TempDir dir;
  test::DatasetModel model;
  {
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(Dataset::Open(SmallDataset(SecondaryMaintenance::kEager, 3), dir.path(), &ds).ok());
    for (uint64_t i = 0; i < 500; i++) {
      test::ModelRecord r{{i % 13, i % 17, i}, std::to_string(i)};
      ASSERT_TRUE(ds->Put(Key(i % 200), r.fields, r.payload).ok());
      model[Key(i % 200)] = r;
    }
  }
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(Dataset::Open(SmallDataset(SecondaryMaintenance::kEager, 3), dir.path(), &ds).ok());
  ASSERT_NO_FATAL_FAILURE(test::CheckWholeDataset(ds.get(), model, 3, "reopened"));
  ds.reset();
  Status s = Dataset::Open(SmallDataset(SecondaryMaintenance::kEager, 2), dir.path(), &ds);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("secondary_indexes 3"), std::string::npos) << s.ToString();
}

TEST(DatasetTest, BadCallsAreRefused) {
  test::TempDir dir;
  std::unique_ptr<Dataset> ds;
  DatasetOptions o = SmallDataset(SecondaryMaintenance::kEager);
  o.secondary_indexes = kMaxSecondaryIndexes + 1;
  Status s = Dataset::Open(o, dir.path(), &ds);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("secondary_indexes"), std::string::npos) << s.ToString();
  o.secondary_indexes = 2;
  o.options.create_if_missing = false;
  EXPECT_TRUE(Dataset::Open(o, dir.path() + "/none", &ds).IsInvalidArgument());
  o.options.create_if_missing = true;
  ASSERT_TRUE(Dataset::Open(o, dir.path(), &ds).ok());
  s = ds->Put("k", {1}, "v");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("2 secondary fields, got 1"), std::string::npos) << s.ToString();
  std::vector<Record> records;
  EXPECT_TRUE(ds->Query(2, 0, 10, &records).IsInvalidArgument());
  EXPECT_TRUE(ds->Query(-1, 0, 10, &records).IsInvalidArgument());
  Record r;
  EXPECT_TRUE(ds->Get("k", &r).IsNotFound());
}

// Writers racing on the same keys under eager maintenance: each key's old
// entries must still be removed (writes to one key are serialized), so once
// they stop no query skips anything.
TEST(DatasetTest, ConcurrentEagerWritersLeaveNoStaleEntries) {
  const uint64_t seed = test::TestSeed();
  test::TempDir dir;
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(Dataset::Open(SmallDataset(SecondaryMaintenance::kEager), dir.path(), &ds).ok());
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
      for (int i = 0; i < 1500 && !failed; i++) {
        const std::string key = Key(rng() % 64);
        Status s = rng() % 10 == 0 ? ds->Delete(key)
                                   : ds->Put(key, {rng() % 1000, rng() % 1000}, "v");
        if (!s.ok()) failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  std::vector<Record> all;
  for (int index = 0; index < 2; index++) {
    ASSERT_TRUE(ds->Query(index, 0, UINT64_MAX, &all).ok());
    for (const Record& r : all) {
      Record current;
      ASSERT_TRUE(ds->Get(r.key, &current).ok());
      EXPECT_EQ(current.fields, r.fields);
    }
  }
  DatasetStats st = ds->GetStats();
  EXPECT_EQ(st.stale_entries_skipped, 0u);
  EXPECT_EQ(st.query_candidates, st.query_results);
}

}  // namespace
}  // namespace lsm
