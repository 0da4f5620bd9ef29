#include "driver/keys.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace lsmbench {
namespace driver {

namespace {

uint64_t Pow10(int digits) {
  uint64_t v = 1;
  for (int i = 0; i < std::min(digits, 19); i++) v *= 10;
  return v;
}

// ScrambledZipfianGenerator's constants (YCSB 0.17.0,
// generator/ScrambledZipfianGenerator.java:33-35): its zipfian is over 10^10
// items, and for theta 0.99 it uses this precomputed zeta.
constexpr uint64_t kScrambledZipfianItems = 10000000000ULL;
constexpr double kScrambledZipfianTheta = 0.99;
constexpr double kScrambledZipfianZeta = 26.46902820178302;

Zipfian MakeZipfian(Distribution distribution, uint64_t base_count, double theta) {
  switch (distribution) {
    case Distribution::kZipfian:
      return Zipfian(base_count, theta);
    case Distribution::kScrambledZipfian:
      if (theta == kScrambledZipfianTheta) {
        return Zipfian(kScrambledZipfianItems, theta, kScrambledZipfianZeta);
      }
      return Zipfian(kScrambledZipfianItems, theta);
    default:
      // Only the zipfian choosers need zeta, which costs ~10 ms to compute.
      return Zipfian(1, theta);
  }
}

// A redrawn id: how many tries before taking the draw modulo the ids there
// are (only a scrambled domain far wider than the ids inserted gets there).
constexpr int kMaxRedraws = 64;

}  // namespace

KeyFormatter::KeyFormatter(uint32_t key_size, const std::string& prefix, uint64_t seed,
                           InsertOrder order)
    : key_size_(key_size),
      prefix_(prefix),
      permutation_(Pow10(static_cast<int>(key_size) - static_cast<int>(prefix.size())),
                   Hash64(seed, 0x6b657973)),
      ordered_(order == InsertOrder::kOrdered) {}

void KeyFormatter::Format(uint64_t id, char* out) const {
  std::memcpy(out, prefix_.data(), prefix_.size());
  const uint64_t wrapped = id % permutation_.n();
  uint64_t v = ordered_ ? wrapped : permutation_.Apply(wrapped);
  char* p = out + key_size_;
  char* const digits_begin = out + prefix_.size();
  while (p > digits_begin) {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

uint64_t YcsbFnvHash64(uint64_t v) {
  constexpr uint64_t kOffsetBasis = 0xCBF29CE484222325ULL;
  constexpr uint64_t kPrime = 1099511628211ULL;
  uint64_t hash = kOffsetBasis;
  for (int i = 0; i < 8; i++) {
    hash ^= v & 0xff;
    // Java's `val >> 8` on a long is arithmetic: the sign bit comes back in.
    v = static_cast<uint64_t>(static_cast<int64_t>(v) >> 8);
    hash *= kPrime;
  }
  const int64_t signed_hash = static_cast<int64_t>(hash);
  // Math.abs(Long.MIN_VALUE) is Long.MIN_VALUE; as unsigned it is 2^63.
  return signed_hash < 0 ? 0 - hash : hash;
}

KeyChooser::KeyChooser(Distribution distribution, uint64_t base_count, double theta,
                       uint64_t seed, uint64_t scrambled_items)
    : distribution_(distribution),
      zipf_(MakeZipfian(distribution, base_count, theta)),
      scramble_(std::max<uint64_t>(base_count, 1), Hash64(seed, 0x7a697066)),
      scrambled_items_(std::max<uint64_t>(scrambled_items > 0 ? scrambled_items : base_count + 1,
                                          1)) {
  // SkewedLatestGenerator makes its zipfian with the newest loaded key number.
  if (distribution == Distribution::kLatest) {
    growing_ = std::make_shared<GrowingZipfian>(theta, base_count > 0 ? base_count - 1 : 0);
  }
}

uint64_t KeyChooser::Choose(Rng* rng, uint64_t current_count) const {
  if (current_count == 0) return 0;
  switch (distribution_) {
    case Distribution::kUniform:
      return rng->Uniform(current_count);
    case Distribution::kZipfian: {
      const uint64_t id = scramble_.Apply(zipf_.Sample(rng->UniformDouble()));
      return id < current_count ? id : id % current_count;
    }
    case Distribution::kScrambledZipfian: {
      uint64_t id = 0;
      for (int i = 0; i < kMaxRedraws; i++) {
        id = YcsbFnvHash64(zipf_.Sample(rng->UniformDouble())) % scrambled_items_;
        if (id < current_count) return id;
      }
      return id % current_count;
    }
    case Distribution::kLatest: {
      if (current_count < 2) return 0;
      const uint64_t newest = current_count - 1;
      return newest - growing_->Sample(newest, rng->UniformDouble());
    }
  }
  return 0;
}

}  // namespace driver
}  // namespace lsmbench
