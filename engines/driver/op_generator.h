// Turns a request's sequence number into an operation: type, target id and
// value, all drawn from a generator seeded by (seed, sequence number), so
// the stream of operations is the same whichever thread executes it. Only
// two choices depend on timing when several threads run: the id an insert
// gets (the next free id, from a shared counter) and the "latest"
// distribution's notion of the newest id.
//
// Values are slices of one pre-generated random buffer: no allocation or
// copying per operation.
#ifndef LSMBENCH_DRIVER_OP_GENERATOR_H_
#define LSMBENCH_DRIVER_OP_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "driver/keys.h"
#include "driver/mixgraph.h"
#include "driver/trace_workload.h"
#include "driver/workload.h"

namespace lsmbench {
namespace driver {

struct Op {
  int type = kUpdate;
  uint64_t id = 0;
  std::string_view value;   // inserts and updates
  uint32_t scan_length = 0; // scans
  // Inserts and updates of a workload with secondary fields: their values
  // (the vector keeps its capacity from one operation to the next).
  std::vector<uint64_t> fields;
  // Secondary queries: field values in [range_low, range_high).
  uint64_t range_low = 0, range_high = 0;
  // A replayed trace's key, as traced (`id` is then meaningless).
  bool has_raw_key = false;
  std::string raw_key;
};

// Thread-safe.
class OpGenerator {
 public:
  // New ids start at insert_start (normally record_count; later phases
  // continue after the ids earlier phases inserted).
  OpGenerator(const WorkloadSpec& workload, uint64_t seed, uint64_t insert_start);

  // The operation of the workload mix with sequence number seq. False only
  // for a replayed trace: it has no such op (its end, or an error: status()),
  // or the stop flag (SetStop) was raised while waiting for the op.
  bool Make(uint64_t seq, Op* op);
  // A trace replay's read error, else OK.
  Status status() const;
  void SetStop(const std::atomic<bool>* stop) { stop_ = stop; }
  // The type Make(seq) would give, without drawing an insert id.
  int TypeOf(uint64_t seq) const;
  // The load stage's insert of record `id`.
  void MakeLoad(uint64_t id, Op* op) const;
  // A query of the given type (kRead or kScan) on a chosen key; rng is the
  // query thread's own.
  void MakeQuery(int type, uint32_t scan_length, const KeyChooser& chooser, Rng* rng,
                 Op* op) const;
  // A secondary query over `selectivity` consecutive field values (at most
  // the workload's secondary values), placed uniformly.
  void MakeSecondaryQuery(uint64_t selectivity, Rng* rng, Op* op) const;

  // Ids in use now: [0, key_count()).
  uint64_t key_count() const { return next_id_.load(std::memory_order_relaxed); }
  uint32_t key_size() const { return formatter_.key_size(); }
  void FormatKey(uint64_t id, char* out) const { formatter_.Format(id, out); }
  const KeyChooser& chooser() const { return chooser_; }

 private:
  std::string_view Value(Rng* rng) const;
  bool MakeFromTrace(uint64_t seq, Op* op);
  uint64_t ChooseKey(Rng* rng) const;
  uint32_t ScanLength(Rng* rng) const;
  void Fields(Rng* rng, Op* op) const;  // the secondary fields of an insert or update
  int TypeOfDraw(uint64_t draw) const;  // the mix's type for the first draw of an op's rng

  const WorkloadSpec workload_;
  const uint64_t seed_;
  KeyFormatter formatter_;
  KeyChooser chooser_;
  KeyChooser field_chooser_;  // secondary field values
  std::unique_ptr<MixgraphKeys> mixgraph_keys_;  // mixgraph workloads
  std::unique_ptr<TraceSource> trace_;           // a replayed trace
  Status trace_open_;
  const std::atomic<bool>* stop_ = nullptr;
  uint64_t thresholds_[kNumOpTypes];  // cumulative mix, scaled to 2^64
  int last_type_;                     // the last type with a positive share
  std::string values_;                // random bytes
  std::atomic<uint64_t> next_id_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_OP_GENERATOR_H_
