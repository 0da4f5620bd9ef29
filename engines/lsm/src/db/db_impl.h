#ifndef LSM_SRC_DB_DB_IMPL_H_
#define LSM_SRC_DB_DB_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/manifest.h"
#include "db/memtable.h"
#include "db/merge_job.h"
#include "db/version.h"
#include "env/io_budget.h"
#include "log/log_format.h"
#include "lsm/db.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm {

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dir, std::unique_ptr<policy::MergePolicy> policy,
         std::unique_ptr<sched::MergeScheduler> scheduler);
  ~DBImpl() override;

  // Recovers the directory's state and starts the background threads.
  Status Recover();

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
  // Each created merge runs on its own thread, which starts paused; the
  // scheduler decides which merges run (Reschedule).
  void StartMerge(std::shared_ptr<MergeJob> job);  // REQUIRES: mu_
  void MergeThread(const std::shared_ptr<MergeJob>& job);
  void Reschedule();                // REQUIRES: mu_
  // What the scheduler sees of the client and the constraint. REQUIRES: mu_
  sched::SchedulerContext MakeSchedulerContext() const;
  // Only for a scheduler that asks to be rechecked (idle): records the write
  // counter for the rate window and re-decides, every RecheckIntervalMicros,
  // because deferral ends without any merge event.
  void TimerLoop();
  void SampleWrites();  // REQUIRES: mu_
  void JoinFinishedMergeThreads();  // REQUIRES: mu_
  Status RunMerge(MergeJob* job);
  // Writes the entries of `input` to a new component file. meta->number stays
  // 0 when nothing survived (every entry was a dropped tombstone). job may be
  // null (flush); a merge checks it for pause/cancel at block boundaries.
  // expected_entries sizes the Bloom filter (a guess is fine).
  Status BuildComponent(InternalIterator* input, uint64_t expected_entries, int level,
                        const DropTombstone& drop, MergeJob* job, ComponentPtr* result);
  // The same, split into files of about max_file_bytes (0: one file); no
  // file is left behind on failure.
  Status BuildComponents(InternalIterator* input, uint64_t expected_entries, int level,
                         uint64_t max_file_bytes, const DropTombstone& drop, MergeJob* job,
                         std::vector<ComponentPtr>* results);
  Status OpenComponent(const ComponentMeta& meta, ComponentPtr* result);
  static DropTombstone MakeDropTombstone(std::vector<ComponentPtr> older);

  // Records the new stack in the manifest and installs it.
  // REQUIRES: manifest_mu_ held, mu_ held by lock (released during I/O).
  // `flushed` is the memtable whose component is being added (it leaves
  // imms_ in the same step), or null for a merge.
  Status LogAndApply(std::unique_lock<std::mutex>& lock, std::vector<ComponentPtr> new_stack,
                     std::vector<ComponentMeta> added, const std::shared_ptr<MemTable>& flushed);
  // Asks the policy for merges and queues them. REQUIRES: mu_
  void ScheduleMerges();
  // The components op names, in stack order; false when one is missing or
  // being merged, or (stack policies) they are not one contiguous run.
  // REQUIRES: mu_
  bool ResolveMergeInputs(const policy::MergeOp& op, std::vector<ComponentPtr>* inputs) const;
  // Partitioned policies: each level's files together, deepest level first.
  static void SortByLevelBlock(std::vector<ComponentPtr>* stack);
  // Recomputes the component constraint and whether writes must stop or slow
  // down. REQUIRES: mu_
  void UpdateConstraint(const policy::Snapshot& snap);
  policy::Snapshot PolicySnapshot() const;  // REQUIRES: mu_
  void UpdateComponentStats();              // REQUIRES: mu_
  Status RecoverWal(uint64_t wal_number, std::vector<ComponentPtr>* stack);
  // InvalidArgument when the policy cannot work on the recovered stack.
  Status CheckStackShape(const std::vector<ComponentPtr>& stack) const;
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
  const std::unique_ptr<policy::MergePolicy> policy_;
  const std::unique_ptr<sched::MergeScheduler> scheduler_;
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
  std::vector<std::shared_ptr<MergeJob>> merges_;      // guarded by mu_; created, not done
  std::map<uint64_t, std::thread> merge_threads_;      // guarded by mu_; by merge id
  std::vector<std::thread> finished_merge_threads_;    // guarded by mu_; to be joined
  uint64_t max_components_ = 0;                        // guarded by mu_: the bound in force
  uint64_t constrained_count_ = 0;                     // guarded by mu_: what it bounds
  bool constraint_exceeded_ = false;                   // guarded by mu_: writes stop
  bool slowdown_exceeded_ = false;                     // guarded by mu_: writes slow down
  // At or within one component of the constraint: deferring merges could
  // stall writers, so the scheduler must run them.
  bool constraint_pressure_ = false;                   // guarded by mu_
  uint64_t next_merge_id_ = 1;                         // guarded by mu_
  // Partitioned policies: per level, the largest key of the last file a
  // merge took from it (policy::Snapshot::round_robin_cursor).
  std::vector<std::string> round_robin_cursor_;        // guarded by mu_
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
  mutable std::mutex stats_mu_;
  Stats component_stats_;  // guarded by stats_mu_: the component/merge part of Stats
  std::vector<std::shared_ptr<MergeJob>> stats_merges_;  // guarded by stats_mu_

  // The idle scheduler's view of the client; unused (and not updated) for
  // the other schedulers, which pay nothing for it.
  struct WriteSample {
    uint64_t micros;
    uint64_t user_bytes;
  };
  const bool track_writes_;  // the scheduler asks for rechecks
  std::deque<WriteSample> write_samples_;  // guarded by mu_; oldest first, ~6 entries
  // When a sample first saw the counter move: the last write, to the
  // timer's precision. 0: no write since Open.
  uint64_t last_write_micros_ = 0;  // guarded by mu_
  std::condition_variable timer_cv_;            // wakes TimerLoop for shutdown

  std::thread flush_thread_;
  std::thread timer_thread_;  // only when track_writes_
};

}  // namespace lsm

#endif  // LSM_SRC_DB_DB_IMPL_H_
