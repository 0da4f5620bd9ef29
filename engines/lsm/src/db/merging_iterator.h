#ifndef LSM_SRC_DB_MERGING_ITERATOR_H_
#define LSM_SRC_DB_MERGING_ITERATOR_H_

#include <memory>
#include <vector>

#include "table/internal_iterator.h"

namespace lsm {

// Merges sources into one key-ordered stream that yields each key once,
// with the entry of the source that comes FIRST in `children` (callers pass
// sources newest first, so newer entries win). Tombstones are yielded.
std::unique_ptr<InternalIterator> NewMergingIterator(
    std::vector<std::unique_ptr<InternalIterator>> children);

}  // namespace lsm

#endif  // LSM_SRC_DB_MERGING_ITERATOR_H_
