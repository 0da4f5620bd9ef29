// The fault Env: which call fails, how, and what reaches the base Env.
#include "env/fault_env.h"

#include <string>

#include "gtest/gtest.h"

namespace lsm {
namespace {

// Kinds by suffix; the engine's own names are the DB tests' business.
FaultFile KindBySuffix(const std::string& fname) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return fname.size() >= s.size() && fname.compare(fname.size() - s.size(), s.size(), s) == 0;
  };
  if (ends(".wal")) return FaultFile::kWal;
  if (ends(".sst")) return FaultFile::kTable;
  return FaultFile::kOther;
}

class FaultEnvTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.CreateDir(kDir).ok()); }

  std::unique_ptr<WritableFile> Create(const std::string& name) {
    std::unique_ptr<WritableFile> file;
    Status s = env_.NewWritableFile(kDir + name, &file);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return file;
  }
  uint64_t Size(const std::string& name) {
    uint64_t size = 0;
    EXPECT_TRUE(env_.GetFileSize(kDir + name, &size).ok());
    return size;
  }
  std::string Contents(const std::string& name) {
    std::unique_ptr<SequentialFile> file;
    EXPECT_TRUE(env_.NewSequentialFile(kDir + name, &file).ok());
    std::string scratch(1024, '\0');
    std::string_view got;
    EXPECT_TRUE(file->Read(scratch.size(), &got, scratch.data()).ok());
    return std::string(got);
  }

  const std::string kDir = "/db/";
  std::unique_ptr<Env> base_ = NewMemEnv();
  FaultEnv env_{base_.get(), KindBySuffix};
};

void ExpectInjected(const Status& s, const char* strerror_text, const std::string& fname) {
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(strerror_text), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("(injected)"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(fname), std::string::npos) << s.ToString();
}

TEST_F(FaultEnvTest, TheNthMatchingCallFailsOnce) {
  auto file = Create("1.sst");
  env_.Inject({FaultOp::kSync, FaultFile::kAny, 3, ENOSPC});
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_FALSE(env_.fired());
  ExpectInjected(file->Sync(), "No space left on device", "/db/1.sst");
  EXPECT_TRUE(env_.fired());
  EXPECT_TRUE(file->Sync().ok()) << "a one-shot fault disarms when it fires";
  EXPECT_EQ(env_.faults_injected(), 1u);
}

TEST_F(FaultEnvTest, OnlyTheChosenKindOfFileCounts) {
  auto table = Create("1.sst");
  auto wal = Create("2.wal");
  env_.Inject({FaultOp::kWrite, FaultFile::kWal, 2, EIO});
  EXPECT_TRUE(table->Append("t").ok());
  EXPECT_TRUE(table->Append("t").ok());
  EXPECT_TRUE(wal->Append("w").ok());
  ExpectInjected(wal->Append("w"), "Input/output error", "/db/2.wal");
  EXPECT_EQ(Size("1.sst"), 2u);
  EXPECT_EQ(Size("2.wal"), 1u) << "the failed append wrote nothing";
}

TEST_F(FaultEnvTest, AShortWritePersistsTheFirstHalf) {
  auto file = Create("1.wal");
  ASSERT_TRUE(file->Append("head").ok());
  Fault fault{FaultOp::kWrite, FaultFile::kWal, 1, ENOSPC};
  fault.short_write = true;
  env_.Inject(fault);
  ExpectInjected(file->Append("abcdefghi"), "No space left on device", "/db/1.wal");
  EXPECT_EQ(Contents("1.wal"), "headabcd");
}

TEST_F(FaultEnvTest, UntilClearedFailsEveryMatchingCallUntilCleared) {
  Fault fault{FaultOp::kCreate, FaultFile::kTable, 2, ENOSPC};
  fault.until_cleared = true;
  env_.Inject(fault);
  std::unique_ptr<WritableFile> file;
  EXPECT_TRUE(env_.NewWritableFile(kDir + "1.sst", &file).ok());
  EXPECT_TRUE(env_.NewWritableFile(kDir + "2.wal", &file).ok()) << "another kind";
  for (const char* name : {"3.sst", "4.sst"}) {
    ExpectInjected(env_.NewWritableFile(kDir + name, &file), "No space", name);
    EXPECT_EQ(file, nullptr);
    EXPECT_FALSE(base_->FileExists(kDir + name)) << "a failed creation creates nothing";
  }
  ExpectInjected(env_.NewAppendableFile(kDir + "5.sst", &file), "No space", "5.sst");
  env_.Clear();
  EXPECT_TRUE(env_.NewWritableFile(kDir + "6.sst", &file).ok());
  EXPECT_EQ(env_.faults_injected(), 3u);
}

TEST_F(FaultEnvTest, FailedDirectoryCallsChangeNothing) {
  Create("1.sst");
  Create("CURRENT.tmp");
  env_.Inject({FaultOp::kRename, FaultFile::kAny, 1, EIO});
  ExpectInjected(env_.RenameFile(kDir + "CURRENT.tmp", kDir + "CURRENT"), "Input/output",
                 "CURRENT");
  EXPECT_TRUE(env_.FileExists(kDir + "CURRENT.tmp"));
  EXPECT_FALSE(env_.FileExists(kDir + "CURRENT"));

  env_.Inject({FaultOp::kRemove, FaultFile::kTable, 1, EIO});
  ExpectInjected(env_.RemoveFile(kDir + "1.sst"), "Input/output", "1.sst");
  EXPECT_TRUE(env_.FileExists(kDir + "1.sst"));

  env_.Inject({FaultOp::kSyncDir, FaultFile::kAny, 1, EIO});
  ExpectInjected(env_.SyncDir("/db"), "Input/output", "/db");
  EXPECT_EQ(env_.faults_injected(), 3u);
}

TEST_F(FaultEnvTest, ADirectorySyncHasNoFileKind) {
  env_.Inject({FaultOp::kSyncDir, FaultFile::kTable, 1, EIO});
  EXPECT_TRUE(env_.SyncDir("/db").ok());
  EXPECT_FALSE(env_.fired());
}

TEST_F(FaultEnvTest, InjectReplacesTheArmedFaultAndRestartsTheCount) {
  auto file = Create("1.sst");
  env_.Inject({FaultOp::kSync, FaultFile::kAny, 2, EIO});
  EXPECT_TRUE(file->Sync().ok());
  env_.Inject({FaultOp::kSync, FaultFile::kAny, 2, ENOSPC});
  EXPECT_TRUE(file->Sync().ok()) << "the count starts again";
  ExpectInjected(file->Sync(), "No space", "1.sst");
}

TEST_F(FaultEnvTest, DescribesTheFault) {
  Fault fault{FaultOp::kWrite, FaultFile::kWal, 3, ENOSPC};
  fault.short_write = true;
  EXPECT_EQ(DescribeFault(fault), "write of WAL, call 3, ENOSPC, short write");
  fault = {FaultOp::kSyncDir, FaultFile::kAny, 1, EIO};
  fault.until_cleared = true;
  EXPECT_EQ(DescribeFault(fault), "syncdir of any file, call 1 onwards, EIO");
}

}  // namespace
}  // namespace lsm
