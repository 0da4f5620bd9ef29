// Merge policies decide WHAT to merge: pure functions of a snapshot of the
// disk components. No threads, no I/O, deterministic, so that lsm-sim runs
// exactly the code the engine runs. Schedulers (engines/lsm/sched) decide
// WHEN and with how much I/O each created merge runs.
#ifndef LSM_POLICY_POLICY_H_
#define LSM_POLICY_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lsm/status.h"

namespace lsm::policy {

// What a policy sees of one disk component.
struct Component {
  uint64_t id = 0;       // unique; a larger id was created later
  int level = 0;         // 0 = flushed from memory
  uint64_t bytes = 0;    // file size
  uint64_t entries = 0;  // entries including tombstones
  std::string smallest;  // key range
  std::string largest;
  bool being_merged = false;  // an input of a merge that exists already
};

// The component stack, ordered by the age of its data: stack[0] holds the
// oldest data, stack.back() the newest (the last flush). A merge's output
// takes the place of its inputs, so the order never changes otherwise.
struct Snapshot {
  std::vector<Component> stack;
  uint64_t flushes = 0;  // flushes completed so far, this one included
};

// One merge to create. inputs are ids of a contiguous run of the stack,
// oldest first, none of them being_merged; the output replaces the run.
struct MergeOp {
  std::vector<uint64_t> inputs;
  int output_level = 0;
};

class MergePolicy {
 public:
  virtual ~MergePolicy() = default;
  virtual const char* Name() const = 0;
  // The merges to create now (possibly several, never two sharing an input).
  // Called after every flush and every completed merge.
  virtual std::vector<MergeOp> PickMerges(const Snapshot& snapshot) const = 0;
  // The global component constraint used when Options::max_components is 0.
  virtual uint64_t DefaultMaxComponents(const Snapshot& snapshot) const = 0;
  // The local constraint (components per level) used when
  // Options::max_components_per_level is 0 (Luo & Carey Sec. 5.1.1).
  virtual uint64_t DefaultMaxComponentsPerLevel() const = 0;
};

struct PolicyOptions {
  std::string name = "tiering";  // leveling | tiering | size-tiered
  double size_ratio = 0;         // 0: the policy's default
  uint64_t memtable_bytes = 32 << 20;  // level 0 capacity unit for leveling
  bool dynamic_level_sizes = false;
  int min_merge_components = 2;
  int max_merge_components = 10;
  bool merge_exact_min = false;
};

// The valid policy names, for error messages and --help.
std::vector<std::string> PolicyNames();

// InvalidArgument listing the valid names for an unknown name, or naming the
// parameter and its allowed range for a bad value.
Status NewMergePolicy(const PolicyOptions& options, std::unique_ptr<MergePolicy>* policy);

}  // namespace lsm::policy

#endif  // LSM_POLICY_POLICY_H_
