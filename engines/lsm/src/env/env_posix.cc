// The POSIX Env: plain file descriptors, pread for random access, fcntl
// locks. Every error names the path and carries strerror(errno).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "lsm/env.h"

namespace lsm {

namespace {

constexpr size_t kWritableBufferSize = 64 * 1024;

Status PosixError(const std::string& context, int err) {
  return Status::IOError(context, std::strerror(err));
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  // Loops until n bytes or end of file so that a short result reliably means
  // end of file, as the interface promises.
  Status Read(size_t n, std::string_view* result, char* scratch) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, scratch + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = std::string_view();
        return PosixError("read " + fname_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) == static_cast<off_t>(-1)) {
      return PosixError("seek " + fname_, errno);
    }
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  // pread does not move a shared file offset, so concurrent readers need no
  // lock.
  Status Read(uint64_t offset, size_t n, std::string_view* result, char* scratch) const override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_, scratch + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = std::string_view();
        return PosixError("pread " + fname_ + " at offset " + std::to_string(offset + got),
                          errno);
      }
      if (r == 0) break;  // end of file: a short result
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd), buf_(new char[kWritableBufferSize]) {}

  ~PosixWritableFile() override {
    if (fd_ >= 0) Close();  // the error has nowhere to go
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status::IOError("append to closed file", fname_);
    // Fill the buffer as far as it goes; what no longer fits goes either into
    // the (then empty) buffer or, when large, straight to the OS so that a big
    // append costs one write and no copy.
    size_t n = std::min(data.size(), kWritableBufferSize - pos_);
    std::memcpy(buf_.get() + pos_, data.data(), n);
    pos_ += n;
    data.remove_prefix(n);
    if (data.empty()) return Status::OK();

    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (data.size() < kWritableBufferSize) {
      std::memcpy(buf_.get(), data.data(), data.size());
      pos_ = data.size();
      return Status::OK();
    }
    return WriteUnbuffered(data.data(), data.size());
  }

  Status Flush() override {
    if (fd_ < 0) return Status::IOError("flush of closed file", fname_);
    return FlushBuffer();
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IOError("sync of closed file", fname_);
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) return PosixError("fdatasync " + fname_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = FlushBuffer();
    if (::close(fd_) != 0 && s.ok()) s = PosixError("close " + fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  Status FlushBuffer() {
    Status s = WriteUnbuffered(buf_.get(), pos_);
    pos_ = 0;
    return s;
  }

  Status WriteUnbuffered(const char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ::write(fd_, p, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError("write " + fname_, errno);
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
    return Status::OK();
  }

  const std::string fname_;
  int fd_;
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0;  // bytes in buf_ not yet handed to the OS
};

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  const std::string& fname() const { return fname_; }
  int fd() const { return fd_; }

 private:
  const std::string fname_;
  const int fd_;
};

// fcntl locks are per process: a second F_SETLK by the same process succeeds,
// and closing any descriptor of the file drops the lock. This set makes a
// second LockFile in the same process fail before it opens the file.
class LockedPaths {
 public:
  bool Insert(const std::string& fname) {
    std::lock_guard<std::mutex> l(mu_);
    return paths_.insert(fname).second;
  }
  void Remove(const std::string& fname) {
    std::lock_guard<std::mutex> l(mu_);
    paths_.erase(fname);
  }

 private:
  std::mutex mu_;
  std::set<std::string> paths_;
};

int LockOrUnlock(int fd, bool lock) {
  struct flock f;
  std::memset(&f, 0, sizeof(f));
  f.l_type = lock ? F_WRLCK : F_UNLCK;
  f.l_whence = SEEK_SET;
  f.l_start = 0;
  f.l_len = 0;  // the whole file
  return ::fcntl(fd, F_SETLK, &f);
}

class PosixEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    int fd = OpenRetry(fname, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
      result->reset();
      return PosixError("open " + fname, errno);
    }
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    int fd = OpenRetry(fname, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
      result->reset();
      return PosixError("open " + fname, errno);
    }
    *result = std::make_unique<PosixRandomAccessFile>(fname, fd);
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, O_TRUNC, result);
  }

  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, O_APPEND, result);
  }

  bool FileExists(const std::string& fname) override { return ::access(fname.c_str(), F_OK) == 0; }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError("opendir " + dir, errno);
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        result->emplace_back(e->d_name);
      }
      errno = 0;
    }
    int err = errno;  // readdir returns nullptr both at the end and on error
    ::closedir(d);
    if (err != 0) return PosixError("readdir " + dir, err);
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError("unlink " + fname, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0) return Status::OK();
    int err = errno;
    if (err == EEXIST) {
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::OK();
      return Status::IOError("mkdir " + dir, "exists and is not a directory");
    }
    return PosixError("mkdir " + dir, err);
  }

  Status RemoveDir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return PosixError("rmdir " + dir, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) {
      *size = 0;
      return PosixError("stat " + fname, errno);
    }
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) {
      return PosixError("rename " + src + " to " + target, errno);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = OpenRetry(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return PosixError("open directory " + dir, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError("fsync directory " + dir, errno);
    ::close(fd);
    return s;
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    lock->reset();
    if (!locked_.Insert(fname)) {
      return Status::IOError("lock " + fname, "already held by this process");
    }
    int fd = OpenRetry(fname, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      int err = errno;
      locked_.Remove(fname);
      return PosixError("open " + fname, err);
    }
    if (LockOrUnlock(fd, true) != 0) {
      int err = errno;
      ::close(fd);
      locked_.Remove(fname);
      return PosixError("lock " + fname + " (held by another process?)", err);
    }
    *lock = std::make_unique<PosixFileLock>(fname, fd);
    return Status::OK();
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    auto* l = dynamic_cast<PosixFileLock*>(lock.get());
    if (l == nullptr) return Status::InvalidArgument("UnlockFile: not a lock of the POSIX Env");
    Status s;
    if (LockOrUnlock(l->fd(), false) != 0) s = PosixError("unlock " + l->fname(), errno);
    ::close(l->fd());
    locked_.Remove(l->fname());
    return s;
  }

  uint64_t NowMicros() override {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
  }

  void SleepForMicroseconds(uint64_t micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  static int OpenRetry(const std::string& fname, int flags, mode_t mode) {
    int fd;
    do {
      fd = ::open(fname.c_str(), flags, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
  }

  Status OpenWritable(const std::string& fname, int extra_flags,
                      std::unique_ptr<WritableFile>* result) {
    int fd = OpenRetry(fname, O_WRONLY | O_CREAT | O_CLOEXEC | extra_flags, 0644);
    if (fd < 0) {
      result->reset();
      return PosixError("open " + fname, errno);
    }
    *result = std::make_unique<PosixWritableFile>(fname, fd);
    return Status::OK();
  }

  LockedPaths locked_;
};

}  // namespace

Env* Env::Default() {
  // Leaked on purpose: background threads may still use it during static
  // destruction.
  static Env* const env = new PosixEnv;
  return env;
}

}  // namespace lsm
