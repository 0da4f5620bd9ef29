// The manifest: the history of the component set, one checksummed record
// (log format) per change. CURRENT names the live manifest and is replaced
// atomically (write temp, fsync, rename, fsync dir).
#ifndef LSM_SRC_DB_MANIFEST_H_
#define LSM_SRC_DB_MANIFEST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/version.h"
#include "log/log_format.h"
#include "lsm/env.h"
#include "lsm/status.h"

namespace lsm {

// One change. Each edit carries the whole stack order (it is short), so
// replay needs no positional logic.
struct ManifestEdit {
  uint64_t next_file_number = 0;
  uint64_t log_number = 0;  // WAL files numbered below this are not needed
  std::vector<ComponentMeta> added;
  std::vector<uint64_t> stack;  // component numbers, oldest data first
  // Partitioned policies: per level, the largest key of the file the last
  // round-robin merge took from it ("" = start at the beginning). Every edit
  // carries them all, like the stack; empty for stack policies.
  std::vector<std::string> merge_cursors;

  std::string Encode() const;
  // Corruption (naming fname) on malformed input.
  Status Decode(std::string_view input, const std::string& fname);
};

// The state a manifest describes.
struct ManifestState {
  uint64_t manifest_number = 0;
  uint64_t next_file_number = 1;
  uint64_t log_number = 0;
  std::vector<ComponentMeta> stack;  // oldest first
  std::vector<std::string> merge_cursors;  // of the last edit that had them
};

// Reads CURRENT and replays the manifest. NotFound if there is no CURRENT
// (no database); Corruption naming the file for a damaged manifest or
// CURRENT. A manifest that ends inside its last edit (an append cut short)
// yields the state before that edit.
Status RecoverManifest(Env* env, const std::string& dir, ManifestState* state);

class ManifestWriter {
 public:
  // Writes a new manifest holding `state` as one snapshot edit, syncs it,
  // and points CURRENT at it.
  static Status Create(Env* env, const std::string& dir, uint64_t number,
                       const ManifestEdit& snapshot, std::unique_ptr<ManifestWriter>* writer);
  // Appends and syncs one edit. After a failure every later call returns
  // that error and writes nothing: the failed edit may be in the file, whole
  // or cut short, and an edit behind a cut one would be lost with it.
  Status Append(const ManifestEdit& edit);
  uint64_t number() const { return number_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  ManifestWriter(uint64_t number, std::unique_ptr<WritableFile> file)
      : number_(number), file_(std::move(file)), writer_(file_.get()) {}

  uint64_t number_;
  std::unique_ptr<WritableFile> file_;
  log::Writer writer_;
  uint64_t bytes_written_ = 0;
  Status error_;  // the first failed Append
};

}  // namespace lsm

#endif  // LSM_SRC_DB_MANIFEST_H_
