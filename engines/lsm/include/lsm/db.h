// The bundled LSM engine's public API. See engines/README.md for the design.
#ifndef LSM_INCLUDE_LSM_DB_H_
#define LSM_INCLUDE_LSM_DB_H_

#include <memory>
#include <string>
#include <string_view>

#include "lsm/env.h"
#include "lsm/iterator.h"
#include "lsm/options.h"
#include "lsm/stats.h"
#include "lsm/status.h"

namespace lsm {

// A key-value store over one directory. Safe for concurrent use by many
// threads. Keys and values are arbitrary bytes; keys order bytewise.
class DB {
 public:
  // Opens (creating if options.create_if_missing) the database in dir.
  // Recovers after a crash: the state is exactly the acknowledged writes
  // (with WalMode::kSync), and files of an interrupted flush or merge are
  // removed.
  static Status Open(const Options& options, const std::string& dir, std::unique_ptr<DB>* db);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Clean close: waits for the running flush and merge operations to reach a
  // safe point and releases the directory lock.
  virtual ~DB();

  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // NotFound if the key is absent or deleted.
  virtual Status Get(std::string_view key, std::string* value) = 0;
  // An iterator over a consistent snapshot taken now. It pins what it reads,
  // so it stays valid while flushes and merges go on.
  virtual std::unique_ptr<Iterator> NewIterator() = 0;
  // Turns the active memtable into a disk component and waits for it.
  virtual Status Flush() = 0;
  // Blocks until no flush or merge is pending or running.
  virtual Status WaitForIdle() = 0;
  // After a flush, a merge or a WAL write fails, the DB keeps that error
  // (Stats::background_error): Put, Delete, Flush and WaitForIdle return it
  // from then on, reads go on, and a reopen recovers every acknowledged
  // write (engines/README.md, "Faults").
  virtual Stats GetStats() const = 0;
};

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_DB_H_
