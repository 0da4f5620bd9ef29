// The bounded-depth policies in the engine: free-running writes (flushes
// arrive while merges run) never deadlock on the k + 1 constraint, every
// key stays readable, the bound holds once merges complete, and
// Stats::average_sstables is counted per flush as documented in stats.h.
#include <gtest/gtest.h>

#include <cstdio>

#include "db/test_util.h"
#include "lsm/db.h"
#include "options/option_test_util.h"

namespace lsm {
namespace {

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", (i * 7919) % 100003);
  return buf;
}

TEST(BoundedDepthDBTest, FreeRunningWritesKeepTheBound) {
  for (const char* policy : {"bigtable", "exploring", "constant", "minlatency", "binomial"}) {
    SCOPED_TRACE(policy);
    test::TempDir dir;
    Options options;
    options.wal = WalMode::kOff;
    options.memtable_bytes = 8 << 10;
    options.merge_policy = lsm::test::Named<lsm::PolicyKind>(policy);
    options.sstable_bound = 3;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    const int n = 3000;
    for (int i = 0; i < n; ++i) ASSERT_TRUE(db->Put(Key(i), std::string(100, 'v')).ok());
    ASSERT_TRUE(db->WaitForIdle().ok());
    const Stats st = db->GetStats();
    EXPECT_GT(st.flushes_completed, 20u);
    EXPECT_LE(st.disk_components, 3u);
    EXPECT_EQ(st.max_components, 4u) << "the default constraint is k + 1";
    EXPECT_GT(st.merges_completed, 0u);
    // Each flush leaves between 1 and k + 1 components (k + 1 only when a
    // merge it waits for is still running).
    EXPECT_GE(st.average_sstables, 1.0);
    EXPECT_LE(st.average_sstables, 4.0);
    std::string value;
    for (int i = 0; i < n; i += 97) ASSERT_TRUE(db->Get(Key(i), &value).ok()) << i;
  }
}

TEST(BoundedDepthDBTest, AverageIsCountedPerSettledFlush) {
  // constant k = 2, one flush at a time with merges completed in between:
  // counts 1 2 1 2 ... as in the simulator.
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  options.merge_policy = lsm::PolicyKind::kConstant;
  options.sstable_bound = 2;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int t = 0; t < 6; ++t) {
    ASSERT_TRUE(db->Put(Key(t), "v").ok());
    ASSERT_TRUE(db->Flush().ok());
    ASSERT_TRUE(db->WaitForIdle().ok());
  }
  const Stats st = db->GetStats();
  EXPECT_EQ(st.flushes_completed, 6u);
  EXPECT_EQ(st.disk_components, 2u);
  EXPECT_DOUBLE_EQ(st.average_sstables, 1.5);
}

TEST(BoundedDepthDBTest, BadBoundIsRejectedByName) {
  test::TempDir dir;
  Options options;
  options.merge_policy = lsm::PolicyKind::kBinomial;
  options.sstable_bound = 0;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("sstable_bound"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lsm
