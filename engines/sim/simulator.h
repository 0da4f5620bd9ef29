// lsm-sim's core: runs a merge policy of engines/lsm/policy (the very code the
// engine runs) over a sequence of flushes, in the model of Mao et al. Sec.
// IV: a merge writes the sum of its inputs, and write amplification = bytes
// written by flushes and merges / bytes flushed. Two optional models of
// updates: an obsolete fraction (a merge drops a fixed share of its input,
// a crude stand-in), or a key space (writes update keys drawn uniformly from
// a fixed set of unique data, so a merge keeps one entry per key: see
// SimOptions::key_space_bytes).
//
// Two models of time:
// - instant (bandwidth 0, the paper's): every merge completes at once; the
//   policy is asked after the flush and after each merge until it proposes
//   nothing.
// - timed: the memtable fills at arrival_rate bytes/s, a merge needs its
//   input bytes / bandwidth seconds, merges share the bandwidth as the chosen
//   scheduler (engines/lsm/sched, the engine's own) decides, the policy is
//   asked after every flush and every completed merge (as the engine does),
//   and writes stall while more components exist than the constraint allows
//   (the policy's DefaultMaxComponents unless given). As in the engine, a
//   full memtable is flushed by one flush thread, its bytes written through
//   the bandwidth taking turns with the running merges (half each, as the
//   engine's flush and merge requests interleave in its I/O budget; see
//   FlushPriority), the new component joins the stack when its flush ends, and the
//   writer fills the next memtable meanwhile unless all
//   engine.memory_components are full (a memory stall); as in the engine, a
//   full memtable is not sealed while the stack is over the constraint.
//   With flush_time off, flushes take no time (the first version of the
//   model).
//
// Not thread-safe; one Simulator per thread.
#ifndef LSM_SIM_SIMULATOR_H_
#define LSM_SIM_SIMULATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "lsm/status.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm::sim {

// The timed model: merges take time and share a bandwidth as the engine's
// scheduler (engine.merge_scheduler, greedy_k) decides; writes stall above
// engine.max_components (0: the policy's default).
// How a flush shares the bandwidth with the merges running beside it.
enum class FlushPriority {
  kStrict,  // the flush takes all of it; merges wait (the I/O budget's queue order)
  kShared,  // the flush is one more writer, sharing evenly with the running merges
  // The flush and the merges take turns: half each while both write (the
  // merges share their half evenly). The default: the engine's flush thread
  // builds its next block between requests, so a waiting merge request goes
  // in between (measured: a flush at 8.5 of 16 MiB/s beside a merge), and
  // the merges created after a flush or merge are the engine's (the first
  // ones complete after the same flushes; strict, after twice as many).
  kAlternate,
};

struct TimeModel {
  double bandwidth = 0;     // flush and merge bytes/s; 0: the instant model
  double arrival_rate = 0;  // bytes/s into the memtable; > 0 when bandwidth is
  bool flush_time = true;   // flushes take their bytes' share of the bandwidth
  FlushPriority flush_priority = FlushPriority::kAlternate;
  // The writer's rate while it has a backlog (bytes/s, >= arrival_rate):
  // writes keep arriving during a stall and are written at this rate after
  // it, as the engine's open loop catches up. 0: arrival_rate (no catch-up:
  // a stall delays the arrivals, which is also the closed loop's model with
  // arrival_rate = the writer's rate).
  double write_rate = 0;
  // The most one flush, and one merge, can write per second whatever the
  // bandwidth (their threads' CPU: building blocks, filters, the merge's
  // comparisons); 0: no cap. A flush or merge under its cap leaves the
  // rest of the bandwidth to the others.
  double flush_rate = 0;
  double merge_rate = 0;
};

struct SimOptions {
  // The engine's options (lsm/options.def): the policy and its parameters,
  // and for the timed model the scheduler and the constraint.
  Options engine;
  double obsolete_fraction = 0;  // in [0, 1): share of a merge's input dropped
  // > 0: the unique data, in bytes, that every write after the load updates
  // (keys drawn uniformly; the load's flushes insert distinct keys). A
  // component then holds a uniform random share of the key space: a flush
  // of b bytes of writes keeps K(1 - e^(-b/K)) of them, and a merge keeps
  // K(1 - prod(1 - bytes_i/K)) -- the union of independent shares (exact
  // sums for merges of load components only, which hold disjoint keys).
  // 0: every write is a new key. Not with obsolete_fraction.
  double key_space_bytes = 0;
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
  int level = 0;              // its output level
};

