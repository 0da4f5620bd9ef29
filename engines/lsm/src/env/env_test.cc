// The same behavioural tests against the POSIX Env and the mem Env: the
// engine must not be able to tell them apart (except for durability).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "lsm/env.h"

namespace lsm {
namespace {

enum class EnvKind { kPosix, kMem };

std::string KindName(const testing::TestParamInfo<EnvKind>& info) {
  return info.param == EnvKind::kPosix ? "Posix" : "Mem";
}

class EnvTest : public testing::TestWithParam<EnvKind> {
 protected:
  void SetUp() override {
    if (GetParam() == EnvKind::kPosix) {
      env_ = Env::Default();
      char tmpl[] = "/tmp/lsm_env_test.XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
      root_ = tmpl;
    } else {
      mem_env_ = NewMemEnv();
      env_ = mem_env_.get();
      root_ = "/mem/env_test";
      ASSERT_TRUE(env_->CreateDir(root_).ok());
    }
  }

  void TearDown() override {
    if (GetParam() == EnvKind::kPosix && !root_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(root_, ec);
    }
  }

  std::string Path(const std::string& name) const { return root_ + "/" + name; }

  void WriteFile(const std::string& fname, std::string_view contents) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(fname, &f).ok());
    ASSERT_TRUE(f->Append(contents).ok());
    ASSERT_TRUE(f->Close().ok());
  }

  // Reads the whole file through a SequentialFile in chunks of `chunk` bytes.
  std::string ReadSequential(const std::string& fname, size_t chunk = 1000) {
    std::unique_ptr<SequentialFile> f;
    Status s = env_->NewSequentialFile(fname, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return "";
    std::string out;
    std::string scratch(chunk, '\0');
    while (true) {
      std::string_view piece;
      s = f->Read(chunk, &piece, scratch.data());
      EXPECT_TRUE(s.ok()) << s.ToString();
      out.append(piece.data(), piece.size());
      if (!s.ok() || piece.size() < chunk) break;
    }
    return out;
  }

  std::string ReadAt(RandomAccessFile* f, uint64_t offset, size_t n) {
    std::string scratch(n, '\0');
    std::string_view result;
    Status s = f->Read(offset, n, &result, scratch.data());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::string(result);
  }

  static std::string RandomBytes(std::mt19937_64* rng, size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>((*rng)() & 0xff);
    return s;
  }

  Env* env_ = nullptr;
  std::unique_ptr<Env> mem_env_;
  std::string root_;
};

TEST_P(EnvTest, WriteAppendAndReadBack) {
  const uint32_t seed = 301;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string fname = Path("data");
  std::string expected;
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(fname, &w).ok());
  // Sizes around the write buffer's capacity: small appends that fill it, one
  // that straddles it, and large ones that bypass it.
  for (size_t n : {0, 1, 100, 65536 - 101, 7, 65536, 200000, 3, 65535, 65537, 10}) {
    std::string piece = RandomBytes(&rng, n);
    ASSERT_TRUE(w->Append(piece).ok());
    expected += piece;
  }
  ASSERT_TRUE(w->Flush().ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(fname, &size).ok());
  EXPECT_EQ(size, expected.size()) << "Flush must hand every appended byte to the file";
  ASSERT_TRUE(w->Append("tail").ok());
  expected += "tail";
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(w->Append("x").ok()) << "append after Close";

  EXPECT_EQ(ReadSequential(fname), expected);
  EXPECT_EQ(ReadSequential(fname, 4096), expected);

  // NewAppendableFile continues the file.
  ASSERT_TRUE(env_->NewAppendableFile(fname, &w).ok());
  ASSERT_TRUE(w->Append("more").ok());
  ASSERT_TRUE(w->Close().ok());
  expected += "more";
  EXPECT_EQ(ReadSequential(fname), expected);

  // NewWritableFile truncates.
  WriteFile(fname, "fresh");
  EXPECT_EQ(ReadSequential(fname), "fresh");

