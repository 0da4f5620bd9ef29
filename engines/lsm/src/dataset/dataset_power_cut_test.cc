// Power-cut tests of datasets (PowerCutEnv; db/db_power_cut_test.cc has the
// model): with wal=sync, the disk a power cut leaves at any sync point opens
// and holds every acknowledged record, a prefix of each writer's writes, in
// the primary and in every secondary index alike; under eager maintenance no
// secondary entry outlives its record. Cuts at every sync point of a run
// (the dataset's log, the trees' flushes and merges, the new log of a flush
// round) and of some recoveries, then a soak at random sync points with two
// writers: LSM_POWER_CUTS (default 4) sets its length, as in the DB's soak.
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/power_cut_test_util.h"
#include "db/test_util.h"
#include "lsm/dataset.h"

namespace lsm {
namespace {

using test::CutOutcome;
using test::CutRunSpec;
using test::Write;

constexpr int kIndexes = 2;

// A record as a write's value: "f0,f1,payload".
std::string EncodeRecord(const std::vector<uint64_t>& fields, const std::string& payload) {
  return std::to_string(fields[0]) + "," + std::to_string(fields[1]) + "," + payload;
}

bool DecodeRecord(const std::string& value, std::vector<uint64_t>* fields, std::string* payload) {
  const size_t a = value.find(',');
  const size_t b = a == std::string::npos ? a : value.find(',', a + 1);
  if (b == std::string::npos) return false;
  *fields = {std::stoull(value.substr(0, a)), std::stoull(value.substr(a + 1, b - a - 1))};
  *payload = value.substr(b + 1);
  return true;
}

// Inserts, updates that move both secondary fields, deletes.
std::vector<Write> RandomRecordWrites(std::mt19937_64& rng, uint64_t count, int key_space) {
  std::vector<Write> writes;
  for (uint64_t i = 0; i < count; i++) {
    Write w;
    w.key = "k" + std::to_string(rng() % key_space);
    if (rng() % 6 != 0) {
      w.value = EncodeRecord({rng() % 400, rng() % 400},
                             "v" + std::to_string(i) + std::string(rng() % 200, 'x'));
    }
    writes.push_back(std::move(w));
  }
  return writes;
}

class DatasetTarget final : public test::CutTarget {
 public:
  DatasetTarget(DatasetOptions options, int key_space, size_t writers)
      : options_(std::move(options)), key_space_(key_space), writers_(writers) {}

  Status Open(Env* env) override {
    DatasetOptions options = options_;
    options.options.env = env;
    return Dataset::Open(options, "/power/ds", &ds_);
  }
  Status Apply(const std::string& key, const std::optional<std::string>& value) override {
    if (!value) return ds_->Delete(key);
    std::vector<uint64_t> fields;
    std::string payload;
    if (!DecodeRecord(*value, &fields, &payload)) return Status::InvalidArgument("bad record");
    return ds_->Put(key, fields, payload);
  }
  Status Flush() override { return ds_->Flush(); }
  Status WaitForIdle() override { return ds_->WaitForIdle(); }
  uint64_t MergesCompleted() override { return ds_->GetStats().trees[0].merges_completed; }

