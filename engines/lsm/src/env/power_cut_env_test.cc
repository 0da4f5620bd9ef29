#include "env/power_cut_env.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lsm {
namespace {

class PowerCutEnvTest : public testing::Test {
 protected:
  void Write(const std::string& fname, const std::string& data, bool sync) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env_.NewWritableFile(fname, &file).ok());
    ASSERT_TRUE(file->Append(data).ok());
    if (sync) {
      ASSERT_TRUE(file->Sync().ok());
    }
    ASSERT_TRUE(file->Close().ok());
  }

  std::unique_ptr<Env> base_ = NewMemEnv();
  PowerCutEnv env_{base_.get()};
};

TEST_F(PowerCutEnvTest, AFileAndItsEntrySurviveOnlyWhenSynced) {
  ASSERT_TRUE(env_.CreateDir("/db").ok());
  ASSERT_TRUE(env_.SyncDir("/").ok());
  Write("/db/synced", "abc", true);
  Write("/db/unsynced", "xyz", false);
  // Neither entry is on the disk before the directory is synced.
  EXPECT_EQ(env_.Cut().files.size(), 0u);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  DiskImage image = env_.Cut();
  EXPECT_EQ(image.files.at("/db/synced"), "abc");
  EXPECT_EQ(image.files.at("/db/unsynced"), "");  // the entry is, its bytes are not
  EXPECT_EQ(image.dirs, std::set<std::string>{"/db"});

  // Appends after the last sync are lost; the live file keeps them.
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(env_.NewAppendableFile("/db/synced", &file).ok());
  ASSERT_TRUE(file->Append("def").ok());
  EXPECT_EQ(env_.Cut().files.at("/db/synced"), "abc");
  ASSERT_TRUE(file->Sync().ok());
  EXPECT_EQ(env_.Cut().files.at("/db/synced"), "abcdef");
  uint64_t size = 0;
  ASSERT_TRUE(env_.GetFileSize("/db/synced", &size).ok());
  EXPECT_EQ(size, 6u);
}

TEST_F(PowerCutEnvTest, RenamesAndRemovalsTakeEffectAtTheDirectorySync) {
  ASSERT_TRUE(env_.CreateDir("/d").ok());
  ASSERT_TRUE(env_.SyncDir("/").ok());
  Write("/d/CURRENT", "old", true);
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  Write("/d/tmp", "new", true);
  ASSERT_TRUE(env_.RenameFile("/d/tmp", "/d/CURRENT").ok());
  // The replaced file is back with its own inode until the directory syncs.
  EXPECT_EQ(env_.Cut().files, (std::map<std::string, std::string>{{"/d/CURRENT", "old"}}));
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  EXPECT_EQ(env_.Cut().files, (std::map<std::string, std::string>{{"/d/CURRENT", "new"}}));

  ASSERT_TRUE(env_.RemoveFile("/d/CURRENT").ok());
  EXPECT_EQ(env_.Cut().files.count("/d/CURRENT"), 1u);
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  EXPECT_EQ(env_.Cut().files.count("/d/CURRENT"), 0u);
  ASSERT_TRUE(env_.RemoveDir("/d").ok());
  EXPECT_EQ(env_.Cut().dirs.count("/d"), 1u);
  ASSERT_TRUE(env_.SyncDir("/").ok());
  EXPECT_EQ(env_.Cut().dirs.count("/d"), 0u);
}

TEST_F(PowerCutEnvTest, ATruncatingOpenIsANewInode) {
  Write("/d/f", "first", true);
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  Write("/d/f", "second", false);
  EXPECT_EQ(env_.Cut().files.at("/d/f"), "first");
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  EXPECT_EQ(env_.Cut().files.at("/d/f"), "");  // the new inode, its bytes unsynced
}

TEST_F(PowerCutEnvTest, AnUnsyncedDirectoryTakesItsFilesWithIt) {
  ASSERT_TRUE(env_.CreateDir("/top").ok());
  ASSERT_TRUE(env_.SyncDir("/").ok());
  ASSERT_TRUE(env_.CreateDir("/top/sub").ok());
  Write("/top/sub/f", "data", true);
  ASSERT_TRUE(env_.SyncDir("/top/sub").ok());
  EXPECT_EQ(env_.Cut().files.size(), 0u) << "/top/sub's entry in /top was never synced";
  ASSERT_TRUE(env_.SyncDir("/top").ok());
  DiskImage image = env_.Cut();
  EXPECT_EQ(image.files.at("/top/sub/f"), "data");
  EXPECT_EQ(image.dirs, (std::set<std::string>{"/top", "/top/sub"}));
}

TEST_F(PowerCutEnvTest, KeepUnsyncedKeepsAPrefixOfTheUnsyncedBytes) {
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(env_.NewWritableFile("/d/log", &file).ok());
  ASSERT_TRUE(file->Append("synced|").ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Append(std::string(1000, 'u')).ok());
  ASSERT_TRUE(env_.SyncDir("/d").ok());
  std::set<size_t> sizes;
  for (uint64_t seed = 0; seed < 50; seed++) {
    const std::string data = env_.Cut({/*keep_unsynced=*/true, seed}).files.at("/d/log");
    ASSERT_GE(data.size(), 7u);
    ASSERT_LE(data.size(), 1007u);
    EXPECT_EQ(data.substr(0, 7), "synced|");
    sizes.insert(data.size());
  }
  EXPECT_GT(sizes.size(), 10u) << "the kept prefix does not vary with the seed";
}

TEST_F(PowerCutEnvTest, ARestoredImageIsDurableAndCutsToItself) {
  DiskImage image;
  image.dirs = {"/db", "/db/primary"};
  image.files = {{"/db/CURRENT", "MANIFEST-1\n"}, {"/db/primary/000002.sst", "table"}};
  std::unique_ptr<Env> base = NewMemEnv();
  PowerCutEnv env(base.get());
  ASSERT_TRUE(env.Restore(image).ok());
  DiskImage again = env.Cut();
  EXPECT_EQ(again.files, image.files);
  EXPECT_EQ(again.dirs, image.dirs);
  std::vector<std::string> children;
  ASSERT_TRUE(env.GetChildren("/db", &children).ok());
  EXPECT_EQ(children, (std::vector<std::string>{"CURRENT", "primary"}));
}

TEST_F(PowerCutEnvTest, TheHookRunsBeforeEachSyncWithTheDiskAsItWas) {
  std::vector<std::string> calls;
  std::vector<size_t> bytes_on_disk;
  env_.SetHook([&](PowerCutEnv::Event event, const std::string& path) {
    calls.push_back((event == PowerCutEnv::Event::kSync ? "sync " : "syncdir ") + path);
    bytes_on_disk.push_back(env_.Cut().Bytes());
  });
  Write("/d/f", "abc", true);
  ASSERT_TRUE(env_.SyncDir("/d/").ok());
  Write("/d/g", "de", true);
  EXPECT_EQ(calls, (std::vector<std::string>{"sync /d/f", "syncdir /d", "sync /d/g"}));
  // Before the directory sync /d/f was not on the disk; before /d/g's, it was.
  EXPECT_EQ(bytes_on_disk, (std::vector<size_t>{0, 0, 3}));
}

}  // namespace
}  // namespace lsm
