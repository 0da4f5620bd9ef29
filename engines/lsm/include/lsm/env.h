// Env: every file and clock access of the engine goes through this interface,
// so that rate limiting (the I/O budget) and fault injection can wrap it
// instead of touching the engine core. Env::Default() is POSIX; NewMemEnv()
// keeps files in memory for tests.
#ifndef LSM_INCLUDE_LSM_ENV_H_
#define LSM_INCLUDE_LSM_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/status.h"

namespace lsm {

// Reads a file front to back. Not thread-safe.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes. *result points into scratch (size >= n) or into
  // storage owned by the file; a short read means end of file.
  virtual Status Read(size_t n, std::string_view* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

// Positional reads. Safe for concurrent use by many threads.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset. *result points into scratch (size >= n) or
  // into storage owned by the file that lives as long as the file object.
  virtual Status Read(uint64_t offset, size_t n, std::string_view* result,
                      char* scratch) const = 0;
};

// Appends to a file. Not thread-safe. Implementations buffer; Flush() hands
// the buffer to the OS, Sync() makes it durable.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Status Flush() = 0;
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// A lock on a file, held until Env::UnlockFile.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname,
                                   std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(const std::string& fname,
                                     std::unique_ptr<RandomAccessFile>* result) = 0;
  // Creates or truncates.
  virtual Status NewWritableFile(const std::string& fname,
                                 std::unique_ptr<WritableFile>* result) = 0;
  // Opens for appending, creating if absent.
  virtual Status NewAppendableFile(const std::string& fname,
                                   std::unique_ptr<WritableFile>* result) = 0;

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries of dir, without "." and "..".
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* result) = 0;
  virtual Status RemoveFile(const std::string& fname) = 0;
  // OK if dir already exists as a directory; IOError naming the path if it
  // exists as something else.
  virtual Status CreateDir(const std::string& dir) = 0;
  virtual Status RemoveDir(const std::string& dir) = 0;
  virtual Status GetFileSize(const std::string& fname, uint64_t* size) = 0;
  // Atomically replaces target if it exists.
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status SyncDir(const std::string& dir) = 0;

  // An exclusive advisory lock so that two processes never open one DB.
  virtual Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) = 0;
  virtual Status UnlockFile(std::unique_ptr<FileLock> lock) = 0;

  // Monotonic clock in microseconds; only differences are meaningful.
  virtual uint64_t NowMicros() = 0;
  virtual void SleepForMicroseconds(uint64_t micros) = 0;
};

// An Env whose files live in memory (process lifetime of the returned
// object); the clock is the real one. For tests.
std::unique_ptr<Env> NewMemEnv();

// Forwards every call to another Env; subclass and override to wrap (I/O
// budget, fault injection).
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status NewSequentialFile(const std::string& f, std::unique_ptr<SequentialFile>* r) override {
    return target_->NewSequentialFile(f, r);
  }
  Status NewRandomAccessFile(const std::string& f,
                             std::unique_ptr<RandomAccessFile>* r) override {
    return target_->NewRandomAccessFile(f, r);
  }
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override {
    return target_->NewWritableFile(f, r);
  }
  Status NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override {
    return target_->NewAppendableFile(f, r);
  }
  bool FileExists(const std::string& f) override { return target_->FileExists(f); }
  Status GetChildren(const std::string& d, std::vector<std::string>* r) override {
    return target_->GetChildren(d, r);
  }
  Status RemoveFile(const std::string& f) override { return target_->RemoveFile(f); }
  Status CreateDir(const std::string& d) override { return target_->CreateDir(d); }
  Status RemoveDir(const std::string& d) override { return target_->RemoveDir(d); }
  Status GetFileSize(const std::string& f, uint64_t* s) override {
    return target_->GetFileSize(f, s);
  }
  Status RenameFile(const std::string& s, const std::string& t) override {
    return target_->RenameFile(s, t);
  }
  Status SyncDir(const std::string& d) override { return target_->SyncDir(d); }
  Status LockFile(const std::string& f, std::unique_ptr<FileLock>* l) override {
    return target_->LockFile(f, l);
  }
  Status UnlockFile(std::unique_ptr<FileLock> l) override {
    return target_->UnlockFile(std::move(l));
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  void SleepForMicroseconds(uint64_t m) override { target_->SleepForMicroseconds(m); }

 private:
  Env* target_;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_ENV_H_