  // The records, by key from the primary; every secondary index must return
  // exactly them over its whole range, and under eager maintenance without
  // meeting an entry whose record is gone.
  Status Scan(std::map<std::string, std::string>* contents) override {
    contents->clear();
    Record record;
    for (size_t w = 0; w < writers_; w++) {
      for (int k = 0; k < key_space_; k++) {
        const std::string key = test::WriterPrefix(w) + "k" + std::to_string(k);
        Status s = ds_->Get(key, &record);
        if (s.IsNotFound()) continue;
        if (!s.ok()) return s;
        contents->emplace(key, EncodeRecord(record.fields, record.payload));
      }
    }
    for (int index = 0; index < kIndexes; index++) {
      std::vector<Record> found;
      Status s = ds_->Query(index, 0, UINT64_MAX, &found);
      if (!s.ok()) return s;
      std::map<std::string, std::string> by_index;
      for (const Record& r : found) by_index.emplace(r.key, EncodeRecord(r.fields, r.payload));
      if (by_index != *contents || found.size() != by_index.size()) {
        return Status::Corruption("secondary index " + std::to_string(index) + " returns " +
                                  std::to_string(found.size()) + " records, the primary holds " +
                                  std::to_string(contents->size()));
      }
    }
    if (options_.options.secondary_maintenance == SecondaryMaintenance::kEager &&
        ds_->GetStats().stale_entries_skipped != 0) {
      return Status::Corruption("a secondary entry outlived its record (eager maintenance)");
    }
    return Status::OK();
  }
  void Close() override { ds_.reset(); }

 private:
  const DatasetOptions options_;
  const int key_space_;
  const size_t writers_;
  std::unique_ptr<Dataset> ds_;
};

CutRunSpec DatasetSpec(SecondaryMaintenance maintenance, size_t writers, int key_space) {
  DatasetOptions options;
  options.options.wal = WalMode::kSync;
  options.options.memtable_bytes = 16 * 1024;  // flush rounds and merges all the time
  options.options.merge_policy = PolicyKind::kTiering;
  options.options.merge_scheduler = SchedulerKind::kGreedy;
  options.options.secondary_maintenance = maintenance;
  options.secondary_indexes = kIndexes;
  CutRunSpec spec;
  spec.make_target = [=] { return std::make_unique<DatasetTarget>(options, key_space, writers); };
  spec.wal = WalMode::kSync;
  spec.writers = writers;
  spec.key_space = key_space;
  spec.make_writes = RandomRecordWrites;
  return spec;
}

class DatasetPowerCutTest : public testing::TestWithParam<SecondaryMaintenance> {};

TEST_P(DatasetPowerCutTest, EverySyncPointKeepsEveryAcknowledgedRecordInEveryIndex) {
  const uint64_t seed = test::TestSeed();
  CutRunSpec spec = DatasetSpec(GetParam(), 1, 120);
  spec.writes_per_writer = 400;
  spec.recovery_one_in = 60;
  const CutOutcome out = RunWithCuts(spec, seed);
  std::printf("%s: %s\n", ToString(GetParam()), out.Report().c_str());
  EXPECT_TRUE(out.failures.empty()) << out.Report();
  for (const char* where : {"sync of dataset log", "sync of table", "directory sync",
                            "recovery, sync of manifest", "recovery, directory sync"}) {
    bool found = false;
    for (const auto& [at, n] : out.cuts_at) found |= at.rfind(where, 0) == 0;
    EXPECT_TRUE(found) << "no cut at " << where;
  }
  EXPECT_GT(out.merges, 0u);
}

TEST_P(DatasetPowerCutTest, Soak) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  const uint64_t wanted = test::EnvOr("LSM_POWER_CUTS", 4);
  CutRunSpec spec = DatasetSpec(GetParam(), 2, 150);
  spec.writes_per_writer = 150 * wanted;
  spec.take_one_in = 10;
  spec.keep_unsynced = rng() % 2 == 0;
  spec.recovery_one_in = 12;
  const CutOutcome out = RunWithCuts(spec, rng());
  std::printf("%s soak%s: %s\n", ToString(GetParam()),
              spec.keep_unsynced ? " (unsynced bytes partly kept)" : "", out.Report().c_str());
  EXPECT_TRUE(out.failures.empty()) << out.Report();
}

INSTANTIATE_TEST_SUITE_P(Strategies, DatasetPowerCutTest,
                         testing::Values(SecondaryMaintenance::kEager, SecondaryMaintenance::kLazy),
                         [](const auto& info) { return std::string(ToString(info.param)); });

}  // namespace
}  // namespace lsm
