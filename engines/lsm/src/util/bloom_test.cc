#include "util/bloom.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "util/coding.h"
#include "util/hash.h"

namespace lsm {
namespace {

std::string Key(uint64_t i) {
  std::string s;
  PutFixed64(&s, i);
  return s;
}

TEST(BloomTest, EmptyFilterMatchesNothing) {
  EXPECT_FALSE(BloomKeyMayMatch("hello", ""));
  std::string filter;
  CreateBloomFilter(nullptr, 0, 10, &filter);
  EXPECT_FALSE(BloomKeyMayMatch("hello", filter));
  EXPECT_FALSE(BloomKeyMayMatch("", filter));
}

TEST(BloomTest, SmallFilter) {
  std::vector<std::string_view> keys = {"hello", "world", ""};
  std::string filter;
  CreateBloomFilter(keys.data(), keys.size(), 10, &filter);
  EXPECT_TRUE(BloomKeyMayMatch("hello", filter));
  EXPECT_TRUE(BloomKeyMayMatch("world", filter));
  EXPECT_TRUE(BloomKeyMayMatch("", filter));
  EXPECT_FALSE(BloomKeyMayMatch("x", filter));
  EXPECT_FALSE(BloomKeyMayMatch("foo", filter));
}

TEST(BloomTest, ProbesClamped) {
  std::vector<std::string_view> keys = {"a"};
  std::string filter;
  CreateBloomFilter(keys.data(), keys.size(), 1000, &filter);
  EXPECT_EQ(static_cast<uint8_t>(filter.back()), 30);
  filter.clear();
  CreateBloomFilter(keys.data(), keys.size(), 1, &filter);
  EXPECT_EQ(static_cast<uint8_t>(filter.back()), 1);
  filter.clear();
  CreateBloomFilter(keys.data(), keys.size(), 10, &filter);
  EXPECT_EQ(static_cast<uint8_t>(filter.back()), 6);
}

TEST(BloomTest, UnknownProbeCountMatchesAll) {
  std::string filter(9, '\0');
  filter.back() = 31;  // reserved encoding
  EXPECT_TRUE(BloomKeyMayMatch("anything", filter));
}

TEST(BloomTest, BuilderEqualsBatch) {
  std::vector<std::string> owned;
  BloomFilterBuilder builder(10);
  for (int i = 0; i < 1000; i++) {
    owned.push_back("key" + std::to_string(i));
    builder.AddKey(owned.back());
  }
  std::vector<std::string_view> keys(owned.begin(), owned.end());
  std::string batch, incremental;
  CreateBloomFilter(keys.data(), keys.size(), 10, &batch);
  builder.Finish(&incremental);
  EXPECT_EQ(batch, incremental);
  EXPECT_EQ(builder.NumKeys(), 1000u);

  // A size hint equal to the key count gives the same filter, built without
  // keeping the hashes.
  BloomFilterBuilder hinted(10, 1000);
  for (const auto& k : owned) hinted.AddKey(k);
  std::string from_hint;
  hinted.Finish(&from_hint);
  EXPECT_EQ(batch, from_hint);
}

TEST(BloomTest, SizeHint) {
  // An overestimate (a merge's input count, before duplicates vanish) only
  // makes the filter larger and more precise; an underestimate less so.
  for (uint64_t hint : {5000u, 20000u, 40000u}) {
    BloomFilterBuilder b(10, hint);
    for (int i = 0; i < 10000; i++) b.AddKey(Key(i));
    std::string filter;
    b.Finish(&filter);
    EXPECT_EQ(filter.size(), hint * 10 / 8 + 1);
    for (int i = 0; i < 10000; i++) ASSERT_TRUE(BloomKeyMayMatch(Key(i), filter));
    int fp = 0;
    for (int i = 0; i < 10000; i++) fp += BloomKeyMayMatch(Key(i + 1000000000), filter);
    std::printf("hint %llu for 10000 keys: %.2f %% false positives\n",
                static_cast<unsigned long long>(hint), fp / 100.0);
    if (hint == 20000) {
      EXPECT_LT(fp, 30);  // ~0.05 % expected at 20 bits per key
    }
    if (hint == 5000) {
      EXPECT_GT(fp, 300);  // ~9 % expected at 5 bits per key with 6 probes
    }
  }
}

// The filter's bits are part of the table format: pin the hash.
TEST(BloomTest, HashIsStable) {
  EXPECT_EQ(Hash64("", 0), Hash64("", 0));
  EXPECT_NE(Hash64("a", 0), Hash64("b", 0));
  EXPECT_NE(Hash64("a", 0), Hash64("a", 1));
  EXPECT_NE(Hash64(std::string_view("\0", 1)), Hash64(std::string_view("\0\0", 2)));
  EXPECT_EQ(Hash64("a", 0), Hash64(std::string("a"), 0));
  EXPECT_EQ(Hash64("lsmbench"), 0x4897bf33261ee076ull);
  const char* raw = "lsmbench";
  EXPECT_EQ(Hash64("lsmbench", 0), Hash64(raw, 8, 0));
}

// Every length from 0 to a few hundred keys, at several bits per key: no
// false negative, and the false positive rate stays sane.
TEST(BloomTest, VaryingLengths) {
  int mediocre = 0, good = 0;
  for (int bits_per_key : {5, 10, 20}) {
    for (int n = 1; n <= 5000; n = n < 10 ? n + 1 : n + n / 3) {
      std::vector<std::string> owned;
      for (int i = 0; i < n; i++) owned.push_back(Key(i));
      std::vector<std::string_view> keys(owned.begin(), owned.end());
      std::string filter;
      CreateBloomFilter(keys.data(), keys.size(), bits_per_key, &filter);
      ASSERT_LE(filter.size(), static_cast<size_t>(n * bits_per_key / 8 + 10));
      for (const auto& k : keys) ASSERT_TRUE(BloomKeyMayMatch(k, filter)) << n;
      int fp = 0;
      for (int i = 0; i < 10000; i++) fp += BloomKeyMayMatch(Key(i + 1000000000), filter);
      const double rate = fp / 10000.0;
      if (bits_per_key == 10) {
        ASSERT_LE(rate, 0.03) << n;
        (rate > 0.0125 ? mediocre : good)++;
      }
    }
  }
  std::printf("10 bits/key: good %d mediocre %d\n", good, mediocre);
  EXPECT_LE(mediocre, good / 5);
}

TEST(BloomTest, FalsePositiveRate) {
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937_64 rng(seed);
  constexpr int kKeys = 100000;
  // Random binary keys of random length; the absent probes are drawn from a
  // disjoint space (different length range) so they are truly absent.
  std::vector<std::string> owned(kKeys);
  for (auto& k : owned) {
    k.resize(8 + rng() % 24);
    for (char& c : k) c = static_cast<char>(rng());
  }
  std::vector<std::string_view> keys(owned.begin(), owned.end());
  std::string filter;
  CreateBloomFilter(keys.data(), keys.size(), 10, &filter);
  for (const auto& k : keys) ASSERT_TRUE(BloomKeyMayMatch(k, filter));

  int fp = 0;
  std::string probe;
  for (int i = 0; i < kKeys; i++) {
    probe.resize(32 + rng() % 8);
    for (char& c : probe) c = static_cast<char>(rng());
    fp += BloomKeyMayMatch(probe, filter);
  }
  const double rate = static_cast<double>(fp) / kKeys;
  std::printf("false positive rate at 10 bits/key: %.4f %% (%d of %d)\n", rate * 100, fp, kKeys);
  EXPECT_GE(rate, 0.005);
  EXPECT_LE(rate, 0.02);

  // Sequential keys (the common case of a benchmark) must not hash worse.
  std::vector<std::string> seq_owned;
  for (int i = 0; i < kKeys; i++) seq_owned.push_back("user" + std::to_string(i));
  std::vector<std::string_view> seq(seq_owned.begin(), seq_owned.end());
  std::string seq_filter;
  CreateBloomFilter(seq.data(), seq.size(), 10, &seq_filter);
  for (const auto& k : seq) ASSERT_TRUE(BloomKeyMayMatch(k, seq_filter));
  int seq_fp = 0;
  for (int i = kKeys; i < 2 * kKeys; i++) {
    seq_fp += BloomKeyMayMatch("user" + std::to_string(i), seq_filter);
  }
  const double seq_rate = static_cast<double>(seq_fp) / kKeys;
  std::printf("false positive rate, sequential keys: %.4f %%\n", seq_rate * 100);
  EXPECT_GE(seq_rate, 0.005);
  EXPECT_LE(seq_rate, 0.02);
}

}  // namespace
}  // namespace lsm
