// Randomized model test: datasets against an in-memory model, under both
// maintenance strategies and several policies and schedulers, with a tiny
// memory budget (flush rounds and merges all the time) and reopens. Updates
// change secondary fields, so old entries pile up under lazy maintenance.
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "dataset/dataset_test_util.h"
#include "db/test_util.h"
#include "lsm/dataset.h"
#include "options/option_test_util.h"

namespace lsm {
namespace {

struct DatasetCase {
  std::string policy;
  std::string scheduler;
  std::string maintenance;
};

class DatasetModelTest : public ::testing::TestWithParam<DatasetCase> {};

TEST_P(DatasetModelTest, QueriesReturnExactlyTheMatchingCurrentRecords) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  DatasetOptions options;
  options.options.memtable_bytes = 24 * 1024;
  options.options.merge_policy = test::Named<PolicyKind>(GetParam().policy);
  options.options.merge_scheduler = test::Named<SchedulerKind>(GetParam().scheduler);
  options.options.partition_bytes = 16 * 1024;
  options.options.secondary_maintenance = test::Named<SecondaryMaintenance>(GetParam().maintenance);
  options.secondary_indexes = 2;
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(Dataset::Open(options, dir.path(), &ds).ok());

  test::DatasetModel model;
  constexpr int kOps = 6000;
  constexpr uint64_t kKeys = 800;
  constexpr uint64_t kFieldValues = 400;  // a value matches ~2 records
  for (int op = 1; op <= kOps; op++) {
    const std::string key = "k" + std::to_string(rng() % kKeys);
    const int dice = static_cast<int>(rng() % 100);
    if (dice < 70) {
      test::ModelRecord r{{rng() % kFieldValues, rng() % kFieldValues},
                          std::string(rng() % 120, static_cast<char>('a' + rng() % 26))};
      ASSERT_TRUE(ds->Put(key, r.fields, r.payload).ok());
      model[key] = r;
    } else if (dice < 80) {
      ASSERT_TRUE(ds->Delete(key).ok());
      model.erase(key);
    } else {
      const int index = static_cast<int>(rng() % 2);
      const uint64_t low = rng() % kFieldValues;
      const uint64_t high = low + 1 + rng() % 40;
      ASSERT_NO_FATAL_FAILURE(
          test::CheckQuery(ds.get(), model, index, low, high, "op " + std::to_string(op)));
    }
    if (op % 2000 == 0 && op < kOps) {
      ds.reset();
      ASSERT_TRUE(Dataset::Open(options, dir.path(), &ds).ok());
      ASSERT_NO_FATAL_FAILURE(
          test::CheckWholeDataset(ds.get(), model, 2, "reopen at op " + std::to_string(op)));
    }
  }
  ASSERT_TRUE(ds->WaitForIdle().ok());
  ASSERT_NO_FATAL_FAILURE(test::CheckWholeDataset(ds.get(), model, 2, "end"));
  DatasetStats st = ds->GetStats();
  EXPECT_GT(st.flush_rounds, 3u);
  uint64_t merges = 0;
  for (const Stats& t : st.trees) merges += t.merges_completed;
  EXPECT_GT(merges, 0u);
  if (GetParam().maintenance == "eager") {
    EXPECT_EQ(st.stale_entries_skipped, 0u);
  } else {
    EXPECT_GT(st.stale_entries_skipped, 0u);
  }
  std::printf("%s/%s/%s: rounds %llu merges %llu stale skipped %llu\n",
              GetParam().policy.c_str(), GetParam().scheduler.c_str(),
              GetParam().maintenance.c_str(), static_cast<unsigned long long>(st.flush_rounds),
              static_cast<unsigned long long>(merges),
              static_cast<unsigned long long>(st.stale_entries_skipped));
}

std::vector<DatasetCase> Cases() {
  std::vector<DatasetCase> cases;
  for (const char* maintenance : {"eager", "lazy"}) {
    cases.push_back({"tiering", "fair", maintenance});
    cases.push_back({"tiering", "greedy", maintenance});
    cases.push_back({"leveling", "single", maintenance});
    cases.push_back({"partitioned", "leveldb", maintenance});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(PoliciesSchedulersStrategies, DatasetModelTest,
                         ::testing::ValuesIn(Cases()), [](const auto& info) {
                           return test::PolicySchedulerName(info.param.policy,
                                                            info.param.scheduler) +
                                  "_" + info.param.maintenance;
                         });

}  // namespace
}  // namespace lsm
