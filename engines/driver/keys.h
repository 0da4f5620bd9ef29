// Keys: record ids 0, 1, 2, ... are formatted as fixed-size strings
// "<prefix><zero-padded digits>". With insert order "hashed" the digits are a
// keyed permutation of the id: ids are assigned in insertion order while the
// keys land in random key order, so loading ids 0..N-1 in order inserts in
// random key order, and later inserts (ids N, N+1, ...) scatter across the
// key space too. With "ordered" the digits are the id itself.
//
// Key choosers pick the id an operation targets:
//   uniform  uniform over the ids that exist;
//   zipfian  YCSB's scrambled zipfian: a zipfian rank over the loaded
//            records (theta, Gray et al.'s method), mapped through a
//            permutation so hot records are spread over insertion time;
//   latest   zipfian distance back from the most recently inserted id.
#ifndef LSMBENCH_DRIVER_KEYS_H_
#define LSMBENCH_DRIVER_KEYS_H_

#include <cstdint>
#include <string>

#include "driver/random.h"
#include "driver/workload.h"
#include "driver/zipfian.h"

namespace lsmbench {
namespace driver {

class KeyFormatter {
 public:
  KeyFormatter(uint32_t key_size, const std::string& prefix, uint64_t seed,
               InsertOrder order = InsertOrder::kHashed);
  uint32_t key_size() const { return key_size_; }
  uint64_t capacity() const { return permutation_.n(); }
  // Writes exactly key_size() bytes. Ids >= capacity() wrap around.
  void Format(uint64_t id, char* out) const;

 private:
  uint32_t key_size_;
  std::string prefix_;
  Permutation permutation_;
  bool ordered_;
};

class KeyChooser {
 public:
  // `base_count`: records loaded (the zipfian domain).
  KeyChooser(Distribution distribution, uint64_t base_count, double theta, uint64_t seed);
  // An id in [0, current_count) (0 if current_count is 0).
  uint64_t Choose(Rng* rng, uint64_t current_count) const;

 private:
  Distribution distribution_;
  Zipfian zipf_;
  Permutation scramble_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_KEYS_H_
