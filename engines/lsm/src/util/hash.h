// A fast 64-bit hash of byte strings for in-memory and on-disk structures
// (the Bloom filter). Its values are part of the table format: changing it
// needs a new table format version.
#ifndef LSM_SRC_UTIL_HASH_H_
#define LSM_SRC_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lsm {

// No default seed here: Hash64("a", 0) must not silently mean "zero bytes".
uint64_t Hash64(const char* data, size_t n, uint64_t seed);

inline uint64_t Hash64(std::string_view s, uint64_t seed = 0) {
  return Hash64(s.data(), s.size(), seed);
}

}  // namespace lsm

#endif  // LSM_SRC_UTIL_HASH_H_
