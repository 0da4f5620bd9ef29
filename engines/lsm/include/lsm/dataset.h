// A dataset: records kept in one primary LSM-tree (by primary key) and one
// secondary LSM-tree per secondary field (by field value, then primary key),
// as AsterixDB keeps them and Luo & Carey study them in Sec. 7. The trees
// share one memory budget and one I/O budget; each has its own merge policy
// and merge scheduler instance. engines/README.md ("Datasets") has the design.
#ifndef LSM_INCLUDE_LSM_DATASET_H_
#define LSM_INCLUDE_LSM_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/options.h"
#include "lsm/stats.h"
#include "lsm/status.h"

namespace lsm {

// One record: its primary key, the value of each secondary field (one per
// secondary index, in index order) and an opaque payload.
struct Record {
  std::string key;
  std::vector<uint64_t> fields;
  std::string payload;
};

inline constexpr int kMaxSecondaryIndexes = 64;

struct DatasetOptions {
  // The options of every tree, with three read for the dataset as a whole:
  // memtable_bytes is the budget of all trees' active memory components
  // together (when they reach it, every tree flushes, as AsterixDB does);
  // io_budget_bytes_per_sec and force_bytes apply to all trees' flushes and
  // merges together; wal is the dataset's one log, which makes a write to
  // several trees atomic. secondary_maintenance picks eager or lazy. The
  // listener is told of the primary index's flushes and merges only: one
  // flush per flush round, so its write cycles are the dataset's.
  Options options;
  // 0..kMaxSecondaryIndexes; fixed when the dataset is created.
  int secondary_indexes = 2;
};

struct DatasetStats {
  // trees[0] is the primary index, trees[1 + i] secondary index i.
  std::vector<Stats> trees;
  uint64_t records_put = 0;
  uint64_t records_deleted = 0;
  // Eager maintenance: primary lookups for old records, and the old
  // secondary entries they deleted (anti-matter).
  uint64_t maintenance_lookups = 0;
  uint64_t antimatter_entries = 0;
  // Flush rounds: every tree's memory component flushed together.
  uint64_t flush_rounds = 0;
  // Writers waiting for the shared memory budget: the active components are
  // full while the previous round still flushes.
  uint64_t memory_stalls = 0;
  uint64_t memory_stall_micros = 0;
  // Secondary queries: how many, the primary keys their index scans found,
  // the records returned, and the keys skipped because the current record no
  // longer matches (lazy maintenance leaves old entries behind; under eager
  // only a write racing the query does) or no longer exists.
  uint64_t queries = 0;
  uint64_t query_candidates = 0;
  uint64_t query_results = 0;
  uint64_t stale_entries_skipped = 0;
  // The shared I/O budget, as in Stats (0 without one).
  uint64_t io_budget_granted_bytes = 0;
  uint64_t io_budget_unused_bytes = 0;
  // The first failure of the log, a tree or a flush round; writes return it
  // from then on (reads go on) until the dataset is reopened.
  std::string background_error;
};

// Safe for concurrent use by many threads.
class Dataset {
 public:
  // Opens (creating if options.create_if_missing) the dataset in dir.
  // After a crash the state is exactly the acknowledged writes (with
  // WalMode::kSync; kAsync survives a process crash), each write in every
  // index or in none.
  static Status Open(const DatasetOptions& options, const std::string& dir,
                     std::unique_ptr<Dataset>* dataset);

  Dataset() = default;
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  // Clean close: flushes every tree.
  virtual ~Dataset();

  // Inserts or replaces the record `key`. fields.size() must equal the
  // number of secondary indexes.
  virtual Status Put(std::string_view key, const std::vector<uint64_t>& fields,
                     std::string_view payload) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // NotFound if absent.
  virtual Status Get(std::string_view key, Record* record) = 0;
  // The current records whose field `index` lies in [low, high), in primary
  // key order: the secondary index gives the candidates, each is fetched
  // from the primary index and kept only if it still matches.
  virtual Status Query(int index, uint64_t low, uint64_t high, std::vector<Record>* records) = 0;
  // Flushes every tree's memory component and waits for it.
  virtual Status Flush() = 0;
  // Blocks until no flush or merge is pending or running in any tree.
  virtual Status WaitForIdle() = 0;
  virtual DatasetStats GetStats() const = 0;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_DATASET_H_
