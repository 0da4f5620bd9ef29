// Counter-based randomness: every random choice of the driver is a pure
// function of (seed, stream, index), so a run is reproducible whatever
// thread happens to execute which operation.
#ifndef LSMBENCH_DRIVER_RANDOM_H_
#define LSMBENCH_DRIVER_RANDOM_H_

#include <cstdint>

namespace lsmbench {
namespace driver {

// The SplitMix64 finalizer: a bijection on 64-bit values with full avalanche.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t Hash64(uint64_t a, uint64_t b) {
  return Mix64(a * 0x9e3779b97f4a7c15ULL + Mix64(b + 0x632be59bd9b4e019ULL));
}

// SplitMix64: a small, fast generator; seeded per operation from Hash64.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  // Uniform in [0, n) (n > 0), by the multiply-shift method; the bias is
  // below n / 2^64.
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Uniform in [0, 1), 53 random bits.
  double UniformDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// A keyed bijection of [0, n): a balanced Feistel network over the smallest
// even number of bits covering n, cycle-walked back into range. Used to put
// key ids in random key order without storing a permutation.
class Permutation {
 public:
  Permutation(uint64_t n, uint64_t key);
  uint64_t n() const { return n_; }
  uint64_t Apply(uint64_t x) const;

 private:
  uint64_t Round(uint64_t half, int round) const;
  uint64_t n_;
  uint64_t key_;
  int half_bits_;
  uint64_t half_mask_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_RANDOM_H_
