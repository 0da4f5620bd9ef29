#include "driver/zipfian.h"

#include <algorithm>
#include <cmath>

namespace lsmbench {
namespace driver {

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

}  // namespace driver
}  // namespace lsmbench
