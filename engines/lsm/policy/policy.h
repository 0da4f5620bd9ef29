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

#include "lsm/options.h"
#include "lsm/status.h"

namespace lsm::policy {

// What a policy sees of one disk component.
struct Component {
  uint64_t id = 0;       // unique; a larger id was created later
  int level = 0;         // 0 = flushed from memory
  uint64_t bytes = 0;    // file size
  uint64_t entries = 0;  // entries including tombstones
  // The entries flushed from memory whose data this component holds: a
  // flush's memtable entries, a merge output's sum over its inputs (split
  // outputs share it by their entries). Under updates it outgrows `entries`
  // as merges keep one entry per key. 0: unknown, read as `entries`.
  uint64_t flushed_entries = 0;
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
  // How urgent a merge into output_level is now, on MergeOp::score's scale;
  // negative: as urgent as when it was created. Asked for every existing
  // merge after every change of the stack, so that a scheduler ranking by
  // urgency (leveldb) ranks a waiting merge by today's tree, not by the tree
  // it was created from.
  virtual double Urgency(const Snapshot& /*snapshot*/, int /*output_level*/) const { return -1; }
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

// The valid policy names, for error messages and --help.
std::vector<std::string> PolicyNames();

// The valid values of Options::partition_pick.
std::vector<std::string> PartitionPickNames();

// The policy options.merge_policy names, with its parameters from options
// (the fields the policy reads). InvalidArgument, naming every bad option,
// when CheckOptions(options) fails.
Status NewMergePolicy(const Options& options, std::unique_ptr<MergePolicy>* policy);

// The same for options CheckOptions has accepted: DB::Open and lsm-sim check
// an open's options once, then make the policy and the scheduler from them.
std::unique_ptr<MergePolicy> NewCheckedMergePolicy(const Options& checked);

}  // namespace lsm::policy

#endif  // LSM_POLICY_POLICY_H_
