// The randomized model test under faults, for every policy x scheduler:
// rounds of random writes, deletes, reads and flushes checked against the
// acknowledged writes, each round with one random fault armed (any call,
// one file kind or all, ENOSPC or EIO, a short write, a full disk). A round
// ends at the first failure, which the database must report everywhere and
// survive with its reads intact, or after its operations. Then the database
// is closed and reopened with the fault still armed if it has not fired (so
// opens fail too), and once the fault clears a reopen must recover every
// acknowledged write and no other (but the one write in doubt).
//
// As a soak: LSM_FAULT_ROUNDS rounds per case (default 10) of LSM_FAULT_OPS
// operations (default 800); engines/README.md ("Faults") has the command.
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/fault_test_util.h"
#include "options/option_test_util.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm {
namespace {

using test::FaultyDB;
using test::IsInjected;

// nth is log-uniform over 1..2048: most faults hit soon, some only after
// many flushes, and some never within the round (they meet the reopen).
Fault RandomFault(std::mt19937_64& rng) {
  static constexpr FaultFile kFiles[] = {FaultFile::kAny, FaultFile::kWal, FaultFile::kTable,
                                         FaultFile::kManifest, FaultFile::kCurrent};
  Fault fault;
  fault.op = static_cast<FaultOp>(rng() % kNumFaultOps);
  fault.file = fault.op == FaultOp::kSyncDir ? FaultFile::kAny : kFiles[rng() % 5];
  fault.nth = 1 + rng() % (uint64_t{1} << (rng() % 12));
  fault.error = rng() % 2 == 0 ? ENOSPC : EIO;
  fault.short_write = fault.op == FaultOp::kWrite && rng() % 2 == 0;
  fault.until_cleared = rng() % 4 == 0;
  return fault;
}

// faults: calls failed (a full disk fails many); faulted: rounds in which
// the fault fired at all.
struct Totals {
  uint64_t rounds = 0, faulted = 0, faults = 0, acknowledged = 0, lost = 0;

  void Print(const std::string& what) const {
    std::printf("%s: %llu rounds (%llu with a fault), %llu faults injected, %llu acknowledged "
                "writes, %llu lost\n",
                what.c_str(), static_cast<unsigned long long>(rounds),
                static_cast<unsigned long long>(faulted), static_cast<unsigned long long>(faults),
                static_cast<unsigned long long>(acknowledged),
                static_cast<unsigned long long>(lost));
  }
  void Add(const Totals& t) {
    rounds += t.rounds;
    faulted += t.faulted;
    faults += t.faults;
    acknowledged += t.acknowledged;
    lost += t.lost;
  }
};

class FaultModelTest : public testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  static void TearDownTestSuite() { totals_.Print("fault model, all cases"); }
  static Totals totals_;
};
Totals FaultModelTest::totals_;

// One round's operations under the armed fault; the first failure, or OK.
Status RunOperations(FaultyDB* fdb, std::mt19937_64& rng, uint64_t ops) {
  constexpr int kKeySpace = 5000;
  DB* db = fdb->db();
  std::string value;
  for (uint64_t op = 0; op < ops; op++) {
    const int dice = static_cast<int>(rng() % 100);
    const std::string key = test::RandomKey(rng, kKeySpace);
    Status s;
    if (dice < 50) {
      s = fdb->Put(key, test::RandomValue(rng));
    } else if (dice < 65) {
      s = fdb->Delete(key);
    } else if (dice < 99) {
      // Reads see the acknowledged writes whatever failed in the background.
      s = db->Get(key, &value);
      auto m = fdb->model().find(key);
      if (m == fdb->model().end()) {
        EXPECT_TRUE(s.IsNotFound()) << "op " << op << " key " << key << ": " << s.ToString();
      } else {
        EXPECT_TRUE(s.ok()) << "op " << op << " key " << key << ": " << s.ToString();
        EXPECT_EQ(value, m->second) << "op " << op << " key " << key;
      }
      if (testing::Test::HasFailure()) return Status::OK();
      continue;
    } else {
      s = db->Flush();
    }
    if (!s.ok()) return s;
  }
  return db->WaitForIdle();
}

TEST_P(FaultModelTest, AcknowledgedWritesSurviveFaults) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  const uint64_t rounds = test::EnvOr("LSM_FAULT_ROUNDS", 10);
  const uint64_t ops = test::EnvOr("LSM_FAULT_OPS", 800);
  Options options;
  options.memtable_bytes = 16 * 1024;  // flushes and merges all the time
  options.merge_policy = test::Named<PolicyKind>(GetParam().first);
  options.merge_scheduler = test::Named<SchedulerKind>(GetParam().second);
  options.partition_bytes = 8 * 1024;  // partitioned: merges split their output
  options.idle_probe_ms = 20;
  options.wal = rng() % 2 == 0 ? WalMode::kSync : WalMode::kAsync;
  FaultyDB fdb(options);
  ASSERT_TRUE(fdb.Open().ok());

  Totals totals;
  for (uint64_t round = 0; round < rounds; round++) {
    const Fault fault = RandomFault(rng);
    SCOPED_TRACE("round " + std::to_string(round) + ": " + DescribeFault(fault));
    fdb.env().Inject(fault);
    Status failed = RunOperations(&fdb, rng, ops);
    ASSERT_FALSE(HasFailure());
    if (!failed.ok()) {
      ASSERT_TRUE(IsInjected(failed)) << failed.ToString();
      fdb.ExpectStopped();
    }

    // An armed fault (unfired, or a full disk) meets the close and the open.
    fdb.Close();
    Status s = fdb.Open();
    if (!s.ok()) {
      ASSERT_TRUE(IsInjected(s)) << s.ToString();
      fdb.env().Clear();
      s = fdb.Open();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    fdb.env().Clear();
    // A merge the open started may have met the fault before it cleared.
    s = fdb.db()->WaitForIdle();
    if (!s.ok()) {
      ASSERT_TRUE(IsInjected(s)) << s.ToString();
      s = fdb.Open();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    totals.faulted += fdb.env().fired();
    const std::vector<std::string> differ = fdb.Differences(true);
    totals.lost += differ.size();
    EXPECT_EQ(differ, std::vector<std::string>{})
        << "keys that differ from the acknowledged writes";
  }
  // Files whose removal failed go at the next open.
  ASSERT_TRUE(fdb.Open().ok());
  fdb.Close();
  fdb.ExpectOnlyLiveFiles();

  totals.rounds = rounds;
  totals.faults = fdb.env().faults_injected();
  totals.acknowledged = fdb.acknowledged();
  totals.Print(GetParam().first + "/" + GetParam().second);
  totals_.Add(totals);
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultModelTest,
                         testing::ValuesIn(test::PolicySchedulerPairs()),
                         [](const auto& info) {
                           return test::PolicySchedulerName(info.param.first, info.param.second);
                         });

}  // namespace
}  // namespace lsm
