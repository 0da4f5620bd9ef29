// One iterator over the files of a partitioned level: their key ranges are
// disjoint, so the level reads as the concatenation of its files in key
// order, and only the file under the cursor is open. A user iterator over a
// partitioned tree then merges one source per level instead of one per file:
// a Seek reads one file per level, not every file.
#ifndef LSM_SRC_DB_LEVEL_ITERATOR_H_
#define LSM_SRC_DB_LEVEL_ITERATOR_H_

#include <memory>
#include <vector>

#include "db/version.h"
#include "table/internal_iterator.h"

namespace lsm {

// files: one level's components with disjoint key ranges, in any order; the
// iterator keeps them alive.
std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<ComponentPtr> files);

}  // namespace lsm

#endif  // LSM_SRC_DB_LEVEL_ITERATOR_H_
