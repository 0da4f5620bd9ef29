#include "sched/scheduler.h"

#include <algorithm>

namespace lsm::sched {
namespace {

// One merge at a time, in creation order (a single merge thread).
class SingleScheduler final : public MergeScheduler {
 public:
  const char* Name() const override { return "single"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges) const override {
    if (merges.empty()) return {};
    auto oldest = std::min_element(merges.begin(), merges.end(),
                                   [](const auto& a, const auto& b) { return a.id < b.id; });
    return {oldest->id};
  }
};

// Every merge runs; the budget's first-come-first-served queue splits the
// merge bandwidth evenly among them.
class FairScheduler final : public MergeScheduler {
 public:
  const char* Name() const override { return "fair"; }
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges) const override {
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
  std::vector<uint64_t> SelectRunning(const std::vector<MergeState>& merges) const override {
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

std::vector<std::string> SchedulerNames() { return {"single", "fair", "greedy", "greedy_k"}; }

Status NewMergeScheduler(const SchedulerOptions& options,
                         std::unique_ptr<MergeScheduler>* scheduler) {
  if (options.name == "single") {
    *scheduler = std::make_unique<SingleScheduler>();
  } else if (options.name == "fair") {
    *scheduler = std::make_unique<FairScheduler>();
  } else if (options.name == "greedy") {
    *scheduler = std::make_unique<GreedyScheduler>("greedy", 1);
  } else if (options.name == "greedy_k") {
    if (options.greedy_k < 1 || options.greedy_k > 64) {
      return Status::InvalidArgument("option greedy_k", "must be in [1, 64]");
    }
    *scheduler =
        std::make_unique<GreedyScheduler>("greedy_k", static_cast<size_t>(options.greedy_k));
  } else {
    std::string names;
    for (const std::string& n : SchedulerNames()) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown merge scheduler '" + options.name + "'",
                                   "choose from: " + names);
  }
  return Status::OK();
}

}  // namespace lsm::sched
