#include "driver/zipfian.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "driver/random.h"

namespace lsmbench {
namespace driver {
namespace {

TEST(ZipfianTest, ZetaApproximationIsAccurate) {
  const double theta = 0.99;
  const uint64_t n = 3000000;  // beyond the exact prefix of a million terms
  double exact = 0;
  for (uint64_t i = 1; i <= n; i++) exact += std::pow(static_cast<double>(i), -theta);
  EXPECT_NEAR(Zipfian::Zeta(n, theta), exact, exact * 1e-9);
}

TEST(ZipfianTest, RankFrequenciesFollowTheLaw) {
  const uint64_t n = 1000;
  const double theta = 0.99;
  Zipfian z(n, theta);
  const double zeta = Zipfian::Zeta(n, theta);
  std::vector<int> counts(n, 0);
  Rng rng(11);
  const int samples = 1000000;
  for (int i = 0; i < samples; i++) {
    const uint64_t r = z.Sample(rng.UniformDouble());
    ASSERT_LT(r, n);
    counts[r]++;
  }
  // P(rank i) = (i+1)^-theta / zeta for the two exactly-sampled ranks; the
  // rest follow Gray et al.'s approximation, checked over a band.
  EXPECT_NEAR(counts[0] / static_cast<double>(samples), 1.0 / zeta, 0.005);
  EXPECT_NEAR(counts[1] / static_cast<double>(samples), std::pow(2.0, -theta) / zeta, 0.005);
  double expected_top10 = 0;
  for (int i = 1; i <= 10; i++) expected_top10 += std::pow(i, -theta) / zeta;
  int top10 = 0;
  for (int i = 0; i < 10; i++) top10 += counts[i];
  EXPECT_NEAR(top10 / static_cast<double>(samples), expected_top10, 0.02);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
