// An Env whose files live in memory, for tests. Paths are plain strings; a
// directory exists if it was created with CreateDir or if a file lies under
// it, so tests need not create parents first; "/" and "." always exist. Open
// files hold their contents by shared_ptr: removing or replacing a name
// leaves readers with the old contents, as an unlinked inode does on POSIX.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "lsm/env.h"

namespace lsm {

namespace {

// One file's bytes. Appends and reads may run concurrently (a reader may
// open a file still being written), so the contents have their own lock.
class FileState {
 public:
  uint64_t Size() const {
    std::lock_guard<std::mutex> l(mu_);
    return data_.size();
  }

  // Copies into scratch: the string may reallocate under a later append.
  size_t Read(uint64_t offset, size_t n, char* scratch) const {
    std::lock_guard<std::mutex> l(mu_);
    if (offset >= data_.size()) return 0;
    size_t avail = std::min<uint64_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, avail);
    return avail;
  }

  void Append(std::string_view data) {
    std::lock_guard<std::mutex> l(mu_);
    data_.append(data.data(), data.size());
  }

 private:
  mutable std::mutex mu_;
  std::string data_;
};

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(std::shared_ptr<FileState> file) : file_(std::move(file)) {}

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    size_t got = file_->Read(pos_, n, scratch);
    pos_ += got;
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    pos_ = std::min(pos_ + n, file_->Size());
    return Status::OK();
  }

 private:
  std::shared_ptr<FileState> file_;
  uint64_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(std::shared_ptr<FileState> file) : file_(std::move(file)) {}

  Status Read(uint64_t offset, size_t n, std::string_view* result, char* scratch) const override {
    *result = std::string_view(scratch, file_->Read(offset, n, scratch));
    return Status::OK();
  }

 private:
  std::shared_ptr<FileState> file_;
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string fname, std::shared_ptr<FileState> file)
      : fname_(std::move(fname)), file_(std::move(file)) {}

  Status Append(std::string_view data) override {
    if (closed_) return Status::IOError("append to closed file", fname_);
    file_->Append(data);
    return Status::OK();
  }
  Status Flush() override { return Check("flush"); }
  Status Sync() override { return Check("sync"); }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }

 private:
  Status Check(const char* op) const {
    if (closed_) return Status::IOError(std::string(op) + " of closed file", fname_);
    return Status::OK();
  }

  const std::string fname_;
  std::shared_ptr<FileState> file_;
  bool closed_ = false;
};

class MemFileLock final : public FileLock {
 public:
  explicit MemFileLock(std::string fname) : fname_(std::move(fname)) {}
  const std::string& fname() const { return fname_; }

 private:
  const std::string fname_;
};

