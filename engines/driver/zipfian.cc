#include "driver/zipfian.h"

#include <algorithm>
#include <cmath>

namespace lsmbench {
namespace driver {

namespace {

// sum_{i=a..b} f(i) ~ integral_{a-1/2}^{b+1/2} f for smooth, slowly varying
// f = x^-theta: the terms from `from` + 1 to n.
double ZetaTail(uint64_t from, uint64_t n, double theta) {
  if (n <= from) return 0;
  const double lo = static_cast<double>(from) + 0.5;
  const double hi = static_cast<double>(n) + 0.5;
  return (std::pow(hi, 1 - theta) - std::pow(lo, 1 - theta)) / (1 - theta);
}

double Eta(uint64_t n, double theta, double zeta2, double zetan) {
  return n > 1 ? (1 - std::pow(2.0 / static_cast<double>(n), 1 - theta)) / (1 - zeta2 / zetan)
               : 0.0;
}

}  // namespace

double Zipfian::Zeta(uint64_t n, double theta) {
  constexpr uint64_t kExact = 1000000;
  const uint64_t exact = std::min(n, kExact);
  double sum = 0;
  for (uint64_t i = 1; i <= exact; i++) sum += std::pow(static_cast<double>(i), -theta);
  return sum + ZetaTail(exact, n, theta);
}

Zipfian::Zipfian(uint64_t n, double theta) : n_(std::max<uint64_t>(n, 1)), theta_(theta) {
  zetan_ = Zeta(n_, theta_);
  Init();
}

Zipfian::Zipfian(uint64_t n, double theta, double zetan)
    : n_(std::max<uint64_t>(n, 1)), theta_(theta), zetan_(zetan) {
  Init();
}

void Zipfian::Init() {
  alpha_ = 1.0 / (1.0 - theta_);
  const double zeta2 = Zeta(2, theta_);
  eta_ = Eta(n_, theta_, zeta2, zetan_);
  half_pow_theta_ = std::pow(0.5, theta_);
}

GrowingZipfian::GrowingZipfian(double theta, uint64_t items)
    : theta_(theta),
      alpha_(1.0 / (1.0 - theta)),
      zeta2_(Zipfian::Zeta(2, theta)),
      half_pow_theta_(std::pow(0.5, theta)),
      eta_numerator_(1 - std::pow(2.0 / static_cast<double>(std::max<uint64_t>(items, 2)),
                                  1 - theta)),
      zeta_(kExact + 1, 0.0) {
  for (uint64_t i = 1; i <= kExact; i++) {
    zeta_[i] = zeta_[i - 1] + std::pow(static_cast<double>(i), -theta);
  }
}

double GrowingZipfian::Zeta(uint64_t n) const {
  if (n <= kExact) return zeta_[n];
  return zeta_[kExact] + ZetaTail(kExact, n, theta_);
}

uint64_t GrowingZipfian::Sample(uint64_t n, double u) const {
  if (n == 0) return 0;
  const double zetan = Zeta(n);
  const double eta = eta_numerator_ / (1 - zeta2_ / zetan);
  return GrayZipfianRank(n, zetan, eta, alpha_, half_pow_theta_, u);
}

}  // namespace driver
}  // namespace lsmbench
