// The set of disk components: immutable Versions of the component stack,
// shared by readers (Get, iterators, merges) through shared_ptr, so that a
// file lives as long as anyone reads it.
#ifndef LSM_SRC_DB_VERSION_H_
#define LSM_SRC_DB_VERSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/env.h"
#include "table/table_builder.h"

namespace lsm {

// What the manifest records about a disk component.
struct ComponentMeta {
  uint64_t number = 0;  // file number (NNNNNN.sst); larger = created later
  int level = 0;
  uint64_t file_size = 0;
  uint64_t entries = 0;
  // Entries flushed from memory whose data this component holds
  // (policy::Component::flushed_entries); 0 in a manifest written before
  // components recorded it.
  uint64_t flushed_entries = 0;
  std::string smallest;
  std::string largest;
};

// An open disk component. Its file is removed when the last reference goes
// away after the component was dropped from the stack (MarkObsolete).
class ComponentFile {
 public:
  ComponentFile(ComponentMeta meta, std::unique_ptr<Table> table, Env* env, std::string path)
      : meta_(std::move(meta)), table_(std::move(table)), env_(env), path_(std::move(path)) {}
  ~ComponentFile() {
    table_.reset();
    if (obsolete_.load(std::memory_order_acquire)) env_->RemoveFile(path_);
  }
  ComponentFile(const ComponentFile&) = delete;
  ComponentFile& operator=(const ComponentFile&) = delete;

  const ComponentMeta& meta() const { return meta_; }
  const Table& table() const { return *table_; }
  const std::string& path() const { return path_; }
  void MarkObsolete() { obsolete_.store(true, std::memory_order_release); }

  // True while an input of a created merge. Guarded by the DB mutex.
  bool being_merged = false;

 private:
  const ComponentMeta meta_;
  std::unique_ptr<Table> table_;
  Env* const env_;
  const std::string path_;
  std::atomic<bool> obsolete_{false};
};

using ComponentPtr = std::shared_ptr<ComponentFile>;

// One place a point lookup searches: a single component, or a partitioned
// level -- files with disjoint key ranges, sorted by key, of which at most
// one can hold a given key.
struct ReadSource {
  std::vector<const ComponentFile*> files;

  // The file whose key range holds key, or nullptr: a binary search over a
  // level instead of a range check per file.
  const ComponentFile* Candidate(std::string_view key) const;
};

// The component stack, oldest data first (see policy::Snapshot). Immutable
// once published.
struct Version {
  std::vector<ComponentPtr> stack;
  // Where Get looks, newest data first; built by Index from the stack.
  std::vector<ReadSource> read_order;

  // Builds read_order. partitioned: the stack is in level blocks (deepest
  // first, level 0 last) and every level above 0 is one source; otherwise
  // each component is a source of its own.
  void Index(bool partitioned);
};

}  // namespace lsm

#endif  // LSM_SRC_DB_VERSION_H_
