// MergeControl decides and runs merges: the policy picks them from the
// component stack, the scheduler decides which of them run, each runs on a
// thread of its own, and the component constraint tells writers when to stop
// or slow down. The DB (its Host) builds and installs the outputs and tells
// MergeControl when the stack changed.
#ifndef LSM_SRC_DB_MERGE_CONTROL_H_
#define LSM_SRC_DB_MERGE_CONTROL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/merge_job.h"
#include "db/version.h"
#include "lsm/env.h"
#include "lsm/options.h"
#include "lsm/stats.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm {

class MergeControl {
 public:
  // What MergeControl needs from the engine that owns it.
  class Host {
   public:
    virtual ~Host() = default;
    // Builds the job's outputs and installs them. Called on the merge's
    // thread without the mutex, once the scheduler first selects the job.
    virtual Status RunMerge(MergeJob* job) = 0;
    // A merge thread is done with its job; s is why it failed (OK when it
    // succeeded, or failed during shutdown). REQUIRES: mu held.
    virtual void MergeEnded(const Status& s) = 0;
    // No merge is created, nor rescheduled by the timer, after a background
    // error. REQUIRES: mu held.
    virtual bool HasBackgroundError() const = 0;
    // User bytes written so far, for the idle scheduler's write rate.
    virtual uint64_t UserBytesWritten() const = 0;
  };

  // What a writer must do before it may go on.
  struct WriteAdmission {
    bool stop = false;             // wait until a merge or flush ends, then ask again
    uint64_t slowdown_micros = 0;  // else sleep this long, once per write
  };

  // mu is the engine's mutex: it guards MergeControl's state too (marked
  // REQUIRES: mu), and is what merge and timer threads lock. host and mu
  // must outlive this object.
  MergeControl(const Options& options, std::unique_ptr<policy::MergePolicy> policy,
               std::unique_ptr<sched::MergeScheduler> scheduler, Env* env, std::mutex* mu,
               Host* host);
  // Shuts down and joins the threads if the owner did not.
  ~MergeControl();
  MergeControl(const MergeControl&) = delete;
  MergeControl& operator=(const MergeControl&) = delete;

  bool partitioned() const { return policy_->Partitioned(); }

  // InvalidArgument, naming dir, when the policy cannot work on the
  // recovered stack.
  Status CheckStackShape(const std::vector<ComponentPtr>& stack, const std::string& dir) const;
  // Partitioned policies continue round robin where the recovered manifest
  // left it; the others ignore it. Before Opened.
  void RestoreCursor(std::vector<std::string> cursor);
  // What the manifest records, per level (policy::Snapshot). REQUIRES: mu
  // held, or before Opened.
  const std::vector<std::string>& round_robin_cursor() const { return round_robin_cursor_; }

  // The engine opened: takes the first write sample and starts the idle
  // timer, for a scheduler that asks for rechecks. Call StackInstalled next.
  // REQUIRES: mu held.
  void Opened();
  // A new component stack is in place (open, a flush or a merge installed):
  // recomputes the constraint, creates the merges the policy picks and
  // re-decides which run. False when merges are halted (shutdown or a
  // background error): then only the constraint was recomputed.
  // REQUIRES: mu held.
  bool StackInstalled(const std::vector<ComponentPtr>& stack, uint64_t flushes);

  // May a writer go on? flush_pending: a memtable waits for or is in a flush
  // (whose end, like a merge's, lowers the count). REQUIRES: mu held.
  WriteAdmission AdmitWrite(bool flush_pending) const;
  // Created merges that are not done yet. REQUIRES: mu held.
  bool HasMerges() const { return !merges_.empty(); }
  // The component count once the created merges complete, from `components`
  // now (Stats::average_sstables). REQUIRES: mu held.
  uint64_t ComponentsAfterMerges(uint64_t components) const;
  // The constraint in force and the count it bounds (Stats::max_components,
  // Stats::constrained_components). REQUIRES: mu held.
  uint64_t max_components() const { return constraint_.limit; }
  uint64_t constrained_count() const { return constraint_.count; }
  // Adds the merges pending and running, and the running ones' remaining
  // input bytes. Needs no mu, so stats never wait on the write path.
  void AddMergeStats(Stats* stats) const;

