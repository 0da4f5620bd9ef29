#include "driver/random.h"

#include <cassert>

namespace lsmbench {
namespace driver {

Permutation::Permutation(uint64_t n, uint64_t key) : n_(n), key_(Mix64(key ^ 0x5bd1e995u)) {
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
}

uint64_t Permutation::Round(uint64_t half, int round) const {
  return Mix64(half ^ (key_ + static_cast<uint64_t>(round) * 0x9e3779b97f4a7c15ULL)) &
         half_mask_;
}

uint64_t Permutation::Apply(uint64_t x) const {
  assert(x < n_);
  // The Feistel domain is less than 4n, so each walk step lands in range
  // with probability > 1/4 and the expected number of steps is below 4.
  do {
    uint64_t left = x >> half_bits_;
    uint64_t right = x & half_mask_;
    for (int r = 0; r < 4; r++) {
      const uint64_t next = left ^ Round(right, r);
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= n_);
  return x;
}

}  // namespace driver
}  // namespace lsmbench
