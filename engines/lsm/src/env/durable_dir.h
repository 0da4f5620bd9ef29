// Directories whose entries survive a power cut: a new directory's name is
// in its parent, which must be synced like any other directory.
#ifndef LSM_SRC_ENV_DURABLE_DIR_H_
#define LSM_SRC_ENV_DURABLE_DIR_H_

#include <string>

#include "lsm/env.h"

namespace lsm {

// "/db/000005.log" -> "/db"; "/db" -> "/"; "db" -> ".".
std::string ParentDir(const std::string& path);

// Creates dir unless it exists, then syncs its parent, so that the
// directory is still there after a power cut. A directory that existed gets
// the sync too: a process may have died between creating it and syncing its
// parent.
Status CreateDirDurably(Env* env, const std::string& dir);

}  // namespace lsm

#endif  // LSM_SRC_ENV_DURABLE_DIR_H_
