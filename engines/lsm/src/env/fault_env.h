// FaultEnv: an Env wrapper that makes chosen I/O calls fail, for tests of
// what the engine does when the disk fails (the role of LevelDB's and
// RocksDB's fault-injection test Envs). One fault is armed at a time: the
// nth call of one operation, optionally on one kind of file, fails with
// ENOSPC or EIO; a failing write may first persist a prefix of its data (a
// short write); a fault may stay, like a full disk, until cleared.
#ifndef LSM_SRC_ENV_FAULT_ENV_H_
#define LSM_SRC_ENV_FAULT_ENV_H_

#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "lsm/env.h"

namespace lsm {

// The calls a fault can hit.
enum class FaultOp {
  kCreate,   // NewWritableFile, NewAppendableFile
  kWrite,    // WritableFile::Append
  kSync,     // WritableFile::Sync
  kRename,   // RenameFile; the file is the target
  kSyncDir,  // SyncDir; a directory is of no file kind, so only FaultFile::kAny matches
  kRemove,   // RemoveFile
};
inline constexpr int kNumFaultOps = static_cast<int>(FaultOp::kRemove) + 1;

// The kinds of file a fault can be limited to. The Env does not know the
// engine's file names: whoever creates it says which kind a path is.
enum class FaultFile { kAny, kWal, kTable, kManifest, kCurrent, kOther };

struct Fault {
  FaultOp op = FaultOp::kWrite;
  FaultFile file = FaultFile::kAny;
  uint64_t nth = 1;  // the nth matching call after Inject fails; 1 = the next one
  int error = ENOSPC;  // the errno the failure reports: ENOSPC or EIO
  // kWrite: the first half of the data reaches the file before the error.
  bool short_write = false;
  // Every matching call from the nth on fails until Clear (a full disk);
  // otherwise the fault fires once and disarms.
  bool until_cleared = false;
};

// "write", "sync", ...: the op's name, for test output.
const char* FaultOpName(FaultOp op);
// "write of WAL, call 3, ENOSPC, short write" and the like, for test output.
std::string DescribeFault(const Fault& fault);

class FaultEnv final : public EnvWrapper {
 public:
  using FileClassifier = std::function<FaultFile(const std::string& fname)>;

  // base must outlive this Env, and this Env every file opened through it.
  FaultEnv(Env* base, FileClassifier classify);

  // Arms fault, replacing the fault armed before (if any).
  void Inject(const Fault& fault);
  // Disarms: every call succeeds again (as far as the base Env lets it).
  void Clear();
  // Whether the armed fault has failed a call since Inject.
  bool fired() const;
  // Calls failed since construction.
  uint64_t faults_injected() const;

  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override;
  Status NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Status RemoveFile(const std::string& fname) override;

  // The verdict on one call: OK to go ahead, or the injected error, and
  // whether a write persists its first half before failing. Used by the
  // files this Env opens.
  struct Verdict {
    Status status;
    bool short_write = false;
  };
  Verdict Check(FaultOp op, FaultFile kind, const std::string& fname);

 private:
  using OpenFunction = Status (Env::*)(const std::string&, std::unique_ptr<WritableFile>*);
  // A creation, which may fail; the file it opens fails writes and syncs.
  Status OpenWritable(const std::string& fname, std::unique_ptr<WritableFile>* r,
                      OpenFunction open);

  const FileClassifier classify_;
  mutable std::mutex mu_;
  bool armed_ = false;       // guarded by mu_
  Fault fault_;              // guarded by mu_
  uint64_t matched_ = 0;     // guarded by mu_: matching calls since Inject
  bool fired_ = false;       // guarded by mu_
  uint64_t injected_ = 0;    // guarded by mu_
};

}  // namespace lsm

#endif  // LSM_SRC_ENV_FAULT_ENV_H_
