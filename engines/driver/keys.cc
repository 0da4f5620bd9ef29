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

KeyFormatter::KeyFormatter(uint32_t key_size, const std::string& prefix, uint64_t seed)
    : key_size_(key_size),
      prefix_(prefix),
      permutation_(Pow10(static_cast<int>(key_size) - static_cast<int>(prefix.size())),
                   Hash64(seed, 0x6b657973)) {}

void KeyFormatter::Format(uint64_t id, char* out) const {
  std::memcpy(out, prefix_.data(), prefix_.size());
  uint64_t v = permutation_.Apply(id % permutation_.n());
  char* p = out + key_size_;
  char* const digits_begin = out + prefix_.size();
  while (p > digits_begin) {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

double Zipfian::Zeta(uint64_t n, double theta) {
  constexpr uint64_t kExact = 1000000;
  const uint64_t exact = std::min(n, kExact);
  double sum = 0;
  for (uint64_t i = 1; i <= exact; i++) sum += std::pow(static_cast<double>(i), -theta);
  if (n > exact) {
    // sum_{i=a..b} f(i) ~ integral_{a-1/2}^{b+1/2} f for smooth, slowly
    // varying f; here a = exact + 1.
    const double lo = static_cast<double>(exact) + 0.5;
    const double hi = static_cast<double>(n) + 0.5;
    sum += (std::pow(hi, 1 - theta) - std::pow(lo, 1 - theta)) / (1 - theta);
  }
  return sum;
}

Zipfian::Zipfian(uint64_t n, double theta) : n_(std::max<uint64_t>(n, 1)), theta_(theta) {
  alpha_ = 1.0 / (1.0 - theta_);
  zetan_ = Zeta(n_, theta_);
  const double zeta2 = Zeta(2, theta_);
  eta_ = n_ > 1 ? (1 - std::pow(2.0 / static_cast<double>(n_), 1 - theta_)) / (1 - zeta2 / zetan_)
                : 0.0;
  half_pow_theta_ = std::pow(0.5, theta_);
}

uint64_t Zipfian::Sample(double u) const {
  const double uz = u * zetan_;
  if (uz < 1.0) return 0;
  if (n_ > 1 && uz < 1.0 + half_pow_theta_) return 1;
  const double r = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_);
  return std::min(static_cast<uint64_t>(r), n_ - 1);
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
