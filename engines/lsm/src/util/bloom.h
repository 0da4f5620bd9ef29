// Bloom filters over byte-string keys.
//
// Filter bytes: the bit array (m = 8 * (size - 1) bits), then one byte k
// (number of probes). With h = Hash64(key, seed 0xb10f11e7), probe i of a key
// is bit floor(g_i * m / 2^64) where g_i = h + i * (swap32(h) | 1) mod 2^64
// (double hashing: one hash computation per key; swap32 exchanges the 32-bit
// halves). Bit b is bit (b % 8) of byte b / 8. k = bits_per_key * ln 2,
// clamped to [1, 30]; a k byte above 30 is reserved for future encodings and
// matches every key.
#ifndef LSM_SRC_UTIL_BLOOM_H_
#define LSM_SRC_UTIL_BLOOM_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lsm {

// Appends to *dst a filter over keys[0, n).
void CreateBloomFilter(const std::string_view* keys, size_t n, int bits_per_key,
                       std::string* dst);

// False only if key was certainly not among the filter's keys. An empty
// filter (no bytes) matches nothing.
bool BloomKeyMayMatch(std::string_view key, std::string_view filter);

// Builds a filter incrementally. Not thread-safe.
//
// Without a size hint the filter is sized for the number of keys actually
// added, at the price of keeping 8 bytes per key (its hash) until Finish.
// With expected_keys > 0 the bit array is allocated up front for that many
// keys and each key sets its bits at once: memory is the filter's size only,
// which matters for the huge tables of full merges. More keys than expected
// raise the false positive rate; fewer lower it.
class BloomFilterBuilder {
 public:
  explicit BloomFilterBuilder(int bits_per_key, uint64_t expected_keys = 0);

  void AddKey(std::string_view key);
  uint64_t NumKeys() const { return num_keys_; }
  // Appends the filter over every key added so far to *dst.
  void Finish(std::string* dst) const;

 private:
  const int bits_per_key_;
  uint64_t num_keys_ = 0;
  std::vector<uint64_t> hashes_;  // without a hint
  std::string filter_;            // with a hint: bit array + probe count
};

}  // namespace lsm

#endif  // LSM_SRC_UTIL_BLOOM_H_
