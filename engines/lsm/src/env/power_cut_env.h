// PowerCutEnv: an Env wrapper that knows what a power cut would leave on the
// disk, for tests of what the engine promises when the machine loses power
// (the model of LevelDB's fault_injection_test and RocksDB's
// FaultInjectionTestFS). A SIGKILL cannot test this: the page cache outlives
// a killed process, not a lost power supply.
//
// The model of a POSIX filesystem after a power cut:
// - a file holds the bytes it had at its last Sync (its inode's data); the
//   bytes written after it are lost, or, with CutOptions::keep_unsynced, a
//   random prefix of them survives (the kernel may have written some back);
// - a directory holds the entries it had at its last SyncDir: a file created,
//   renamed or removed since then is back where it was (a file that was
//   replaced by a rename is back with its old inode), whatever its own syncs;
// - a directory created through this Env is an entry of its parent like a
//   file; directories that existed before (created outside) are durable.
// A truncating open (NewWritableFile of an existing name) makes a new inode:
// until the directory is synced the old one, with its synced bytes, may come
// back. Reads and writes go to the base Env, which holds the live state.
#ifndef LSM_SRC_ENV_POWER_CUT_ENV_H_
#define LSM_SRC_ENV_POWER_CUT_ENV_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "lsm/env.h"

namespace lsm {

// The disk after a cut: every surviving file's bytes, by path, and the
// directories created through the Env that survived.
struct DiskImage {
  std::map<std::string, std::string> files;
  std::set<std::string> dirs;

  uint64_t Bytes() const;
};

class PowerCutEnv final : public EnvWrapper {
 public:
  // The calls after which the disk can hold something new.
  enum class Event { kSync, kSyncDir };
  // Called just before each Sync and SyncDir takes effect, on the calling
  // thread, without the Env's lock: the latest moment at which the disk
  // still holds what the previous durable change left, the place to cut.
  using Hook = std::function<void(Event event, const std::string& path)>;

  struct CutOptions {
    bool keep_unsynced = false;  // a random prefix of each file's unsynced bytes survives
    uint64_t seed = 0;           // which prefix, with keep_unsynced
  };

  // base must outlive this Env, and this Env every file opened through it.
  explicit PowerCutEnv(Env* base);

  // Writes image into the base Env (which should hold none of its paths)
  // and counts it as durable: the disk a cut left, to reopen, and cut again.
  Status Restore(const DiskImage& image);

  // What the disk would hold if the power went now.
  DiskImage Cut(const CutOptions& options) const;
  DiskImage Cut() const { return Cut(CutOptions()); }

  // Replaces the hook (an empty one: none).
  void SetHook(Hook hook);

  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override;
  Status NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override;
  Status RemoveFile(const std::string& fname) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveDir(const std::string& dir) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;

  // A file's bytes, written and synced. Shared by the names that refer to
  // it (live and durable) and by its open writers.
  struct Inode {
    std::string data;    // guarded by PowerCutEnv::mu_
    uint64_t synced = 0; // guarded by PowerCutEnv::mu_: data[0, synced) is on the disk
  };

  // Used by the files this Env opens.
  void Appended(Inode* inode, std::string_view data);
  void BeforeSync(const std::string& fname);
  void Synced(Inode* inode);

 private:
  using OpenFunction = Status (Env::*)(const std::string&, std::unique_ptr<WritableFile>*);
  Status Open(const std::string& fname, std::unique_ptr<WritableFile>* r, OpenFunction open,
              bool truncate);
  void CallHook(Event event, const std::string& path);

  mutable std::mutex mu_;
  // Names as the running system sees them, and as the disk holds them.
  std::map<std::string, std::shared_ptr<Inode>> live_files_;     // guarded by mu_
  std::map<std::string, std::shared_ptr<Inode>> durable_files_;  // guarded by mu_
  std::set<std::string> live_dirs_;     // guarded by mu_: created through this Env
  std::set<std::string> durable_dirs_;  // guarded by mu_
  std::set<std::string> known_dirs_;    // guarded by mu_: ever created through this Env
  std::mutex hook_mu_;
  Hook hook_;  // guarded by hook_mu_ (copied out before the call)
};

}  // namespace lsm

#endif  // LSM_SRC_ENV_POWER_CUT_ENV_H_
