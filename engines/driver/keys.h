// Keys: record ids 0, 1, 2, ... are formatted as fixed-size strings
// "<prefix><zero-padded digits>". With insert order "hashed" the digits are a
// keyed permutation of the id: ids are assigned in insertion order while the
// keys land in random key order, so loading ids 0..N-1 in order inserts in
// random key order, and later inserts (ids N, N+1, ...) scatter across the
// key space too. With "ordered" the digits are the id itself.
//
// Key choosers pick the id an operation targets:
//   uniform  uniform over the ids that exist;
//   zipfian  a zipfian rank over the loaded records (theta, Gray et al.'s
//            method), mapped through a keyed permutation so hot records are
//            spread over insertion time (the paper workloads' skew: the
//            hottest record gets 1/zeta(records) of the accesses);
//   scrambled_zipfian
//            YCSB's ScrambledZipfianGenerator: a zipfian rank over 10^10
//            items, folded onto `items` ids by YCSB's FNV-1 hash, an id not
//            inserted yet drawn again (CoreWorkload.nextKeynum). Much flatter
//            than `zipfian` over few records (workloads/ycsb/README.md);
//   latest   YCSB's SkewedLatestGenerator: the newest id minus a zipfian
//            distance over the ids before it, the zipfian's domain growing
//            with the inserts (id 0 is never drawn once there are two).
#ifndef LSMBENCH_DRIVER_KEYS_H_
#define LSMBENCH_DRIVER_KEYS_H_

#include <cstdint>
#include <memory>
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

// YCSB's Utils.fnvhash64: FNV-1 over the 8 bytes of v, low byte first, in
// Java's signed arithmetic, then Math.abs.
uint64_t YcsbFnvHash64(uint64_t v);

class KeyChooser {
 public:
  // `base_count`: records loaded (the zipfian domain); `scrambled_items`:
  // the ids scrambled_zipfian folds its ranks onto (WorkloadSpec::
  // ScrambledZipfianItems).
  KeyChooser(Distribution distribution, uint64_t base_count, double theta, uint64_t seed,
             uint64_t scrambled_items = 0);
  // An id in [0, current_count) (0 if current_count is 0).
  uint64_t Choose(Rng* rng, uint64_t current_count) const;

 private:
  Distribution distribution_;
  Zipfian zipf_;
  Permutation scramble_;
  uint64_t scrambled_items_;
  std::shared_ptr<const GrowingZipfian> growing_;  // latest
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_KEYS_H_
