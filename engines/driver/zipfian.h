// Zipfian ranks by Gray et al.'s method ("Quickly generating billion-record
// synthetic databases", SIGMOD 1994), as YCSB draws them. Used by the
// driver's key choosers (keys.h) and by lsm-sim-validate's updates (Mao et
// al.'s Fig. 4); kept apart from keys.h so that the simulator can link it
// without the driver's workload and JSON code.
#ifndef LSMBENCH_DRIVER_ZIPFIAN_H_
#define LSMBENCH_DRIVER_ZIPFIAN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace lsmbench {
namespace driver {

// Draws zipfian ranks in [0, n) with parameter theta in (0, 1).
class Zipfian {
 public:
  Zipfian(uint64_t n, double theta);
  // u uniform in [0, 1). Inline: the driver's key choice calls it per
  // operation (it was inlined there when it lived in keys.cc).
  uint64_t Sample(double u) const {
    const double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (n_ > 1 && uz < 1.0 + half_pow_theta_) return 1;
    const double r = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_);
    return std::min(static_cast<uint64_t>(r), n_ - 1);
  }
  uint64_t n() const { return n_; }

  // sum_{i=1..n} i^-theta: exact for the first million terms, then by the
  // midpoint integral, whose error is far below the sampling noise.
  static double Zeta(uint64_t n, double theta);

 private:
  uint64_t n_;
  double theta_, alpha_, zetan_, eta_, half_pow_theta_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ZIPFIAN_H_
