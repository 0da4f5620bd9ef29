// Every I/O call of a flush and the merge it triggers, of an open and of a
// write fails in turn, one run per call, and each time the engine must keep
// its promises (engines/README.md, "Faults"): the call that saw the failure
// returns it; it becomes the background error, which later writes, Flush,
// WaitForIdle and GetStats report (no hang); the tree in memory still holds
// exactly the acknowledged writes; and once the fault clears, a reopen
// recovers every acknowledged write, makes no other write appear than the
// one in doubt, and leaves no file behind that the manifest does not name.
// A failed removal of an obsolete file is the exception: it is no error (the
// next open removes the file).
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "db/fault_test_util.h"

namespace lsm {
namespace {

using test::FaultyDB;
using test::IsInjected;

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

// Acknowledged writes: puts of keys [first, first + n) and a delete of every
// seventh, so that flushes and merges carry tombstones too.
void WriteKeys(FaultyDB* fdb, int first, int n) {
  for (int i = first; i < first + n; i++) {
    ASSERT_TRUE(fdb->Put(Key(i), std::string(40, static_cast<char>('a' + i % 26))).ok());
    if (i % 7 == 0) {
      ASSERT_TRUE(fdb->Delete(Key(i / 2)).ok());
    }
  }
}

// What a sweep runs: setup on a fresh database with no fault armed, then
// the action whose I/O calls fail in turn. `clean` checks a run in which no
// fault fired, so that a scenario cannot quietly stop covering what it is
// named after.
struct Scenario {
  const char* name;
  Options options;
  std::function<void(FaultyDB*)> setup;
  std::function<Status(FaultyDB*)> action;
  std::function<void(DB*)> clean;
};

Options BaseOptions() {
  Options options;
  options.wal = WalMode::kSync;
  options.block_bytes = 2048;  // several blocks, so several writes, per table
  options.merge_policy = PolicyKind::kTiering;
  options.size_ratio = 2;  // the second component makes a merge
  return options;
}

Status FlushAndWait(FaultyDB* fdb) {
  Status s = fdb->db()->Flush();
  return s.ok() ? fdb->db()->WaitForIdle() : s;
}

void OpenAndWrite(FaultyDB* fdb) {
  ASSERT_TRUE(fdb->Open().ok());
  ASSERT_NO_FATAL_FAILURE(WriteKeys(fdb, 0, 150));
  ASSERT_TRUE(fdb->db()->Flush().ok());
  ASSERT_NO_FATAL_FAILURE(WriteKeys(fdb, 100, 150));
}

void MergedOnce(DB* db) { EXPECT_GE(db->GetStats().merges_completed, 1u); }

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> scenarios;
  // A flush (memtable switch: new WAL, old one closed; table; manifest edit;
  // WAL removal), then the merge of the two components.
  scenarios.push_back({"FlushAndMerge", BaseOptions(), OpenAndWrite, FlushAndWait, MergedOnce});
  // The same under partitioned leveling: the merge's output is split into
  // several files, which a failure must remove together.
  Options partitioned = BaseOptions();
  partitioned.merge_policy = PolicyKind::kPartitioned;
  partitioned.partition_bytes = 4096;
  partitioned.l0_trigger = 2;
  scenarios.push_back({"FlushAndPartitionedMerge", partitioned, OpenAndWrite, FlushAndWait,
                       [](DB* db) {
                         MergedOnce(db);
                         EXPECT_GE(db->GetStats().disk_components, 2u) << "no split output";
                       }});
  // An open: WAL replay into a table, the new manifest and CURRENT, the new
  // WAL, obsolete files; then the merge the recovered stack calls for.
  scenarios.push_back({"OpenAndMerge", BaseOptions(),
                       [](FaultyDB* fdb) {
                         OpenAndWrite(fdb);
                         fdb->Close();
                       },
                       [](FaultyDB* fdb) {
                         Status s = fdb->Open();
                         return s.ok() ? fdb->db()->WaitForIdle() : s;
                       },
                       MergedOnce});
  // One write: its WAL record, and with wal=sync the sync.
  for (WalMode wal : {WalMode::kSync, WalMode::kAsync}) {
    Options options = BaseOptions();
    options.wal = wal;
    scenarios.push_back({wal == WalMode::kSync ? "WriteWalSync" : "WriteWalAsync", options,
                         [](FaultyDB* fdb) {
                           ASSERT_TRUE(fdb->Open().ok());
                           ASSERT_NO_FATAL_FAILURE(WriteKeys(fdb, 0, 50));
                         },
                         [](FaultyDB* fdb) { return fdb->Put("written", std::string(5000, 'w')); },
                         [](DB*) {}});
  }
  return scenarios;
}

// The fault has cleared: a reopen recovers, and the database works again.
void ExpectRecovers(FaultyDB* fdb) {
  Status s = fdb->Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(fdb->Differences(true), std::vector<std::string>{});
  EXPECT_TRUE(fdb->db()->WaitForIdle().ok());
  EXPECT_EQ(fdb->db()->GetStats().background_error, "");
  EXPECT_TRUE(fdb->Put("after recovery", "v").ok());
  fdb->Close();
  fdb->ExpectOnlyLiveFiles();
}

using SweepParam = std::tuple<size_t, FaultOp>;

class FaultSweepTest : public testing::TestWithParam<SweepParam> {};

TEST_P(FaultSweepTest, EveryCallFailsInTurn) {
  const Scenario scenario = Scenarios()[std::get<0>(GetParam())];
  const FaultOp op = std::get<1>(GetParam());
  for (bool short_write : {false, true}) {
    if (short_write && op != FaultOp::kWrite) continue;
    int fired = 0;
    for (uint64_t nth = 1;; nth++) {
      Fault fault{op, FaultFile::kAny, nth, nth % 2 == 1 ? EIO : ENOSPC};
      fault.short_write = short_write;
      fault.until_cleared = nth % 3 == 0;  // a full disk: the cleanup fails too
      SCOPED_TRACE(DescribeFault(fault));
      FaultyDB fdb(scenario.options);
      ASSERT_NO_FATAL_FAILURE(scenario.setup(&fdb));
      fdb.env().Inject(fault);
      const Status s = scenario.action(&fdb);
      if (!fdb.env().fired()) {
        // The action makes fewer than nth such calls: all have been failed.
        ASSERT_TRUE(s.ok()) << s.ToString();
        scenario.clean(fdb.db());
        break;
      }
      fired++;
      if (op == FaultOp::kRemove) {
        EXPECT_TRUE(s.ok()) << s.ToString();
      } else {
        ASSERT_TRUE(IsInjected(s)) << s.ToString();
        // Only one thread does I/O at a time here, so the error that
        // stopped the database is the one the action saw.
        if (fdb.db() != nullptr) {
          EXPECT_EQ(fdb.ExpectStopped(), s.ToString());
        }
      }
      if (!fault.until_cleared) fdb.env().Clear();
      fdb.Close();
      fdb.env().Clear();
      ASSERT_NO_FATAL_FAILURE(ExpectRecovers(&fdb));
    }
    std::printf("%s, %s%s: %d calls failed in turn\n", scenario.name, FaultOpName(op),
                short_write ? " (short)" : "", fired);
  }
}

std::vector<SweepParam> SweepParams() {
  std::vector<SweepParam> params;
  for (size_t i = 0; i < Scenarios().size(); i++) {
    for (FaultOp op : {FaultOp::kCreate, FaultOp::kWrite, FaultOp::kSync, FaultOp::kRename,
                       FaultOp::kSyncDir, FaultOp::kRemove}) {
      params.emplace_back(i, op);
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Sites, FaultSweepTest, testing::ValuesIn(SweepParams()),
                         [](const testing::TestParamInfo<SweepParam>& info) {
                           return std::string(Scenarios()[std::get<0>(info.param)].name) + "_" +
                                  FaultOpName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace lsm
