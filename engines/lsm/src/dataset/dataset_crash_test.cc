// Crash test of datasets: a child process writes records (inserts, updates
// that move secondary fields, deletes) with wal=sync, reporting each write
// before issuing it and once it is acknowledged; the parent kills it with
// SIGKILL at a random moment, reopens, and checks that every acknowledged
// record is in every index, that nothing else is (the one write in flight may
// or may not have happened, but in all indexes or in none), and under eager
// maintenance that no secondary entry is left without its record.
// As a soak: LSM_CRASH_ROUNDS rounds per strategy (default 8).
#include <cstdlib>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "dataset/dataset_test_util.h"
#include "db/test_util.h"
#include "lsm/dataset.h"

namespace lsm {
namespace {

DatasetOptions CrashOptions(SecondaryMaintenance maintenance) {
  DatasetOptions o;
  o.options.wal = WalMode::kSync;
  o.options.memtable_bytes = 16 * 1024;  // flush rounds and merges all the time
  o.options.merge_policy = PolicyKind::kTiering;
  o.options.merge_scheduler = SchedulerKind::kGreedy;
  o.options.secondary_maintenance = maintenance;
  o.secondary_indexes = 2;
  return o;
}

// "A <key> D" or "A <key> <f0> <f1> <payload>", then "K" once acknowledged.
[[noreturn]] void ChildWriter(const DatasetOptions& options, const std::string& dir, int fd,
                              uint64_t seed) {
  std::unique_ptr<Dataset> ds;
  Status s = Dataset::Open(options, dir, &ds);
  if (!s.ok()) {
    dprintf(fd, "E %s\n", s.ToString().c_str());
    _exit(1);
  }
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0;; i++) {
    const std::string key = "k" + std::to_string(rng() % 1500);
    if (rng() % 6 == 0) {
      dprintf(fd, "A %s D\n", key.c_str());
      s = ds->Delete(key);
    } else {
      const uint64_t f0 = rng() % 500, f1 = rng() % 500;
      const std::string payload = "v" + std::to_string(i) + std::string(rng() % 200, 'x');
      dprintf(fd, "A %s %llu %llu %s\n", key.c_str(), static_cast<unsigned long long>(f0),
              static_cast<unsigned long long>(f1), payload.c_str());
      s = ds->Put(key, {f0, f1}, payload);
    }
    if (!s.ok()) {
      dprintf(fd, "E %s\n", s.ToString().c_str());
      _exit(1);
    }
    dprintf(fd, "K\n");
  }
}

class DatasetCrashTest : public ::testing::TestWithParam<SecondaryMaintenance> {};

TEST_P(DatasetCrashTest, AcknowledgedRecordsSurviveSigkillInEveryIndex) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  const char* env_rounds = std::getenv("LSM_CRASH_ROUNDS");
  const int rounds = env_rounds != nullptr ? std::atoi(env_rounds) : 8;
  const DatasetOptions options = CrashOptions(GetParam());
  test::TempDir dir;
  test::DatasetModel model;
  uint64_t total_acked = 0, in_flight_applied = 0;
  for (int round = 0; round < rounds; round++) {
    const uint64_t child_seed = rng();
    const std::string stream = test::RunChildAndKill(
        [&](int fd) { ChildWriter(options, dir.path(), fd, child_seed); },
        100 + static_cast<int>(rng() % 600));
    std::istringstream in(stream);
    std::string line;
    bool pending = false;
    std::string pending_key;
    bool pending_delete = false;
    test::ModelRecord pending_record;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a torn last line: the write was not acknowledged
      ASSERT_NE(line.rfind("E ", 0), 0u) << "child failed: " << line;
      if (line.rfind("A ", 0) == 0) {
        std::istringstream fields(line.substr(2));
        std::string f0;
        fields >> pending_key >> f0;
        pending_delete = f0 == "D";
        if (!pending_delete) {
          pending_record.fields = {std::stoull(f0), 0};
          fields >> pending_record.fields[1] >> pending_record.payload;
        }
        pending = true;
      } else if (line == "K" && pending) {
        if (pending_delete) {
          model.erase(pending_key);
        } else {
          model[pending_key] = pending_record;
        }
        pending = false;
        total_acked++;
      }
    }

    std::unique_ptr<Dataset> ds;
    Status s = Dataset::Open(options, dir.path(), &ds);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    // The write in flight happened entirely or not at all; take the primary's
    // word for which, and every index must agree with it.
    if (pending) {
      Record now;
      s = ds->Get(pending_key, &now);
      const bool applied = pending_delete ? s.IsNotFound()
                                          : s.ok() && now.fields == pending_record.fields &&
                                                now.payload == pending_record.payload;
      if (applied) {
        in_flight_applied++;
        if (pending_delete) {
          model.erase(pending_key);
        } else {
          model[pending_key] = pending_record;
        }
      }
    }
    ASSERT_NO_FATAL_FAILURE(
        test::CheckWholeDataset(ds.get(), model, 2, "round " + std::to_string(round)));
    const DatasetStats st = ds->GetStats();
    if (GetParam() == SecondaryMaintenance::kEager) {
      ASSERT_EQ(st.stale_entries_skipped, 0u)
          << "round " << round << ": a secondary entry outlived its record";
    }
  }
  std::printf("%s: %d rounds, %llu acknowledged writes, 0 lost, 0 dangling; in flight and "
              "applied: %llu\n",
              ToString(GetParam()), rounds, static_cast<unsigned long long>(total_acked),
              static_cast<unsigned long long>(in_flight_applied));
  EXPECT_GT(total_acked, 20u * static_cast<uint64_t>(rounds))
      << "the child barely wrote: the test proved little";
}

INSTANTIATE_TEST_SUITE_P(Strategies, DatasetCrashTest,
                         ::testing::Values(SecondaryMaintenance::kEager,
                                           SecondaryMaintenance::kLazy),
                         [](const auto& info) { return std::string(ToString(info.param)); });

}  // namespace
}  // namespace lsm
