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

#include "lsm/status.h"

namespace lsm::sched {

// What a scheduler sees of one created, not yet completed, merge.
struct MergeState {
  uint64_t id = 0;               // creation order: a smaller id was created earlier
  uint64_t remaining_bytes = 0;  // input bytes not yet consumed
  uint64_t total_bytes = 0;      // input bytes in total
  int output_level = 0;
};

class MergeScheduler {
 public:
  virtual ~MergeScheduler() = default;
  virtual const char* Name() const = 0;
  // The ids of the merges that run now; the others wait (paused at a block
  // boundary, or not started). Called whenever a merge is created or
  // completes. Must select at least one merge when there are any, so that
  // merges always make progress.
  virtual std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges) const = 0;
};

struct SchedulerOptions {
  std::string name = "single";  // single | fair | greedy | greedy_k
  int greedy_k = 2;              // greedy_k: how many of the smallest merges run
};

// The valid scheduler names, for error messages.
std::vector<std::string> SchedulerNames();

// InvalidArgument listing the valid names for an unknown one, or naming a
// bad parameter.
Status NewMergeScheduler(const SchedulerOptions& options,
                         std::unique_ptr<MergeScheduler>* scheduler);

}  // namespace lsm::sched

#endif  // LSM_SCHED_SCHEDULER_H_
