// Merge schedulers decide WHEN each created merge runs and so how the merge
// I/O budget is shared (Luo & Carey, Sec. 4 and 5.1.3-5.1.5): policies
// (engines/lsm/policy) decide WHAT to merge. A scheduler is pure code over
// the created merges; the engine applies its choice by pausing and resuming
// merges at input block boundaries.
#ifndef LSM_SCHED_SCHEDULER_H_
#define LSM_SCHED_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lsm/options.h"
#include "lsm/status.h"

namespace lsm::sched {

// What a scheduler sees of one created, not yet completed, merge.
struct MergeState {
  uint64_t id = 0;               // creation order: a smaller id was created earlier
  uint64_t remaining_bytes = 0;  // input bytes not yet consumed
  uint64_t total_bytes = 0;      // input bytes in total
  int output_level = 0;
  double score = 0;      // the policy's urgency (policy::MergeOp::score)
  bool running = false;  // selected by the previous decision
};

// What a scheduler sees of the client and the component constraint, for
// schedulers that adapt to the workload (idle). The others ignore it.
struct SchedulerContext {
  // User bytes written per second over the last probe window (0 when the
  // engine does not measure it: only for schedulers that ask, see
  // RecheckIntervalMicros).
  double client_write_bytes_per_sec = 0;
  // Time since the last acknowledged write; UINT64_MAX when there was none.
  uint64_t micros_since_last_write = UINT64_MAX;
  // The component count is at or within one component of the constraint
  // (or writes already stop): merges must run now, whatever the workload.
  bool constraint_pressure = false;
};

class MergeScheduler {
 public:
  virtual ~MergeScheduler() = default;
  virtual const char* Name() const = 0;
  // The ids of the merges that run now; the others wait (paused at a block
  // boundary, or not started). Called whenever a merge is created or
  // completes, and every RecheckIntervalMicros() when that is nonzero.
  // Must select at least one merge when there are any, so that merges always
  // make progress -- except `idle`, which may select none while the client
  // writes, but never under constraint_pressure (so writers cannot stall
  // forever) and only while its RecheckIntervalMicros() > 0 guarantees a
  // later re-decision without any merge event.
  virtual std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                              const SchedulerContext& context) const = 0;
  // Nonzero: the decision depends on time (the client's write rate), so the
  // engine must measure the context and call SelectRunning again at least
  // this often even without merge events. 0 (the default): merge events
  // alone change the decision, and the engine pays nothing extra.
  virtual uint64_t RecheckIntervalMicros() const { return 0; }
  // The window over which client_write_bytes_per_sec is measured.
  virtual uint64_t ProbeWindowMicros() const { return 0; }
};

// The valid scheduler names, for error messages.
std::vector<std::string> SchedulerNames();

// The valid values of Options::idle_mode.
std::vector<std::string> IdleModeNames();

// The scheduler options.merge_scheduler names, with its parameters from
// options (greedy_k, idle_*). InvalidArgument, naming every bad option, when
// CheckOptions(options) fails.
Status NewMergeScheduler(const Options& options, std::unique_ptr<MergeScheduler>* scheduler);

// The same for options CheckOptions has accepted (see NewCheckedMergePolicy).
std::unique_ptr<MergeScheduler> NewCheckedMergeScheduler(const Options& checked);

}  // namespace lsm::sched

#endif  // LSM_SCHED_SCHEDULER_H_