// "a/b/" and "a/b" name the same directory.
std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class MemEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    std::shared_ptr<FileState> f = Find(fname);
    if (f == nullptr) {
      result->reset();
      return NoSuchFile("open", fname);
    }
    *result = std::make_unique<MemSequentialFile>(std::move(f));
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    std::shared_ptr<FileState> f = Find(fname);
    if (f == nullptr) {
      result->reset();
      return NoSuchFile("open", fname);
    }
    *result = std::make_unique<MemRandomAccessFile>(std::move(f));
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override {
    std::lock_guard<std::mutex> l(mu_);
    if (dirs_.count(StripTrailingSlashes(fname)) != 0) {
      result->reset();
      return Status::IOError("open " + fname, "is a directory");
    }
    auto file = std::make_shared<FileState>();
    files_[fname] = file;
    *result = std::make_unique<MemWritableFile>(fname, std::move(file));
    return Status::OK();
  }

  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    std::lock_guard<std::mutex> l(mu_);
    if (dirs_.count(StripTrailingSlashes(fname)) != 0) {
      result->reset();
      return Status::IOError("open " + fname, "is a directory");
    }
    std::shared_ptr<FileState>& file = files_[fname];
    if (file == nullptr) file = std::make_shared<FileState>();
    *result = std::make_unique<MemWritableFile>(fname, file);
    return Status::OK();
  }

  bool FileExists(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    return files_.count(fname) != 0 || DirExistsLocked(StripTrailingSlashes(fname));
  }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dir);
    if (files_.count(d) != 0) return Status::IOError("opendir " + dir, "not a directory");
    if (!DirExistsLocked(d)) return NoSuchFile("opendir", dir);
    const std::string prefix = d == "/" ? d : d + "/";
    std::set<std::string> names;  // a subdirectory may be implied by many files
    auto add = [&](const std::string& path) {
      if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return;
      std::string rest = path.substr(prefix.size());
      names.insert(rest.substr(0, rest.find('/')));
    };
    for (auto it = files_.lower_bound(prefix); it != files_.end(); ++it) {
      if (it->first.compare(0, prefix.size(), prefix) != 0) break;
      add(it->first);
    }
    for (auto it = dirs_.lower_bound(prefix); it != dirs_.end(); ++it) {
      if (it->compare(0, prefix.size(), prefix) != 0) break;
      add(*it);
    }
    result->assign(names.begin(), names.end());
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.erase(fname) == 0) return NoSuchFile("unlink", fname);
    return Status::OK();
  }

  Status CreateDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dir);
    if (files_.count(d) != 0) {
      return Status::IOError("mkdir " + dir, "exists and is not a directory");
    }
    dirs_.insert(d);
    return Status::OK();
  }

  Status RemoveDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dir);
    if (!DirExistsLocked(d)) return NoSuchFile("rmdir", dir);
    if (HasEntriesLocked(d)) return Status::IOError("rmdir " + dir, "directory not empty");
    dirs_.erase(d);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    std::shared_ptr<FileState> f = Find(fname);
    if (f == nullptr) {
      *size = 0;
      return NoSuchFile("stat", fname);
    }
    *size = f->Size();
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(src);
    if (it == files_.end()) {
      if (DirExistsLocked(StripTrailingSlashes(src))) {
        return Status::NotSupported("rename " + src + " to " + target,
                                    "the mem Env renames files only");
      }
      return NoSuchFile("rename " + target + " from", src);
    }
    if (DirExistsLocked(StripTrailingSlashes(target))) {
      return Status::IOError("rename " + src + " to " + target, "target is a directory");
    }
    if (src == target) return Status::OK();
    // One assignment under the lock: no observer sees the target missing.
    files_[target] = std::move(it->second);
    files_.erase(src);
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!DirExistsLocked(StripTrailingSlashes(dir))) return NoSuchFile("open directory", dir);
    return Status::OK();
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    lock->reset();
    std::lock_guard<std::mutex> l(mu_);
    if (!locked_.insert(fname).second) {
      return Status::IOError("lock " + fname, "already held by this process");
    }
    std::shared_ptr<FileState>& file = files_[fname];  // created like O_CREAT would
    if (file == nullptr) file = std::make_shared<FileState>();
    *lock = std::make_unique<MemFileLock>(fname);
    return Status::OK();
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    auto* l = dynamic_cast<MemFileLock*>(lock.get());
    if (l == nullptr) return Status::InvalidArgument("UnlockFile: not a lock of the mem Env");
    std::lock_guard<std::mutex> g(mu_);
    if (locked_.erase(l->fname()) == 0) {
      return Status::IOError("unlock " + l->fname(), "not locked");
    }
    return Status::OK();
  }

  uint64_t NowMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void SleepForMicroseconds(uint64_t micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  static Status NoSuchFile(const std::string& op, const std::string& fname) {
    return Status::IOError(op + " " + fname, "No such file or directory");
  }

  std::shared_ptr<FileState> Find(const std::string& fname) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    return it == files_.end() ? nullptr : it->second;
  }

  // REQUIRES: mu_ held. d has no trailing slash.
  bool HasEntriesLocked(const std::string& d) const {
    const std::string prefix = d == "/" ? d : d + "/";
    auto f = files_.lower_bound(prefix);
    if (f != files_.end() && f->first.compare(0, prefix.size(), prefix) == 0) return true;
    auto s = dirs_.lower_bound(prefix);
    return s != dirs_.end() && s->compare(0, prefix.size(), prefix) == 0;
  }

  // REQUIRES: mu_ held. d has no trailing slash.
  bool DirExistsLocked(const std::string& d) const {
    return d == "/" || d == "." || dirs_.count(d) != 0 || HasEntriesLocked(d);
  }

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<FileState>> files_;  // guarded by mu_
  std::set<std::string> dirs_;                                // guarded by mu_
  std::set<std::string> locked_;                              // guarded by mu_
};

}  // namespace

std::unique_ptr<Env> NewMemEnv() { return std::make_unique<MemEnv>(); }

}  // namespace lsm
