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
#include <vector>

namespace lsmbench {
namespace driver {

// Gray et al.'s draw of a rank in [0, n) from u uniform in [0, 1), given
// zeta(n), eta and alpha = 1 / (1 - theta).
inline uint64_t GrayZipfianRank(uint64_t n, double zetan, double eta, double alpha,
                                double half_pow_theta, double u) {
  const double uz = u * zetan;
  if (uz < 1.0) return 0;
  if (n > 1 && uz < 1.0 + half_pow_theta) return 1;
  const double r = static_cast<double>(n) * std::pow(eta * u - eta + 1, alpha);
  return std::min(static_cast<uint64_t>(r), n - 1);
}

// Draws zipfian ranks in [0, n) with parameter theta in (0, 1).
class Zipfian {
 public:
  Zipfian(uint64_t n, double theta);
  // With zeta(n) given (YCSB precomputes it for its 10^10-item generator).
  Zipfian(uint64_t n, double theta, double zetan);
  // u uniform in [0, 1). Inline: the driver's key choice calls it per
  // operation.
  uint64_t Sample(double u) const {
    return GrayZipfianRank(n_, zetan_, eta_, alpha_, half_pow_theta_, u);
  }
  uint64_t n() const { return n_; }

  // sum_{i=1..n} i^-theta: exact for the first million terms, then by the
  // midpoint integral, whose error is far below the sampling noise.
  static double Zeta(uint64_t n, double theta);

 private:
  void Init();
  uint64_t n_;
  double theta_, alpha_, zetan_, eta_, half_pow_theta_;
};

// Zipfian ranks over a domain whose size is given per draw, as YCSB's
// ZipfianGenerator.nextLong(itemcount) draws after its item count grew
// (SkewedLatestGenerator's count is the newest key number). Like YCSB's, it
// recomputes zeta for the new count but keeps the count it was made with in
// eta's (1 - (2 / items)^(1 - theta)): YCSB 0.17.0 does, and workload D's
// recency depends on it (0.69 of the reads in the newest 10 % of the keys,
// 0.71 with eta recomputed whole). zeta(n) is a table up to kExact, then the
// midpoint integral beyond, so a draw costs O(1) whatever n is.
class GrowingZipfian {
 public:
  // `items`: the count at construction (at least 2).
  GrowingZipfian(double theta, uint64_t items);
  // A rank in [0, n) (0 if n is 0).
  uint64_t Sample(uint64_t n, double u) const;
  double Zeta(uint64_t n) const;

  static constexpr uint64_t kExact = 1 << 16;

 private:
  double theta_, alpha_, zeta2_, half_pow_theta_;
  double eta_numerator_;      // 1 - (2 / items)^(1 - theta)
  std::vector<double> zeta_;  // zeta_[i] = sum_{k=1..i} k^-theta
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ZIPFIAN_H_
