#include "sched/scheduler.h"

#include "lsm/option_table.h"

#include <algorithm>

namespace lsm::sched {
namespace {

std::vector<uint64_t> Oldest(const std::vector<MergeState>& merges) {
  if (merges.empty()) return {};
  auto oldest = std::min_element(merges.begin(), merges.end(),
                                 [](const auto& a, const auto& b) { return a.id < b.id; });
  return {oldest->id};
}

// One merge at a time, in creation order (a single merge thread).
class SingleScheduler final : public MergeScheduler {
 public:
  const char* Name() const override { return "single"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                      const SchedulerContext& /*context*/) const override {
    return Oldest(merges);
  }
};

// Pramanik & Venkatesh (Sec. 6.3.2): merges wait for an idle period of the
// client, so that they do not compete with a write burst for the disk; the
// engine's flushes are not merges and always run. Otherwise like `single`.
// Under constraint pressure it also runs only the oldest merge: that is
// enough to bring the count down (merges of one tree install in any order),
// and it keeps the burst's share of the disk as large as possible.
class IdleScheduler final : public MergeScheduler {
 public:
  explicit IdleScheduler(const Options& o)
      : after_burst_(o.idle_mode == IdleMode::kAfterBurst),
        threshold_(static_cast<double>(o.idle_threshold_bytes_per_sec)),
        delay_micros_(static_cast<uint64_t>(o.idle_delay_ms) * 1000),
        probe_micros_(static_cast<uint64_t>(o.idle_probe_ms) * 1000) {}
  const char* Name() const override { return "idle"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                      const SchedulerContext& context) const override {
    if (!context.constraint_pressure) {
      const bool busy = after_burst_ ? context.micros_since_last_write < delay_micros_
                                     : context.client_write_bytes_per_sec > threshold_;
      if (busy) return {};
    }
    return Oldest(merges);
  }
  // A fifth of the window keeps the decision at most 20 % late; after_burst
  // measures its delay against the same clock. Never below 10 ms: probing
  // too often costs CPU for nothing (the paper's Fig. 24 overhead).
  uint64_t RecheckIntervalMicros() const override {
    uint64_t span = after_burst_ ? std::min(probe_micros_, delay_micros_) : probe_micros_;
    return std::max<uint64_t>(span / 5, 10 * 1000);
  }
  uint64_t ProbeWindowMicros() const override { return probe_micros_; }

 private:
  const bool after_burst_;
  const double threshold_;
  const uint64_t delay_micros_;
  const uint64_t probe_micros_;
};

// LevelDB's one background thread (Luo & Carey Sec. 6.1): one merge at a
// time, never preempted; when it completes, the merge of the level with the
// highest score goes next (ties: the older merge). Without scores (stack
// policies) this is `single`.
class LevelDbScheduler final : public MergeScheduler {
 public:
  const char* Name() const override { return "leveldb"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                      const SchedulerContext& /*context*/) const override {
    const MergeState* pick = nullptr;
    for (const MergeState& m : merges) {
      if (pick == nullptr) {
        pick = &m;
        continue;
      }
      // A running merge beats any waiting one; among equals, score then age.
      if (m.running != pick->running) {
        if (m.running) pick = &m;
      } else if (m.score != pick->score) {
        if (m.score > pick->score) pick = &m;
      } else if (m.id < pick->id) {
        pick = &m;
      }
    }
    if (pick == nullptr) return {};
    return {pick->id};
  }
};

// Every merge runs; the budget's first-come-first-served queue splits the
// merge bandwidth evenly among them.
class FairScheduler final : public MergeScheduler {
 public:
  const char* Name() const override { return "fair"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                      const SchedulerContext& /*context*/) const override {
    std::vector<uint64_t> ids;
    ids.reserve(merges.size());
    for (const MergeState& m : merges) ids.push_back(m.id);
    return ids;
  }
};

// The k merges with the fewest remaining input bytes run (the paper's
// greedy scheduler for k = 1, Fig. 7); ties go to the older merge.
class GreedyScheduler final : public MergeScheduler {
 public:
  GreedyScheduler(const char* name, size_t k) : name_(name), k_(k) {}
  const char* Name() const override { return name_; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges,
                                      const SchedulerContext& /*context*/) const override {
    std::vector<const MergeState*> order;
    order.reserve(merges.size());
    for (const MergeState& m : merges) order.push_back(&m);
    const size_t k = std::min(k_, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [](const MergeState* a, const MergeState* b) {
                        if (a->remaining_bytes != b->remaining_bytes) {
                          return a->remaining_bytes < b->remaining_bytes;
                        }
                        return a->id < b->id;
                      });
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < k; i++) ids.push_back(order[i]->id);
    return ids;
  }

 private:
  const char* const name_;
  const size_t k_;
};

}  // namespace

std::vector<std::string> SchedulerNames() {
  return std::vector<std::string>(kMergeSchedulerNames.begin(), kMergeSchedulerNames.end());
}

std::vector<std::string> IdleModeNames() {
  return std::vector<std::string>(kIdleModeNames.begin(), kIdleModeNames.end());
}

Status NewMergeScheduler(const Options& options, std::unique_ptr<MergeScheduler>* scheduler) {
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  *scheduler = NewCheckedMergeScheduler(options);
  return Status::OK();
}

std::unique_ptr<MergeScheduler> NewCheckedMergeScheduler(const Options& options) {
  switch (options.merge_scheduler) {
    case SchedulerKind::kSingle:
      return std::make_unique<SingleScheduler>();
    case SchedulerKind::kFair:
      return std::make_unique<FairScheduler>();
    case SchedulerKind::kGreedy:
      return std::make_unique<GreedyScheduler>("greedy", 1);
    case SchedulerKind::kGreedyK:
      return std::make_unique<GreedyScheduler>("greedy_k", static_cast<size_t>(options.greedy_k));
    case SchedulerKind::kLevelDb:
      return std::make_unique<LevelDbScheduler>();
    case SchedulerKind::kIdle:
      return std::make_unique<IdleScheduler>(options);
  }
  return std::make_unique<SingleScheduler>();  // unreachable: CheckOptions knows every kind
}

}  // namespace lsm::sched
