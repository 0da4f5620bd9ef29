// Power-cut tests (PowerCutEnv): what the disk holds after the power goes at
// a sync point must open, and hold what the WAL mode promises
// (engines/README.md, "Power cuts"):
// - wal=sync: every acknowledged write, and the writes that survive are a
//   prefix of each writer's writes (the one in flight may or may not be there);
// - wal=async: every write a completed Flush covered, and a prefix of the
//   writes when the OS wrote back nothing else (what it may have written back
//   of the logs can come back out of order);
// - wal=off: every write a completed Flush covered, and a prefix of the writes.
// EverySyncPoint cuts before each sync and directory sync of a run (WAL
// appends and switches, flushes, merges, the manifest and CURRENT at open)
// and, for some of those disks, before each sync of the recovery that opens
// them. The soak cuts at random sync points over every policy x scheduler
// with two writers: LSM_POWER_CUTS cuts per case (default 4), the command in
// engines/README.md.
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "db/power_cut_test_util.h"
#include "db/test_util.h"
#include "lsm/db.h"
#include "options/option_test_util.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm {
namespace {

using test::CutOutcome;
using test::CutRunSpec;

class DBTarget final : public test::CutTarget {
 public:
  explicit DBTarget(Options options) : options_(std::move(options)) {}

  Status Open(Env* env) override {
    Options options = options_;
    options.env = env;
    return DB::Open(options, "/power/db", &db_);
  }
  Status Apply(const std::string& key, const std::optional<std::string>& value) override {
    return value ? db_->Put(key, *value) : db_->Delete(key);
  }
  Status Flush() override { return db_->Flush(); }
  Status WaitForIdle() override { return db_->WaitForIdle(); }
  uint64_t MergesCompleted() override { return db_->GetStats().merges_completed; }
  Status Scan(std::map<std::string, std::string>* contents) override {
    contents->clear();
    std::unique_ptr<Iterator> it = db_->NewIterator();
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      contents->emplace(std::string(it->key()), std::string(it->value()));
    }
    return it->status();
  }
  void Close() override { db_.reset(); }

 private:
  const Options options_;
  std::unique_ptr<DB> db_;
};

// A spec whose target is a DB with small memtables: flushes every few dozen
// writes, merges all the time.
CutRunSpec SmallTreeSpec(const std::string& policy, const std::string& scheduler, WalMode wal) {
  Options options;
  options.wal = wal;
  options.memtable_bytes = 8 * 1024;
  options.merge_policy = test::Named<PolicyKind>(policy);
  options.merge_scheduler = test::Named<SchedulerKind>(scheduler);
  options.partition_bytes = 8 * 1024;
  options.idle_probe_ms = 20;
  CutRunSpec spec;
  spec.make_target = [options] { return std::make_unique<DBTarget>(options); };
  spec.wal = wal;
  return spec;
}

class EverySyncPointTest : public testing::TestWithParam<std::string> {};

TEST_P(EverySyncPointTest, WalSyncKeepsEveryAcknowledgedWrite) {
  const uint64_t seed = test::TestSeed();
  CutRunSpec spec = SmallTreeSpec(GetParam(), "greedy", WalMode::kSync);
  spec.recovery_one_in = 25;
  const CutOutcome out = RunWithCuts(spec, seed);
  std::printf("%s: %s\n", GetParam().c_str(), out.Report().c_str());
  EXPECT_TRUE(out.failures.empty()) << out.Report();
  // The run cut where it meant to: WAL syncs, flushes and merges (their
  // tables and directory syncs) and, in the recoveries, manifests and CURRENT.
  for (const char* where : {"sync of WAL", "sync of table", "directory sync",
                            "recovery, sync of manifest", "recovery, sync of CURRENT",
                            "recovery, directory sync", "recovery, sync of table"}) {
    EXPECT_GT(out.cuts_at.count(where), 0u) << "no cut at " << where;
  }
  EXPECT_GT(out.merges, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, EverySyncPointTest, testing::ValuesIn(policy::PolicyNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// wal=async and wal=off promise what a completed Flush covered; with the OS
// having written back nothing else, a prefix; with some of it written back
// (keep_unsynced), async's logs may bring back later writes out of order.
class WeakerModesTest : public testing::TestWithParam<std::tuple<WalMode, bool>> {};

TEST_P(WeakerModesTest, KeepWhatAFlushCoveredAndNothingWritesDidNotWrite) {
  const uint64_t seed = test::TestSeed();
  CutRunSpec spec = SmallTreeSpec("tiering", "greedy", std::get<0>(GetParam()));
  spec.keep_unsynced = std::get<1>(GetParam());
  spec.flush_every = 90;
  spec.recovery_one_in = 5;
  const CutOutcome out = RunWithCuts(spec, seed);
  std::printf("%s%s: %s\n", ToString(spec.wal),
              spec.keep_unsynced ? ", unsynced bytes partly kept" : "", out.Report().c_str());
  EXPECT_TRUE(out.failures.empty()) << out.Report();
  EXPECT_GT(out.cuts, 40u);
}

INSTANTIATE_TEST_SUITE_P(Modes, WeakerModesTest,
                         testing::Combine(testing::Values(WalMode::kAsync, WalMode::kOff),
                                          testing::Bool()),
                         [](const auto& info) {
                           return std::string(ToString(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_keep_unsynced" : "_drop_unsynced");
                         });

// The soak: random sync points of two concurrent writers, every policy x
// scheduler, half the cuts keeping part of the unsynced bytes.
struct SoakTotals {
  uint64_t cases = 0, cuts = 0, recovery_cuts = 0, acknowledged = 0, failed = 0;
};
SoakTotals soak_totals;

class PowerCutSoakTest : public testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  static void TearDownTestSuite() {
    std::printf("power-cut soak, all cases: %llu cases, %llu cuts + %llu during recovery, "
                "%llu writes acknowledged, %llu cuts failed\n",
                static_cast<unsigned long long>(soak_totals.cases),
                static_cast<unsigned long long>(soak_totals.cuts),
                static_cast<unsigned long long>(soak_totals.recovery_cuts),
                static_cast<unsigned long long>(soak_totals.acknowledged),
                static_cast<unsigned long long>(soak_totals.failed));
  }
};

TEST_P(PowerCutSoakTest, WalSyncKeepsEveryAcknowledgedWrite) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  const uint64_t wanted = test::EnvOr("LSM_POWER_CUTS", 4);
  CutRunSpec spec = SmallTreeSpec(GetParam().first, GetParam().second, WalMode::kSync);
  spec.writers = 2;
  spec.writes_per_writer = 150 * wanted;
  spec.key_space = 200;
  // ~2.5 syncs per write pair: one cut in every ~75 sync points.
  spec.take_one_in = 75;
  spec.keep_unsynced = rng() % 2 == 0;
  spec.recovery_one_in = 8;
  const CutOutcome out = RunWithCuts(spec, rng());
  std::printf("%s/%s: %s\n", GetParam().first.c_str(), GetParam().second.c_str(),
              out.Report().c_str());
  EXPECT_TRUE(out.failures.empty()) << out.Report();
  soak_totals.cases++;
  soak_totals.cuts += out.cuts;
  soak_totals.recovery_cuts += out.recovery_cuts;
  soak_totals.acknowledged += out.acknowledged;
  soak_totals.failed += out.failures.size();
}

INSTANTIATE_TEST_SUITE_P(Soak, PowerCutSoakTest,
                         testing::ValuesIn(test::PolicySchedulerPairs()),
                         [](const auto& info) {
                           return test::PolicySchedulerName(info.param.first, info.param.second);
                         });

}  // namespace
}  // namespace lsm
