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

KeyChooser::KeyChooser(Distribution distribution, uint64_t base_count, double theta,
                       uint64_t seed)
    : distribution_(distribution),
      // Only the zipfian choosers need zeta, which costs ~10 ms to compute.
      zipf_(distribution == Distribution::kUniform ? 1 : base_count, theta),
      scramble_(std::max<uint64_t>(base_count, 1), Hash64(seed, 0x7a697066)) {}

uint64_t KeyChooser::Choose(Rng* rng, uint64_t current_count) const {
  if (current_count == 0) return 0;
  switch (distribution_) {
    case Distribution::kUniform:
      return rng->Uniform(current_count);
    case Distribution::kZipfian: {
      const uint64_t id = scramble_.Apply(zipf_.Sample(rng->UniformDouble()));
      return id < current_count ? id : id % current_count;
    }
    case Distribution::kLatest: {
      const uint64_t back = zipf_.Sample(rng->UniformDouble());
      return back < current_count ? current_count - 1 - back : 0;
    }
  }
  return 0;
}

}  // namespace driver
}  // namespace lsmbench
