#ifndef LSM_SRC_DB_DB_IMPL_H_
#define LSM_SRC_DB_DB_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/manifest.h"
#include "db/memtable.h"
#include "db/merge_control.h"
#include "db/merge_job.h"
#include "db/version.h"
#include "env/io_budget.h"
#include "log/log_format.h"
#include "lsm/db.h"
#include "lsm/listener.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm {

// Merges are decided and run by MergeControl, for which DBImpl is the host:
// it builds and installs their outputs.
class DBImpl final : public DB, private MergeControl::Host {
 public:
  DBImpl(const Options& options, std::string dir, std::unique_ptr<policy::MergePolicy> policy,
         std::unique_ptr<sched::MergeScheduler> scheduler);
  ~DBImpl() override;

  // DB::Open, returning the implementation (datasets drive their trees
  // through the methods below).
  static Status OpenImpl(const Options& options, const std::string& dir,
                         std::unique_ptr<DBImpl>* db);

  // Recovers the directory's state and starts the background threads.
  Status Recover();

  // Flush in two halves, so that a dataset can switch every tree's memtable
  // while its writers wait and then let them go on during the flushes:
  // SwitchForFlush makes the active memtable immutable (it waits only as a
  // write would, for a free memory component or the component constraint)
  // and names it; WaitForFlush waits until it is a disk component.
  Status SwitchForFlush(std::shared_ptr<MemTable>* target);
  Status WaitForFlush(const std::shared_ptr<MemTable>& target);

