// Partitioned leveling through the DB: what survives a reopen, and what it
// refuses to open.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "db/filenames.h"
#include "db/manifest.h"
#include "db/test_util.h"
#include "log/log_format.h"
#include "lsm/db.h"

namespace lsm {
namespace {

std::vector<std::string> CursorsOnDisk(const std::string& dir) {
  ManifestState state;
  EXPECT_TRUE(RecoverManifest(Env::Default(), dir, &state).ok());
  return state.merge_cursors;
}

// The cursors of the live manifest's first edit: the snapshot Open wrote. Merges that run
// after the reopen move the cursors on, so the last state would not tell a restored cursor
// from a restarted one; the snapshot does.
std::vector<std::string> CursorsOpenWrote(const std::string& dir) {
  Env* env = Env::Default();
  std::unique_ptr<SequentialFile> file;
  EXPECT_TRUE(env->NewSequentialFile(CurrentFileName(dir), &file).ok());
  char buf[256];
  std::string_view current;
  EXPECT_TRUE(file->Read(sizeof(buf), &current, buf).ok());
  const std::string name = dir + "/" + std::string(current.substr(0, current.find('\n')));
  EXPECT_TRUE(env->NewSequentialFile(name, &file).ok());
  log::Reader reader(file.get(), name);
  std::string_view record;
  std::string scratch;
  EXPECT_TRUE(reader.ReadRecord(&record, &scratch));
  ManifestEdit snapshot;
  EXPECT_TRUE(snapshot.Decode(record, name).ok());
  return snapshot.merge_cursors;
}

TEST(PartitionedDBTest, RoundRobinCursorSurvivesReopen) {
  test::TempDir dir;
  Options options;
  options.merge_policy = lsm::PolicyKind::kPartitioned;
  options.partition_pick = lsm::PartitionPick::kRoundRobin;
  options.memtable_bytes = 32 * 1024;
  options.partition_bytes = 8 * 1024;
  options.level1_bytes = 32 * 1024;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const std::string value(100, 'v');
  char key[32];
  // Random-order keys until a file has moved down from level 1.
  for (int i = 0; i < 20000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 20000);
    ASSERT_TRUE(db->Put(key, value).ok());
  }
  db.reset();  // closes
  const std::vector<std::string> before = CursorsOnDisk(dir.path());
  ASSERT_GE(before.size(), 2u);
  ASSERT_FALSE(before[1].empty()) << "no round-robin merge from level 1 happened";

  // Reopening writes a fresh manifest: it must carry the cursors on, or the
  // next phase of a benchmark would start every level's round robin over.
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  db.reset();  // closes
  EXPECT_EQ(before, CursorsOpenWrote(dir.path()));
}

TEST(PartitionedDBTest, RefusesATreeWrittenByAStackPolicy) {
  test::TempDir dir;
  Options options;
  options.merge_policy = lsm::PolicyKind::kTiering;
  options.memtable_bytes = 4096;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  // Every flush covers the same keys, so tiering's level-1 components overlap.
  for (int flush = 0; flush < 6; ++flush) {
    for (char k = 'a'; k <= 'z'; ++k) ASSERT_TRUE(db->Put(std::string(1, k), "v").ok());
    ASSERT_TRUE(db->Flush().ok());
    ASSERT_TRUE(db->WaitForIdle().ok());
  }
  ASSERT_GE(db->GetStats().disk_components_per_level.size(), 2u);
  db.reset();  // closes

  options.merge_policy = lsm::PolicyKind::kPartitioned;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("merge_policy partitioned cannot open " + dir.path()),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("written by a stack policy"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lsm