  // NewAppendableFile creates an absent file.
  ASSERT_TRUE(env_->NewAppendableFile(Path("new"), &w).ok());
  ASSERT_TRUE(w->Append("abc").ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(ReadSequential(Path("new")), "abc");
}

TEST_P(EnvTest, DestructorFlushesBufferedData) {
  const std::string fname = Path("unclosed");
  {
    std::unique_ptr<WritableFile> w;
    ASSERT_TRUE(env_->NewWritableFile(fname, &w).ok());
    ASSERT_TRUE(w->Append("buffered").ok());
  }
  EXPECT_EQ(ReadSequential(fname), "buffered");
}

TEST_P(EnvTest, SequentialSkip) {
  const std::string fname = Path("skip");
  WriteFile(fname, "0123456789");
  std::unique_ptr<SequentialFile> f;
  ASSERT_TRUE(env_->NewSequentialFile(fname, &f).ok());
  char scratch[10];
  std::string_view r;
  ASSERT_TRUE(f->Read(2, &r, scratch).ok());
  EXPECT_EQ(r, "01");
  ASSERT_TRUE(f->Skip(3).ok());
  ASSERT_TRUE(f->Read(3, &r, scratch).ok());
  EXPECT_EQ(r, "567");
  ASSERT_TRUE(f->Read(10, &r, scratch).ok());
  EXPECT_EQ(r, "89");
  ASSERT_TRUE(f->Read(10, &r, scratch).ok());
  EXPECT_TRUE(r.empty());
}

TEST_P(EnvTest, RandomAccessReads) {
  const uint32_t seed = 17;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string contents = RandomBytes(&rng, 100000);
  const std::string fname = Path("ra");
  WriteFile(fname, contents);

  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  EXPECT_EQ(ReadAt(f.get(), 0, 10), contents.substr(0, 10));
  EXPECT_EQ(ReadAt(f.get(), 12345, 777), contents.substr(12345, 777));
  EXPECT_EQ(ReadAt(f.get(), 99990, 10), contents.substr(99990));
  // Straddling the end: a short read.
  EXPECT_EQ(ReadAt(f.get(), 99990, 100), contents.substr(99990));
  // At and past the end: empty, not an error.
  EXPECT_EQ(ReadAt(f.get(), 100000, 10), "");
  EXPECT_EQ(ReadAt(f.get(), 1 << 30, 10), "");
  EXPECT_EQ(ReadAt(f.get(), 5, 0), "");

  // Concurrent readers at random offsets.
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 r(seed + t + 1);
      std::string scratch(4096, '\0');
      for (int i = 0; i < 2000; i++) {
        uint64_t off = r() % contents.size();
        size_t n = r() % scratch.size();
        std::string_view result;
        if (!f->Read(off, n, &result, scratch.data()).ok() ||
            result != std::string_view(contents).substr(off, n)) {
          mismatches[t]++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; t++) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_P(EnvTest, OpenMissingFileNamesIt) {
  const std::string fname = Path("missing");
  std::unique_ptr<SequentialFile> s;
  std::unique_ptr<RandomAccessFile> r;
  Status st = env_->NewSequentialFile(fname, &s);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.ToString().find(fname), std::string::npos) << st.ToString();
  EXPECT_EQ(s, nullptr);
  st = env_->NewRandomAccessFile(fname, &r);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.ToString().find(fname), std::string::npos) << st.ToString();
  EXPECT_EQ(r, nullptr);
}

TEST_P(EnvTest, GetChildren) {
  ASSERT_TRUE(env_->CreateDir(Path("dir")).ok());
  WriteFile(Path("dir/b"), "1");
  WriteFile(Path("dir/a"), "22");
  ASSERT_TRUE(env_->CreateDir(Path("dir/sub")).ok());
  WriteFile(Path("dir/sub/nested"), "x");
  WriteFile(Path("dirx"), "not a child");

  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(Path("dir"), &children).ok());
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b", "sub"}));

  ASSERT_TRUE(env_->GetChildren(Path("dir/sub"), &children).ok());
  EXPECT_EQ(children, (std::vector<std::string>{"nested"}));

  Status s = env_->GetChildren(Path("nodir"), &children);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(Path("nodir")), std::string::npos) << s.ToString();
}

TEST_P(EnvTest, RenameReplacesTarget) {
  const std::string src = Path("src"), target = Path("target");
  WriteFile(src, "new contents");
  WriteFile(target, "old");
  // A reader of the old target keeps seeing the old contents.
  std::unique_ptr<RandomAccessFile> old_reader;
  ASSERT_TRUE(env_->NewRandomAccessFile(target, &old_reader).ok());

  ASSERT_TRUE(env_->RenameFile(src, target).ok());
  EXPECT_FALSE(env_->FileExists(src));
  EXPECT_TRUE(env_->FileExists(target));
  EXPECT_EQ(ReadSequential(target), "new contents");
  EXPECT_EQ(ReadAt(old_reader.get(), 0, 100), "old");

  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(root_, &children).ok());
  EXPECT_EQ(children, (std::vector<std::string>{"target"}));

  Status s = env_->RenameFile(Path("absent"), target);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(Path("absent")), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadSequential(target), "new contents");
}

