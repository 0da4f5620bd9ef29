#include "driver/keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "driver/random.h"

namespace lsmbench {
namespace driver {
namespace {

TEST(PermutationTest, IsABijectionForManySizes) {
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 10ULL, 63ULL, 64ULL, 65ULL, 1000ULL, 4097ULL, 100000ULL}) {
    Permutation p(n, 42);
    std::vector<bool> seen(n, false);
    for (uint64_t x = 0; x < n; x++) {
      const uint64_t y = p.Apply(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << "n=" << n << " collision at " << x;
      seen[y] = true;
    }
  }
}

TEST(PermutationTest, ShufflesAndDependsOnTheKey) {
  Permutation a(1000000, 1), b(1000000, 2);
  int fixed = 0, same = 0, ascending = 0;
  for (uint64_t x = 0; x < 10000; x++) {
    fixed += a.Apply(x) == x;
    same += a.Apply(x) == b.Apply(x);
    ascending += a.Apply(x + 1) > a.Apply(x);
  }
  EXPECT_LT(fixed, 10);
  EXPECT_LT(same, 10);
  EXPECT_NEAR(ascending, 5000, 300);  // a random order, not a rotation
}

TEST(PermutationTest, HugeDomains) {
  const uint64_t n = 10000000000000000000ULL;  // 10^19, the largest key space
  Permutation p(n, 9);
  std::set<uint64_t> out;
  for (uint64_t x = 0; x < 1000; x++) {
    const uint64_t y = p.Apply(x);
    ASSERT_LT(y, n);
    out.insert(y);
  }
  EXPECT_EQ(out.size(), 1000u);
}

TEST(KeyFormatterTest, FixedSizeDistinctAndInRandomKeyOrder) {
  KeyFormatter f(16, "user", 5);
  EXPECT_EQ(f.capacity(), 1000000000000ULL);
  std::set<std::string> keys;
  std::string prev, key(16, '\0');
  int ascending = 0;
  for (uint64_t id = 0; id < 20000; id++) {
    f.Format(id, key.data());
    ASSERT_EQ(key.substr(0, 4), "user");
    for (size_t i = 4; i < 16; i++) ASSERT_TRUE(isdigit(key[i])) << key;
    keys.insert(key);
    if (id > 0 && key > prev) ascending++;
    prev = key;
  }
  EXPECT_EQ(keys.size(), 20000u);
  // Loading ids in order must insert in random key order.
  EXPECT_NEAR(ascending, 10000, 500);
}

TEST(KeyFormatterTest, LongKeysArePadded) {
  KeyFormatter f(40, "k", 1);
  std::string key(40, '\0');
  f.Format(12345, key.data());
  EXPECT_EQ(key[0], 'k');
  EXPECT_EQ(key.size(), 40u);
  // 39 digit positions but only 19 significant: leading zeros.
  EXPECT_EQ(key.substr(1, 20), std::string(20, '0'));
}

TEST(KeyChooserTest, UniformCoversTheCurrentIds) {
  KeyChooser c(Distribution::kUniform, 100, 0.99, 1);
  Rng rng(2);
  std::vector<int> counts(150, 0);
  for (int i = 0; i < 150000; i++) {
    const uint64_t id = c.Choose(&rng, 150);
    ASSERT_LT(id, 150u);
    counts[id]++;
  }
  for (int x : counts) EXPECT_NEAR(x, 1000, 200);
  EXPECT_EQ(c.Choose(&rng, 0), 0u);
}

TEST(KeyChooserTest, ZipfianIsScrambledAndSkewed) {
  const uint64_t n = 10000;
  KeyChooser c(Distribution::kZipfian, n, 0.99, 1);
  Rng rng(3);
  std::vector<int> counts(n, 0);
  for (int i = 0; i < 200000; i++) counts[c.Choose(&rng, n)]++;
  const int hottest = static_cast<int>(std::max_element(counts.begin(), counts.end()) -
                                       counts.begin());
  // The hottest record carries ~1/zeta(n) of the accesses, and it is not
  // simply id 0 (the first record loaded).
  EXPECT_NEAR(counts[hottest] / 200000.0, 1.0 / Zipfian::Zeta(n, 0.99), 0.01);
  EXPECT_NE(hottest, 0);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
