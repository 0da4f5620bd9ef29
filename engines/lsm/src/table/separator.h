// Short index keys: an index entry needs any key between the last key of a
// block and the first key of the next, and a short one keeps the in-memory
// index small.
#ifndef LSM_SRC_TABLE_SEPARATOR_H_
#define LSM_SRC_TABLE_SEPARATOR_H_

#include <string>
#include <string_view>

namespace lsm {

// Sets *result to a short key s with start <= s < limit.
// REQUIRES: start < limit (bytewise).
void ShortestSeparator(std::string_view start, std::string_view limit, std::string* result);

// Sets *result to a short key s >= start.
void ShortSuccessor(std::string_view start, std::string* result);

}  // namespace lsm

#endif  // LSM_SRC_TABLE_SEPARATOR_H_
