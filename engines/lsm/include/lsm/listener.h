// EventListener: what the engine tells as it works, one call per completed
// flush or merge (RocksDB's EventListener, narrowed to what a benchmark needs
// to see the merge cycle). Set Options::listener; not owned.
#ifndef LSM_INCLUDE_LSM_LISTENER_H_
#define LSM_INCLUDE_LSM_LISTENER_H_

#include <cstdint>

namespace lsm {

// Times are the Env's NowMicros().
struct FlushInfo {
  uint64_t entries = 0;  // entries of the memtable written (tombstones included)
  uint64_t bytes = 0;    // size of the component written (0: everything was dropped)
  // When the memtable stopped taking writes (0: unknown, e.g. recovered from
  // a WAL): its entries were written between the previous memtable's sealing
  // and this one, which makes whole write cycles measurable.
  uint64_t sealed_micros = 0;
  uint64_t start_micros = 0;
  uint64_t end_micros = 0;  // installed
};

struct MergeInfo {
  int output_level = 0;
  int deepest_input_level = 0;
  uint64_t inputs = 0;        // components merged
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;  // 0 when the data only moved down a level
  uint64_t entries = 0;       // entries read (tombstones included)
  bool moved = false;         // one component moved down without rewriting it
  uint64_t start_micros = 0;  // began (a scheduler may pause it in between)
  uint64_t end_micros = 0;    // installed
};

// Called from the engine's flush and merge threads, after the new component
// stack is installed and without the engine's locks held; may be called from
// several threads at once. It must not block for long (it delays the next
// flush or merge), and may call the DB.
class EventListener {
 public:
  virtual ~EventListener() = default;
  virtual void OnFlushCompleted(const FlushInfo& /*info*/) {}
  virtual void OnMergeCompleted(const MergeInfo& /*info*/) {}
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_LISTENER_H_