  // Cancels the merges (they stop at their next block boundary; their
  // inputs stay) and wakes the timer; no merge is created after it.
  // REQUIRES: mu held.
  void BeginShutdown();
  // Joins the timer and merge threads after BeginShutdown. REQUIRES: mu not
  // held.
  void JoinThreads();

 private:
  // The component constraint in force, and where the stack stands.
  struct Constraint {
    uint64_t limit = 0;      // at most this many components (global) or per level (local)
    uint64_t count = 0;      // what it bounds
    bool exceeded = false;   // writes stop
    bool slowdown = false;   // writes slow down
    // At or within one component of the limit: deferring merges could stall
    // writers, so the scheduler must run them.
    bool pressure = false;
  };

  policy::Snapshot PolicySnapshot(const std::vector<ComponentPtr>& stack, uint64_t flushes) const;
  void UpdateConstraint(const policy::Snapshot& snap);  // REQUIRES: mu
  // The components op names, in stack order; false when one is missing or
  // being merged, or (stack policies) they are not one contiguous run.
  bool ResolveMergeInputs(const std::vector<ComponentPtr>& stack, const policy::MergeOp& op,
                          std::vector<ComponentPtr>* inputs) const;
  // Each created merge runs on its own thread, which starts paused; the
  // scheduler decides which merges run (Reschedule).
  void StartMerge(std::shared_ptr<MergeJob> job);  // REQUIRES: mu
  void MergeThread(const std::shared_ptr<MergeJob>& job);
  void Reschedule();  // REQUIRES: mu
  // What the scheduler sees of the client and the constraint. REQUIRES: mu
  sched::SchedulerContext MakeSchedulerContext() const;
  // Only for a scheduler that asks to be rechecked (idle): records the write
  // counter for the rate window and re-decides, every RecheckIntervalMicros,
  // because deferral ends without any merge event.
  void TimerLoop();
  void SampleWrites();              // REQUIRES: mu
  void JoinFinishedMergeThreads();  // REQUIRES: mu

  const Options options_;
  const std::unique_ptr<policy::MergePolicy> policy_;
  const std::unique_ptr<sched::MergeScheduler> scheduler_;
  Env* const env_;
  std::mutex* const mu_;
  Host* const host_;

  std::vector<std::shared_ptr<MergeJob>> merges_;    // guarded by mu_; created, not done
  std::map<uint64_t, std::thread> merge_threads_;    // guarded by mu_; by merge id
  std::vector<std::thread> finished_merge_threads_;  // guarded by mu_; to be joined
  std::vector<std::thread> shutdown_threads_;        // BeginShutdown to JoinThreads
  uint64_t next_merge_id_ = 1;                       // guarded by mu_
  Constraint constraint_;                            // guarded by mu_
  // Partitioned policies: per level, the largest key of the last file a
  // merge took from it (policy::Snapshot::round_robin_cursor).
  std::vector<std::string> round_robin_cursor_;  // guarded by mu_
  bool shutting_down_ = false;                   // guarded by mu_

  // The jobs GetStats reads, without mu_. Lock order: mu_, then stats_mu_.
  mutable std::mutex stats_mu_;
  std::vector<std::shared_ptr<MergeJob>> stats_merges_;  // guarded by stats_mu_

  // The idle scheduler's view of the client; unused (and not updated) for
  // the other schedulers, which pay nothing for it.
  struct WriteSample {
    uint64_t micros;
    uint64_t user_bytes;
  };
  const bool track_writes_;                // the scheduler asks for rechecks
  std::deque<WriteSample> write_samples_;  // guarded by mu_; oldest first, ~6 entries
  // When a sample first saw the counter move: the last write, to the
  // timer's precision. 0: no write since Open.
  uint64_t last_write_micros_ = 0;  // guarded by mu_
  std::condition_variable timer_cv_;  // wakes TimerLoop for shutdown
  std::thread timer_thread_;          // only when track_writes_
};

}  // namespace lsm

#endif  // LSM_SRC_DB_MERGE_CONTROL_H_
