// lsm-sim's core: runs a merge policy of engines/lsm/policy (the very code the
// engine runs) over a sequence of flushes, in the model of Mao et al. Sec.
// IV: a merge writes the sum of its inputs (less an optional obsolete
// fraction, a crude stand-in for updates and deletes), and write
// amplification = bytes written by flushes and merges / bytes flushed.
//
// Two models of time:
// - instant (bandwidth 0, the paper's): every merge completes at once; the
//   policy is asked after the flush and after each merge until it proposes
//   nothing.
// - timed: the memtable fills at arrival_rate bytes/s, a merge needs its
//   input bytes / bandwidth seconds, merges share the bandwidth as the chosen
//   scheduler (engines/lsm/sched, the engine's own) decides, flushes take no
//   time, the policy is asked after every flush and every completed merge (as
//   the engine does), and writes stall while more components exist than the
//   constraint allows (the policy's DefaultMaxComponents unless given).
//
// Not thread-safe; one Simulator per thread.
#ifndef LSM_SIM_SIMULATOR_H_
#define LSM_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lsm/status.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm::sim {

// The timed model: merges take time and share a bandwidth as the engine's
// scheduler (engine.merge_scheduler, greedy_k) decides; writes stall above
// engine.max_components (0: the policy's default).
struct TimeModel {
  double bandwidth = 0;     // merge bytes/s; 0: the instant model
  double arrival_rate = 0;  // bytes/s into the memtable; > 0 when bandwidth is
};

struct SimOptions {
  // The engine's options (lsm/options.def): the policy and its parameters,
  // and for the timed model the scheduler and the constraint.
  Options engine;
  double obsolete_fraction = 0;  // in [0, 1): share of a merge's input dropped
  TimeModel time;
};

// One merge applied: flush = the flushes so far when it completed.
struct Decision {
  uint64_t flush = 0;
  double time_s = 0;          // completion time (timed model), else 0
  uint64_t first = 0;         // stack position of its oldest input
  uint64_t inputs = 0;        // number of input components
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
};

// The state after some flushes.
struct Checkpoint {
  uint64_t flushes = 0;
  double write_amp = 0;       // (bytes_flushed + bytes_merged) / bytes_flushed
  double avg_sstables = 0;    // mean of `sstables` over flushes 1..flushes
  uint64_t sstables = 0;      // count after the last flush's decision is applied
  uint64_t bytes_flushed = 0;
  uint64_t bytes_merged = 0;  // merge output bytes
  uint64_t merges = 0;
  // Timed model only.
  double time_s = 0;          // time of the last flush
  double stall_s = 0;         // time writes were stopped by the constraint
  uint64_t max_sstables = 0;  // most components that ever existed at once
};

class Simulator {
 public:
  // InvalidArgument naming the bad parameter.
  static Status Create(const SimOptions& options, std::unique_ptr<Simulator>* sim);
  ~Simulator();

  // One flush of `bytes` (>= 1). Fails only on a policy that breaks its
  // contract or, in the timed model, a stack stuck over the constraint.
  Status Flush(uint64_t bytes);

  // Timed model: completes every merge in flight (time passes, writes do
  // not stall). Checkpoints count completed merges only, so this makes a
  // timed run comparable with an instant one. A no-op in the instant model.
  Status Drain();

  Checkpoint Now() const;

  // Called for every merge applied (optional; costs a little speed).
  void set_decision_observer(std::function<void(const Decision&)> observer) {
    observer_ = std::move(observer);
  }

  const policy::Snapshot& snapshot() const { return snap_; }
  const policy::MergePolicy& merge_policy() const { return *policy_; }

 private:
  struct Inflight {
    policy::MergeOp op;
    uint64_t id;             // scheduler id, creation order
    uint64_t output_id;      // allocated at creation, like the engine's file number
    uint64_t total_bytes;
    double remaining_bytes;
  };

  Simulator(const SimOptions& options, std::unique_ptr<policy::MergePolicy> policy,
            std::unique_ptr<sched::MergeScheduler> scheduler);

  void PushFlush(uint64_t bytes);
  // Replaces op's inputs by one component; InvalidArgument if they are not a
  // contiguous run of the stack.
  Status Apply(const policy::MergeOp& op, uint64_t output_id);
  Status FlushInstant(uint64_t bytes);
  Status FlushTimed(uint64_t bytes);
  Status PickTimed();
  void Schedule();
  double NextCompletion() const;  // seconds until the first running merge ends
  Status Advance(double dt);      // progress running merges, complete finished ones
  uint64_t Limit() const;
  void RecordFlush(uint64_t settled);

  const SimOptions options_;
  const std::unique_ptr<policy::MergePolicy> policy_;
  const std::unique_ptr<sched::MergeScheduler> scheduler_;
  policy::Snapshot snap_;
  uint64_t next_id_ = 1;
  uint64_t next_merge_id_ = 1;
  uint64_t bytes_flushed_ = 0;
  uint64_t bytes_merged_ = 0;
  uint64_t merges_ = 0;
  uint64_t sstables_ = 0;
  uint64_t sstables_sum_ = 0;
  double now_ = 0;
  double stall_ = 0;
  uint64_t max_sstables_ = 0;
  std::vector<Inflight> inflight_;
  std::vector<uint64_t> running_;  // scheduler ids of the running merges
  std::function<void(const Decision&)> observer_;
};

}  // namespace lsm::sim

#endif  // LSM_SIM_SIMULATOR_H_
