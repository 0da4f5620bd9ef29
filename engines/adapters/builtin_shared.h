// Pieces the builtin engine's two adapters share (the DB adapter in
// builtin_adapter.cc, the dataset adapter in builtin_dataset_adapter.cc):
// the flush and merge event log, the translation of lsm::Stats into
// metrics, and what the stats say about background work (Settle).
#ifndef LSMBENCH_ADAPTERS_BUILTIN_SHARED_H_
#define LSMBENCH_ADAPTERS_BUILTIN_SHARED_H_

#include <time.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "adapters/adapter.h"
#include "adapters/settle_poll.h"
#include "lsm/listener.h"
#include "lsm/stats.h"

namespace lsmbench {
namespace builtin {

inline int64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Collects the engine's flush and merge events for TakeEvents. The end is
// taken on the driver's clock when the event arrives; the start from the
// engine's own duration, so no engine clock needs to match the driver's.
class EventLog final : public lsm::EventListener {
 public:
  void OnFlushCompleted(const lsm::FlushInfo& info) override {
    EngineEvent e;
    e.kind = EngineEvent::Kind::kFlush;
    Stamp(info.start_micros, info.end_micros, &e);
    if (info.sealed_micros != 0 && info.sealed_micros <= info.end_micros) {
      e.sealed_ns = e.end_ns - static_cast<int64_t>(info.end_micros - info.sealed_micros) * 1000;
    }
    e.output_bytes = info.bytes;
    e.entries = info.entries;
    Add(e);
  }
  void OnMergeCompleted(const lsm::MergeInfo& info) override {
    EngineEvent e;
    e.kind = EngineEvent::Kind::kMerge;
    Stamp(info.start_micros, info.end_micros, &e);
    e.output_level = info.output_level;
    e.deepest_input_level = info.deepest_input_level;
    e.inputs = info.inputs;
    e.input_bytes = info.input_bytes;
    e.output_bytes = info.output_bytes;
    e.entries = info.entries;
    e.moved = info.moved;
    Add(e);
  }
  std::vector<EngineEvent> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(events_, {});
  }

 private:
  static void Stamp(uint64_t start_micros, uint64_t end_micros, EngineEvent* e) {
    e->end_ns = MonotonicNs();
    const uint64_t took = end_micros >= start_micros ? end_micros - start_micros : 0;
    e->start_ns = e->end_ns - static_cast<int64_t>(took) * 1000;
  }
  void Add(const EngineEvent& e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }

  std::mutex mu_;
  std::vector<EngineEvent> events_;  // GUARDED_BY(mu_)
};

// The metrics of one lsm::Stats (the names builtin_adapter.h lists), each
// name prefixed with `prefix` ("" or e.g. "primary.").
void AddStatsMetrics(const lsm::Stats& st, const std::string& prefix, Metrics* m);

// The background work of the trees (one for a DB, every index of a
// dataset), for Settle: busy while a memtable waits for or is in its flush,
// or a merge is pending or running. A failed flush or merge (a tree's
// background_error, or `error`, the dataset's own) is returned as an error.
Status LookAtWork(const std::vector<lsm::Stats>& trees, const std::string& error,
                  BackgroundWork* work);

}  // namespace builtin
}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_BUILTIN_SHARED_H_