  Status Put(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;
  Status Get(std::string_view key, std::string* value) override;
  std::unique_ptr<Iterator> NewIterator() override;
  Status Flush() override;
  Status WaitForIdle() override;
  Stats GetStats() const override;

 private:
  // What readers need, swapped as a whole when memtables or the component
  // stack change, so a reader takes one reference under the mutex.
  struct SuperVersion {
    std::shared_ptr<MemTable> mem;
    std::vector<std::shared_ptr<MemTable>> imms;  // newest first
    std::shared_ptr<const Version> version;
  };

  // A write waiting in the queue; the front writer commits a group.
  struct Writer {
    ValueType type;
    std::string_view key;
    std::string_view value;
    bool force_flush = false;  // Flush(): switch the memtable, write nothing
    bool done = false;
    Status status;
    std::condition_variable cv;
  };

  // Decides whether a tombstone may be dropped: true when no component
  // older than the output can hold the key.
  using DropTombstone = std::function<bool(std::string_view key)>;

  Status Write(Writer* w);
  // REQUIRES: mu_ held by lock, w is the front writer.
  Status MakeRoomForWrite(std::unique_lock<std::mutex>& lock, bool force);
  Status SwitchMemTable();            // REQUIRES: mu_
  void InstallSuperVersion();         // REQUIRES: mu_
  std::shared_ptr<const SuperVersion> AcquireSuperVersion() const;
  uint64_t NewFileNumber() { return next_file_number_.fetch_add(1); }

  void FlushLoop();
  Status FlushMemTable(const std::shared_ptr<MemTable>& imm);

  // MergeControl::Host.
  Status RunMerge(MergeJob* job) override;
  void MergeEnded(const Status& s) override;  // REQUIRES: mu_
  bool HasBackgroundError() const override { return !bg_error_.ok(); }  // REQUIRES: mu_
  uint64_t UserBytesWritten() const override {
    return counters_.user_bytes.load(std::memory_order_relaxed);
  }

  // Writes the entries of `input` to a new component file. meta->number stays
  // 0 when nothing survived (every entry was a dropped tombstone). job may be
  // null (flush); a merge checks it for pause/cancel at block boundaries.
  // expected_entries sizes the Bloom filter (a guess is fine); the result
  // records flushed_entries (ComponentMeta::flushed_entries).
  Status BuildComponent(InternalIterator* input, uint64_t expected_entries,
                        uint64_t flushed_entries, int level, const DropTombstone& drop,
                        MergeJob* job, ComponentPtr* result);
  // The same, split into files of about max_file_bytes (0: one file), which
  // share flushed_entries by their entries; no file is left behind on failure.
  Status BuildComponents(InternalIterator* input, uint64_t expected_entries,
                         uint64_t flushed_entries, int level, uint64_t max_file_bytes,
                         const DropTombstone& drop, MergeJob* job,
                         std::vector<ComponentPtr>* results);
  Status OpenComponent(const ComponentMeta& meta, ComponentPtr* result);
  static DropTombstone MakeDropTombstone(std::vector<ComponentPtr> older);

  // Records the new stack in the manifest and installs it.
  // REQUIRES: manifest_mu_ held, mu_ held by lock (released during I/O).
  // `flushed` is the memtable whose component is being added (it leaves
  // imms_ in the same step), or null for a merge.
  Status LogAndApply(std::unique_lock<std::mutex>& lock, std::vector<ComponentPtr> new_stack,
                     std::vector<ComponentMeta> added, const std::shared_ptr<MemTable>& flushed);
  // Tells merge control the stack changed: it recomputes the constraint and
  // creates and schedules the merges the policy picks. REQUIRES: mu_
  void ScheduleMerges();
  // Partitioned policies: each level's files together, deepest level first.
  static void SortByLevelBlock(std::vector<ComponentPtr>* stack);
  void UpdateComponentStats();  // REQUIRES: mu_
  Status RecoverWal(uint64_t wal_number, std::vector<ComponentPtr>* stack);
  // Removes unreferenced components, WALs below min_wal, other manifests and
  // temporary files.
  void RemoveObsoleteFiles(const std::vector<ComponentPtr>& stack, uint64_t keep_manifest,
                           uint64_t min_wal);
  void SetBackgroundError(const Status& s);  // REQUIRES: mu_

  const Options options_;
  // The budget wrapper outlives every file the engine opens through it.
  std::shared_ptr<IoBudget> io_budget_;
  std::unique_ptr<Env> budget_env_;
  Env* env_;  // options_.env (or the default), wrapped by budget_env_ when set
  const std::string dir_;
  std::unique_ptr<FileLock> dir_lock_;
  TableOptions table_options_;

  // Serializes changes of the component stack (flush and merge installs),
  // held across the manifest write. Lock order: manifest_mu_, then mu_.
  std::mutex manifest_mu_;
  std::unique_ptr<ManifestWriter> manifest_;  // guarded by manifest_mu_

  mutable std::mutex mu_;
  std::condition_variable flush_cv_;  // flush thread: an immutable memtable waits
  std::condition_variable bg_cv_;     // writers/waiters: background work finished
  std::deque<Writer*> writers_;       // guarded by mu_
  std::shared_ptr<MemTable> mem_;     // guarded by mu_ (switched only by the front writer)
  std::vector<std::shared_ptr<MemTable>> imms_;  // guarded by mu_; newest first
  std::shared_ptr<const Version> version_;      // guarded by mu_
  std::shared_ptr<const SuperVersion> super_version_;  // guarded by mu_
  std::unique_ptr<WritableFile> wal_file_;      // owned by the front writer
  std::unique_ptr<log::Writer> wal_;            // owned by the front writer
  // wal=sync: whether wal_file_'s directory entry is durable. A write
  // synced into a log whose name a power cut can take is not durable.
  bool wal_entry_synced_ = true;                // owned by the front writer
  // The policy, the scheduler and the merges; its state is guarded by mu_
  // too. Declared after mu_, which its destructor may lock.
  std::unique_ptr<MergeControl> merge_control_;
  bool flushing_ = false;                              // guarded by mu_
  bool shutting_down_ = false;                         // guarded by mu_
  Status bg_error_;                                    // guarded by mu_

  std::atomic<uint64_t> next_file_number_{1};
  std::atomic<uint64_t> last_seq_{0};  // the newest seq visible to readers
  std::string wal_record_;             // owned by the front writer
  std::vector<Writer*> group_;         // owned by the front writer: the group it commits

  // Counters for GetStats: atomics or stats_mu_, never mu_, so that
  // GetStats never waits on the write path.
  struct Counters {
    std::atomic<uint64_t> puts{0}, deletes{0}, gets{0}, user_bytes{0};
    std::atomic<uint64_t> flushes{0}, flush_bytes{0};
    std::atomic<uint64_t> sstables_after_flush{0};  // sum over flushes, see Stats
    std::atomic<uint64_t> merges{0}, merge_bytes_read{0}, merge_bytes_written{0};
    std::atomic<uint64_t> merge_stalls{0}, merge_stall_micros{0};
    std::atomic<uint64_t> memory_stalls{0}, memory_stall_micros{0};
    std::atomic<uint64_t> slowdowns{0}, slowdown_micros{0};
  };
  Counters counters_;
  // Lock order: mu_, then stats_mu_, then merge control's stats mutex.
  mutable std::mutex stats_mu_;
  // guarded by stats_mu_: the component part of Stats, and the background
  // error as text (GetStats must not take mu_ to read bg_error_)
  Stats component_stats_;
  // guarded by stats_mu_: the write stall in progress (0: none), so that GetStats counts it
  // up to now -- a snapshot taken during a long stall would otherwise see none of it, and a
  // window's stall time would depend on where the stall ended.
  uint64_t stall_begin_micros_ = 0;
  bool stall_is_merge_ = false;

  std::thread flush_thread_;
};

}  // namespace lsm

#endif  // LSM_SRC_DB_DB_IMPL_H_
