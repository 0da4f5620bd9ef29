#ifndef LSM_SRC_DB_DB_ITER_H_
#define LSM_SRC_DB_DB_ITER_H_

#include <memory>

#include "lsm/iterator.h"
#include "table/internal_iterator.h"

namespace lsm {

// The user-facing iterator: the merged internal stream without tombstones.
// `pin` keeps the memtables and component files it reads alive.
std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> merged,
                                        std::shared_ptr<const void> pin);

}  // namespace lsm

#endif  // LSM_SRC_DB_DB_ITER_H_
