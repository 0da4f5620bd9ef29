// A merge operation created from a policy decision. The merge loop checks
// Pause/Cancel at every input block boundary, and exposes its remaining
// input bytes at any time: what a scheduler needs to run, starve or split
// the I/O budget among merges (greedy runs the one with the fewest).
#ifndef LSM_SRC_DB_MERGE_JOB_H_
#define LSM_SRC_DB_MERGE_JOB_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "db/version.h"

namespace lsm {

class MergeJob {
 public:
  // inputs in stack order (oldest data first). max_output_bytes splits the
  // output into files of about that size (0: one file); score is the
  // policy's urgency, for schedulers that rank merges.
  MergeJob(uint64_t id, std::vector<ComponentPtr> inputs, int output_level,
           uint64_t max_output_bytes = 0, double score = 0)
      : id_(id),
        inputs_(std::move(inputs)),
        output_level_(output_level),
        max_output_bytes_(max_output_bytes),
        score_(score) {
    for (const ComponentPtr& c : inputs_) total_input_bytes_ += c->meta().file_size;
  }
  MergeJob(const MergeJob&) = delete;
  MergeJob& operator=(const MergeJob&) = delete;

  uint64_t id() const { return id_; }
  const std::vector<ComponentPtr>& inputs() const { return inputs_; }
  int output_level() const { return output_level_; }
  uint64_t max_output_bytes() const { return max_output_bytes_; }
  // REQUIRES: the host's mutex (MergeControl reads and refreshes it there).
  double score() const { return score_; }
  void set_score(double score) { score_ = score; }
  uint64_t total_input_bytes() const { return total_input_bytes_; }
  // One input: the component only changes level (LevelDB's trivial move),
  // nothing is read or written.
  bool is_move() const { return inputs_.size() == 1; }
  uint64_t RemainingInputBytes() const {
    uint64_t consumed = consumed_bytes_.load(std::memory_order_relaxed);
    return consumed >= total_input_bytes_ ? 0 : total_input_bytes_ - consumed;
  }

  // Called by the merge loop at block boundaries.
  void SetConsumedBytes(uint64_t bytes) {
    consumed_bytes_.store(bytes, std::memory_order_relaxed);
  }
  // Blocks while paused; false once cancelled (the loop then abandons its
  // output).
  bool WaitWhilePaused() {
    if (!pause_requested_.load(std::memory_order_acquire)) {
      return !cancelled_.load(std::memory_order_acquire);
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !paused_ || cancelled_.load(); });
    return !cancelled_.load();
  }

  void Pause() {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = true;
    pause_requested_.store(true, std::memory_order_release);
  }
  void Resume() {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = false;
    pause_requested_.store(false, std::memory_order_release);
    cv_.notify_all();
  }
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.store(true, std::memory_order_release);
    pause_requested_.store(true, std::memory_order_release);  // route the loop to the slow path
    cv_.notify_all();
  }
  bool paused() const { return pause_requested_.load(std::memory_order_acquire) && !cancelled_; }

 private:
  const uint64_t id_;
  const std::vector<ComponentPtr> inputs_;
  const int output_level_;
  const uint64_t max_output_bytes_;
  double score_;  // guarded by the host's mutex
  uint64_t total_input_bytes_ = 0;
  std::atomic<uint64_t> consumed_bytes_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false;  // guarded by mu_
  std::atomic<bool> pause_requested_{false};
  std::atomic<bool> cancelled_{false};
};

}  // namespace lsm

#endif  // LSM_SRC_DB_MERGE_JOB_H_
