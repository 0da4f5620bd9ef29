#ifndef LSM_SRC_DATASET_DATASET_IMPL_H_
#define LSM_SRC_DATASET_DATASET_IMPL_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dataset/record_format.h"
#include "db/db_impl.h"
#include "env/io_budget.h"
#include "log/log_format.h"
#include "lsm/dataset.h"

namespace lsm {

// The trees live in subdirectories (primary/, secondary-<i>/) and run without
// their own WAL: the dataset's log (dataset-<n>.log) holds every write, all
// of its tree writes in one record. A flush round, while no write is between
// its log record and its trees, switches to a new log and makes every tree's
// memtable immutable; the writers go on while the trees flush, and then the
// old log is removed, so the logs left after a
// crash hold every write that some tree may not have flushed; recovery
// replays them in order (re-applying writes a tree already flushed is
// harmless: each is a blind put or delete of a whole entry) and flushes.
class DatasetImpl final : public Dataset {
 public:
  DatasetImpl(const DatasetOptions& options, std::string dir);
  ~DatasetImpl() override;

  Status Recover();

  Status Put(std::string_view key, const std::vector<uint64_t>& fields,
             std::string_view payload) override;
  Status Delete(std::string_view key) override;
  Status Get(std::string_view key, Record* record) override;
  Status Query(int index, uint64_t low, uint64_t high, std::vector<Record>* records) override;
  Status Flush() override;
  Status WaitForIdle() override;
  DatasetStats GetStats() const override;

 private:
  // Writes to one primary key are serialized (an eager write reads the old
  // record, and the log and the trees must see them in one order); the key's
  // hash picks one of these.
  static constexpr size_t kKeyStripes = 1024;

  Status OpenTrees();
  Status CheckDescriptor();
  Status ReplayLogs(const std::vector<uint64_t>& numbers);
  Status NewLog();  // REQUIRES: no writer in the log section
  std::vector<uint64_t> LogNumbers();
  std::mutex& StripeFor(std::string_view key);

  // The old record's tree writes under eager maintenance, then the new ones.
  Status Write(std::string_view key, bool is_delete, const std::vector<uint64_t>& fields,
               std::string_view payload);
  // Enters the section between logging a write and applying it, which a
  // flush round waits to be empty; waits for memory while the previous
  // round still flushes and the budget is spent.
  Status EnterLogSection();
  void ExitLogSection(uint64_t bytes);
  // Group commit: appends the record, and with wal=sync fsyncs, sharing the
  // write and the fsync with the writers queued meanwhile.
  Status AppendToLog(std::string record);
  Status Apply(const std::vector<dataset::TreeWrite>& writes);

  void FlushLoop();
  // Switches logs and flushes every tree; REQUIRES: called by the flush
  // thread or before it starts.
  Status FlushRound();
  void SetBackgroundError(const Status& s);  // REQUIRES: mu_

  const DatasetOptions options_;
  const std::string dir_;
  Env* base_env_;
  std::shared_ptr<IoBudget> io_budget_;
  std::unique_ptr<Env> budget_env_;  // outlives the trees
  std::unique_ptr<FileLock> dir_lock_;
  std::vector<std::unique_ptr<DBImpl>> trees_;  // [0] primary, [1 + i] secondary i
  std::array<std::mutex, kKeyStripes> stripes_;

  // The log section, the memory budget and the flush rounds.
  mutable std::mutex mu_;
  std::condition_variable writers_cv_;  // writers: a round switched logs or ended
  std::condition_variable flush_cv_;    // flush thread: a round is asked for
  std::condition_variable round_cv_;    // Flush(): a round ended
  int writers_in_section_ = 0;          // guarded by mu_
  bool switching_ = false;              // guarded by mu_: a round waits to switch logs
  bool round_requested_ = false;        // guarded by mu_
  bool round_flushing_ = false;         // guarded by mu_: the trees flush
  uint64_t rounds_begun_ = 0;           // guarded by mu_
  uint64_t rounds_done_ = 0;            // guarded by mu_
  uint64_t memory_bytes_ = 0;           // guarded by mu_: written since the last switch
  bool shutting_down_ = false;          // guarded by mu_
  Status bg_error_;                     // guarded by mu_
  std::string bg_error_text_;           // guarded by mu_

  // The log. Only the group's leader touches the file; switching happens
  // with the log section empty, so no leader runs then.
  std::mutex log_mu_;
  std::condition_variable log_cv_;
  std::vector<std::string> log_queue_;  // guarded by log_mu_
  uint64_t log_queued_ = 0;             // guarded by log_mu_
  uint64_t log_written_ = 0;            // guarded by log_mu_
  bool log_leader_ = false;             // guarded by log_mu_
  Status log_error_;                    // guarded by log_mu_
  uint64_t log_number_ = 0;
  std::unique_ptr<WritableFile> log_file_;
  std::unique_ptr<log::Writer> log_;

  struct Counters {
    std::atomic<uint64_t> puts{0}, deletes{0}, lookups{0}, antimatter{0};
    std::atomic<uint64_t> memory_stalls{0}, memory_stall_micros{0};
    std::atomic<uint64_t> queries{0}, candidates{0}, results{0}, stale{0};
  };
  Counters counters_;

  std::thread flush_thread_;
};

}  // namespace lsm

#endif  // LSM_SRC_DATASET_DATASET_IMPL_H_
