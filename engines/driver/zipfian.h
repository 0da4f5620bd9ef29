// Zipfian ranks by Gray et al.'s method ("Quickly generating billion-record
// synthetic databases", SIGMOD 1994), as YCSB draws them. Used by the
// driver's key choosers (keys.h) and by lsm-sim-validate's updates (Mao et
// al.'s Fig. 4); kept apart from keys.h so that the simulator can link it
// without the driver's workload and JSON code.
#ifndef LSMBENCH_DRIVER_ZIPFIAN_H_
#define LSMBENCH_DRIVER_ZIPFIAN_H_

#include <cstdint>

namespace lsmbench {
namespace driver {

// Draws zipfian ranks in [0, n) with parameter theta in (0, 1).
class Zipfian {
 public:
  Zipfian(uint64_t n, double theta);
  uint64_t Sample(double u) const;  // u uniform in [0, 1)
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