TEST_P(EnvTest, RemoveFile) {
  const std::string fname = Path("doomed");
  WriteFile(fname, "still readable");
  std::unique_ptr<RandomAccessFile> reader;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &reader).ok());
  EXPECT_TRUE(env_->FileExists(fname));
  ASSERT_TRUE(env_->RemoveFile(fname).ok());
  EXPECT_FALSE(env_->FileExists(fname));
  // Like an unlinked inode, an open file keeps its contents.
  EXPECT_EQ(ReadAt(reader.get(), 0, 100), "still readable");

  Status s = env_->RemoveFile(fname);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(fname), std::string::npos) << s.ToString();

  // Recreating the name gives a new, empty file.
  WriteFile(fname, "");
  EXPECT_EQ(ReadSequential(fname), "");
}

TEST_P(EnvTest, FileExistsAndSize) {
  const std::string fname = Path("sized");
  EXPECT_FALSE(env_->FileExists(fname));
  uint64_t size = 123;
  Status s = env_->GetFileSize(fname, &size);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(fname), std::string::npos) << s.ToString();

  WriteFile(fname, std::string(4321, 'z'));
  EXPECT_TRUE(env_->FileExists(fname));
  ASSERT_TRUE(env_->GetFileSize(fname, &size).ok());
  EXPECT_EQ(size, 4321u);
  EXPECT_TRUE(env_->FileExists(root_)) << "a directory exists too";
}

TEST_P(EnvTest, CreateAndRemoveDir) {
  const std::string dir = Path("d");
  ASSERT_TRUE(env_->CreateDir(dir).ok());
  EXPECT_TRUE(env_->FileExists(dir));
  EXPECT_TRUE(env_->CreateDir(dir).ok()) << "an existing directory is fine";
  EXPECT_TRUE(env_->SyncDir(dir).ok());

  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(dir, &children).ok());
  EXPECT_TRUE(children.empty());

  WriteFile(dir + "/f", "x");
  EXPECT_FALSE(env_->RemoveDir(dir).ok()) << "not empty";
  ASSERT_TRUE(env_->RemoveFile(dir + "/f").ok());
  ASSERT_TRUE(env_->RemoveDir(dir).ok());
  EXPECT_FALSE(env_->FileExists(dir));
  EXPECT_FALSE(env_->SyncDir(dir).ok());
}

TEST_P(EnvTest, CreateDirOnRegularFileFails) {
  const std::string fname = Path("plain");
  WriteFile(fname, "data");
  Status s = env_->CreateDir(fname);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(fname), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadSequential(fname), "data") << "the file is untouched";
}

TEST_P(EnvTest, LockTwiceFailsUnlockThenLockWorks) {
  const std::string fname = Path("LOCK");
  std::unique_ptr<FileLock> lock, lock2;
  ASSERT_TRUE(env_->LockFile(fname, &lock).ok());
  ASSERT_NE(lock, nullptr);
  EXPECT_TRUE(env_->FileExists(fname));

  Status s = env_->LockFile(fname, &lock2);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(fname), std::string::npos) << s.ToString();
  EXPECT_EQ(lock2, nullptr);

  // Another lock file is independent.
  std::unique_ptr<FileLock> other;
  ASSERT_TRUE(env_->LockFile(Path("LOCK2"), &other).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(other)).ok());

  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
  ASSERT_TRUE(env_->LockFile(fname, &lock2).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(lock2)).ok());
}

TEST_P(EnvTest, Clock) {
  uint64_t a = env_->NowMicros();
  env_->SleepForMicroseconds(2000);
  uint64_t b = env_->NowMicros();
  EXPECT_GE(b - a, 2000u);
}

INSTANTIATE_TEST_SUITE_P(BothEnvs, EnvTest, testing::Values(EnvKind::kPosix, EnvKind::kMem),
                         KindName);

// POSIX only: the lock excludes another process, and survives a failed
// second attempt by this one (which must not open and close the file, since
// closing any descriptor drops an fcntl lock).
TEST(PosixEnvTest, LockExcludesOtherProcess) {
  char tmpl[] = "/tmp/lsm_env_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
  const std::string dir = tmpl;
  const std::string fname = dir + "/LOCK";
  Env* env = Env::Default();

  // Exit code 0: the child got the lock; 1: refused; 2: could not try.
  auto child_tries_lock = [&]() -> int {
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(fname.c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0) ::_exit(2);
      struct flock f;
      std::memset(&f, 0, sizeof(f));
      f.l_type = F_WRLCK;
      f.l_whence = SEEK_SET;
      ::_exit(::fcntl(fd, F_SETLK, &f) == 0 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  };

  std::unique_ptr<FileLock> lock, lock2;
  ASSERT_TRUE(env->LockFile(fname, &lock).ok());
  EXPECT_EQ(child_tries_lock(), 1);
  EXPECT_FALSE(env->LockFile(fname, &lock2).ok());
  EXPECT_EQ(child_tries_lock(), 1) << "a failed second LockFile released the lock";
  ASSERT_TRUE(env->UnlockFile(std::move(lock)).ok());
  EXPECT_EQ(child_tries_lock(), 0);

  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lsm