// The state after some flushes. In the timed model with flush time,
// `flushes` counts the memtables sealed, of which `flushes_pending` are not
// flushed yet; the byte counts, write_amp and avg_sstables cover the
// completed flushes.
struct Checkpoint {
  uint64_t flushes = 0;
  double write_amp = 0;       // (bytes_flushed + bytes_merged) / bytes_flushed
  double avg_sstables = 0;    // mean of `sstables` over flushes 1..flushes
  uint64_t sstables = 0;      // count after the last flush's decision is applied
  uint64_t bytes_flushed = 0;
  uint64_t bytes_merged = 0;  // merge output bytes
  uint64_t merges = 0;
  uint64_t moves = 0;         // ... of which moved one component down (nothing written)
  // Timed model only.
  double time_s = 0;          // now: right after Flush(), when its memtable was sealed
  double stall_s = 0;         // time writes were stopped: constraint + memory
  double memory_stall_s = 0;  // ... of which waiting for a free memtable
  uint64_t max_sstables = 0;  // most components that ever existed at once
  uint64_t flushes_pending = 0;  // sealed memtables not yet flushed
  // Arrived writes not yet written, in seconds of arrivals: now and the most
  // at any memtable's sealing. Grows without bound when the rate is not
  // sustainable.
  double backlog_s = 0;
  double max_backlog_s = 0;
};

class Simulator {
 public:
  // InvalidArgument naming the bad parameter.
  static Status Create(const SimOptions& options, std::unique_ptr<Simulator>* sim);
  ~Simulator();

  // One flush of `bytes` (>= 1); in the timed model, the memtable of
  // `bytes` fills and is sealed (its flush may still be pending or running:
  // Checkpoint::flushes counts completed flushes). Fails only on a policy
  // that breaks its contract or, in the timed model, a stack stuck over the
  // constraint.
  Status Flush(uint64_t bytes);

  // A flush of the load that builds the starting tree: in the instant model
  // whatever the time model (the load's merges are done when the run starts,
  // as after a load phase that waited for them). Only before any Flush; the
  // counters (and Checkpoint::flushes) start after the last one.
  Status Load(uint64_t bytes);

  // Timed model: completes every pending flush and every merge in flight
  // (time passes, writes do not stall). Checkpoints count completed merges
  // only, so this makes a timed run comparable with an instant one. A no-op
  // in the instant model.
  Status Drain();

  Checkpoint Now() const;

  // Called for every merge applied (optional; costs a little speed).
  void set_decision_observer(std::function<void(const Decision&)> observer) {
    observer_ = std::move(observer);
  }

  const policy::Snapshot& snapshot() const { return snap_; }
  const policy::MergePolicy& merge_policy() const { return *policy_; }

 private:
  struct PendingFlush {
    uint64_t bytes;
    double remaining_bytes;
  };

  struct Inflight {
    policy::MergeOp op;
    uint64_t id;             // scheduler id, creation order
    uint64_t output_id;      // allocated at creation, like the engine's file number
    uint64_t total_bytes;
    double remaining_bytes;    // of its input
    double input_per_written;  // input bytes per byte written (> 1 with a key space)
  };

  Simulator(const SimOptions& options, std::unique_ptr<policy::MergePolicy> policy,
            std::unique_ptr<sched::MergeScheduler> scheduler);

  // The component a flush of `bytes` of writes makes (the load's: distinct keys).
  void PushFlush(uint64_t bytes, bool load = false);
  // Replaces op's inputs by one component; InvalidArgument if they are not a
  // contiguous run of the stack.
  Status Apply(const policy::MergeOp& op, uint64_t output_id);
  Status FlushInstant(uint64_t bytes);
  Status SettleInstant();  // applies the policy's merges until it proposes none
  bool IsLoadOnly(uint64_t id) const;
  // Key space: the bytes a merge of these components keeps (their union).
  uint64_t KeySpaceUnion(const std::vector<const policy::Component*>& inputs) const;
  Status FlushTimed(uint64_t bytes);
  Status PickTimed();
  Status PickRound(bool* moved);  // one PickMerges; moves are applied at once
  void Schedule();
  double NextCompletion() const;  // seconds until the first running merge ends
  // Seconds until the next flush or merge ends (the flush being written and
  // the running merges at their FlushRate and MergeRate).
  double NextEvent() const;
  double FlushRate() const;  // bytes/s of the flush being written now (0: none)
  double MergeRate() const;  // bytes/s of each running merge now (0: none run)
  Status Advance(double dt);      // progress the flush or the merges, complete what ends
  Status CompleteFlush(uint64_t bytes);  // its component joins the stack
  double BacklogSeconds() const;
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
  uint64_t moves_ = 0;
  uint64_t load_flushes_ = 0;
  uint64_t sstables_ = 0;
  uint64_t sstables_sum_ = 0;
  double now_ = 0;
  double stall_ = 0;
  double memory_stall_ = 0;
  double written_ = 0;  // bytes the writer put into memtables
  double max_backlog_s_ = 0;
  std::deque<PendingFlush> pending_flushes_;  // sealed memtables, oldest (being written) first
  uint64_t max_sstables_ = 0;
  std::vector<Inflight> inflight_;
  std::vector<uint64_t> running_;  // scheduler ids of the running merges
  std::function<void(const Decision&)> observer_;
  std::unordered_set<uint64_t> loaded_only_;  // ids of components holding load data only (key space)
};

}  // namespace lsm::sim

#endif  // LSM_SIM_SIMULATOR_H_
