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
  // Partitioned policies only: per level (index = level), the largest key of
  // the last file a merge took from that level ("" = none yet), so that the
  // next merge takes the file after it (LevelDB's compact pointer). The
  // engine keeps it; it is not persisted across Open.
  std::vector<std::string> round_robin_cursor;
};

// One merge to create, never two sharing an input.
// - Stack policies (Partitioned() false): inputs are ids of a contiguous run
//   of the stack, oldest first; the one output replaces the run.
// - Partitioned policies: inputs are ids in stack order, not necessarily
//   contiguous (the source files plus the overlapping files of the output
//   level); the outputs, split every max_output_bytes, join the output
//   level's block of the stack.
struct MergeOp {
  std::vector<uint64_t> inputs;
  int output_level = 0;
  uint64_t max_output_bytes = 0;  // 0: one output component
  // How urgent the merge is (LevelDB's score: >= 1 means the source level is
  // full); schedulers that order by urgency (leveldb) read it. 0 when the
  // policy does not rank its merges.
  double score = 0;
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
  // True when levels >= 1 are range-partitioned into many files (see
  // MergeOp): the stack is then kept ordered by level block, deepest first,
  // level 0 last and oldest first.
  virtual bool Partitioned() const { return false; }
  // The count the component constraint applies to: every disk component
  // (global), or the most components in one level (local). A partitioned
  // level is one sorted run and counts once.
  virtual uint64_t ConstrainedCount(const Snapshot& snapshot, bool local) const;
  // Called at open, before any merge: InvalidArgument, naming `dir`, when
  // the stack was written in a shape this policy would merge wrongly
  // (another policy wrote it). Stack policies accept any stack.
  virtual Status CheckStackShape(const Snapshot& snapshot, const std::string& dir) const;
};

struct PolicyOptions {
  std::string name = "tiering";  // leveling | tiering | size-tiered
  double size_ratio = 0;         // 0: the policy's default
  uint64_t memtable_bytes = 32 << 20;  // level 0 capacity unit for leveling
  bool dynamic_level_sizes = false;
  int min_merge_components = 2;
  int max_merge_components = 10;
  bool merge_exact_min = false;
  // partitioned (leveling over range-partitioned files, LevelDB-style).
  uint64_t partition_bytes = 8 << 20;  // output files split at this size
  uint64_t level1_bytes = 0;           // 0: l0_trigger * memtable_bytes
  int l0_trigger = 4;                  // level-0 files that make a merge
  int l0_stop = 12;                    // the default level-0 constraint
  std::string partition_pick = "round-robin";  // round-robin | choose-best
  bool l0_merge_exact = false;  // merge exactly l0_trigger level-0 files, not all
  // Bounded-depth policies (bigtable, exploring, constant, minlatency,
  // binomial; bounded_depth.h): the SSTable bound k, and exploring's lambda,
  // C and D.
  int sstable_bound = 6;
  double exploring_ratio = 1.2;
  int exploring_min = 2;
  int exploring_max = 10;
};

// The valid policy names, for error messages and --help.
std::vector<std::string> PolicyNames();

// The valid values of PolicyOptions::partition_pick.
std::vector<std::string> PartitionPickNames();

// InvalidArgument listing the valid names for an unknown name, or naming the
// parameter and its allowed range for a bad value.
Status NewMergePolicy(const PolicyOptions& options, std::unique_ptr<MergePolicy>* policy);

}  // namespace lsm::policy

#endif  // LSM_POLICY_POLICY_H_
