#include "table/block.h"

#include <gtest/gtest.h>

#include "table/test_util.h"

#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "table/block_builder.h"
#include "util/coding.h"

namespace lsm {
namespace {

using test::Model;
using test::Seed;
using test::Val;

// Keys over a tiny alphabet that includes \0 and \xff, so that prefixes are
// shared often and the byte order edge cases show up.
std::string RandomKey(std::mt19937* rng, size_t max_len) {
  static const char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\x7f', '\x80', '\xfe', '\xff'};
  std::string k((*rng)() % (max_len + 1), '\0');
  for (char& c : k) c = kAlphabet[(*rng)() % sizeof(kAlphabet)];
  return k;
}

Model RandomModel(std::mt19937* rng, int n) {
  Model m;
  while (static_cast<int>(m.size()) < n) {
    const bool del = (*rng)() % 10 == 0;
    std::string value = del ? "" : std::string((*rng)() % 200, static_cast<char>((*rng)()));
    m[RandomKey(rng, 12)] = Val{del ? ValueType::kDeletion : ValueType::kValue, value};
  }
  return m;
}

std::string BuildBlock(const Model& m, int restart_interval) {
  BlockBuilder b(restart_interval);
  for (const auto& [k, v] : m) b.Add(k, v.type, v.value);
  return std::string(b.Finish());
}

void ExpectAt(const BlockIter& it, Model::const_iterator expected, const Model& m) {
  if (expected == m.end()) {
    ASSERT_FALSE(it.Valid());
    return;
  }
  ASSERT_TRUE(it.Valid());
  ASSERT_EQ(it.key(), expected->first);
  ASSERT_EQ(it.type(), expected->second.type);
  ASSERT_EQ(it.value(), expected->second.value);
}

class BlockRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(BlockRoundTrip, IterateAndSeek) {
  const int restart_interval = GetParam();
  std::mt19937 rng(Seed());
  for (int n : {1, 2, 15, 16, 17, 100, 1000}) {
    const Model m = RandomModel(&rng, n);
    const std::string block = BuildBlock(m, restart_interval);
    BlockIter it;
    ASSERT_TRUE(it.Init(block));
    EXPECT_EQ(it.num_restarts(),
              static_cast<uint32_t>((n + restart_interval - 1) / restart_interval));

    it.SeekToFirst();
    for (auto e = m.begin(); e != m.end(); ++e) {
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, e, m));
      it.Next();
    }
    EXPECT_FALSE(it.Valid());
    EXPECT_FALSE(it.corrupted());

    // Seek to every key, to keys between them and to random targets.
    for (const auto& [k, v] : m) {
      it.Seek(k);
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, m.find(k), m));
      const std::string after = k + std::string(1, '\0');
      it.Seek(after);
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, m.lower_bound(after), m));
    }
    for (int i = 0; i < 200; i++) {
      const std::string target = RandomKey(&rng, 14);
      it.Seek(target);
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, m.lower_bound(target), m));
      // Keep scanning from a seek position.
      auto e = m.lower_bound(target);
      for (int j = 0; j < 20 && e != m.end(); j++) {
        ASSERT_NO_FATAL_FAILURE(ExpectAt(it, e, m));
        it.Next();
        ++e;
      }
    }
    it.Seek(std::string(20, '\xff'));
    EXPECT_FALSE(it.Valid());
    EXPECT_FALSE(it.corrupted());
  }
}

INSTANTIATE_TEST_SUITE_P(RestartIntervals, BlockRoundTrip, ::testing::Values(1, 2, 16));

TEST(BlockTest, EmptyBlock) {
  BlockBuilder b(16);
  EXPECT_TRUE(b.empty());
  const std::string block(b.Finish());
  EXPECT_EQ(block.size(), 8u);  // one restart offset and the count
  BlockIter it;
  ASSERT_TRUE(it.Init(block));
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.Seek("");
  EXPECT_FALSE(it.Valid());
  EXPECT_FALSE(it.corrupted());
}

TEST(BlockTest, EmptyKeyAndEmptyValue) {
  BlockBuilder b(16);
  b.Add("", ValueType::kValue, "");
  b.Add(std::string_view("\0", 1), ValueType::kDeletion, "");
  b.Add("a", ValueType::kValue, "v");
  const std::string block(b.Finish());
  BlockIter it;
  ASSERT_TRUE(it.Init(block));
  it.Seek("");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "");
  EXPECT_EQ(it.type(), ValueType::kValue);
  EXPECT_EQ(it.value(), "");
  it.Next();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), std::string_view("\0", 1));
  EXPECT_EQ(it.type(), ValueType::kDeletion);
  it.Next();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "a");
  EXPECT_EQ(it.value(), "v");
}

TEST(BlockTest, DeletionDropsValue) {
  BlockBuilder b(16);
  b.Add("k", ValueType::kDeletion, "ignored");
  const std::string block(b.Finish());
  BlockIter it;
  ASSERT_TRUE(it.Init(block));
  it.SeekToFirst();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.type(), ValueType::kDeletion);
  EXPECT_EQ(it.value(), "");
}

TEST(BlockTest, PrefixCompression) {
  BlockBuilder b(16);
  size_t raw = 0;
  for (int i = 0; i < 160; i++) {
    char key[64];
    std::snprintf(key, sizeof(key), "user_profile_%010d", i);
    b.Add(key, ValueType::kValue, "v");
    raw += std::strlen(key) + 1;
  }
  const size_t size = b.Finish().size();
  // 23-byte keys share ~20 bytes with their predecessor except at the 10
  // restart points.
  EXPECT_LT(size, raw / 3) << size << " vs raw " << raw;
}

TEST(BlockTest, LongKeysAndValues) {
  BlockBuilder b(16);
  const std::string long_key(70000, 'k');
  const std::string long_value(300000, 'v');
  b.Add("a", ValueType::kValue, long_value);
  b.Add(long_key, ValueType::kValue, "x");
  b.Add(long_key + "z", ValueType::kValue, long_value);
  const std::string block(b.Finish());
  BlockIter it;
  ASSERT_TRUE(it.Init(block));
  it.Seek(long_key + "a");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), long_key + "z");
  EXPECT_EQ(it.value(), long_value);
}

TEST(BlockTest, MalformedRestartArray) {
  BlockIter it;
  EXPECT_FALSE(it.Init(""));
  EXPECT_TRUE(it.corrupted());
  EXPECT_FALSE(it.Init(std::string_view("\0\0\0", 3)));
  std::string zero_restarts(8, '\0');
  EXPECT_FALSE(it.Init(zero_restarts));
  std::string too_many;
  PutFixed32(&too_many, 0);
  PutFixed32(&too_many, 2);  // two restarts need 12 bytes
  EXPECT_FALSE(it.Init(too_many));
  // A restart offset beyond the entries.
  BlockBuilder b(1);
  b.Add("a", ValueType::kValue, "1");
  b.Add("b", ValueType::kValue, "2");
  std::string block(b.Finish());
  EncodeFixed32(&block[block.size() - 8], 1000);  // second restart offset
  ASSERT_TRUE(it.Init(block));
  it.Seek("b");
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.corrupted());
}

TEST(BlockTest, TruncatedEntryIsCorruption) {
  BlockBuilder b(16);
  b.Add("key1", ValueType::kValue, "value1");
  b.Add("key2", ValueType::kValue, "value2");
  std::string block(b.Finish());
  // Claim a longer value for the second entry than the block holds.
  // Entry 2 starts after entry 1 (3 header bytes + 4 key + 6 value).
  block[13 + 2] = static_cast<char>((60 << 1) | 1);
  BlockIter it;
  ASSERT_TRUE(it.Init(block));
  it.SeekToFirst();
  ASSERT_TRUE(it.Valid());
  it.Next();
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.corrupted());
}

// Random damage must never make the iterator read outside the block (the
// sanitizer build catches that); it ends either cleanly or corrupted.
TEST(BlockTest, RandomDamageNeverReadsOutOfBounds) {
  std::mt19937 rng(Seed());
  const Model m = RandomModel(&rng, 300);
  const std::string good = BuildBlock(m, 16);
  for (int trial = 0; trial < 3000; trial++) {
    std::string bad = good;
    const int flips = 1 + rng() % 4;
    for (int i = 0; i < flips; i++) bad[rng() % bad.size()] = static_cast<char>(rng());
    if (trial % 7 == 0) bad.resize(rng() % bad.size());
    // Copy to an exactly sized heap buffer so any overread is detected.
    auto buf = std::make_unique<char[]>(bad.size() + 1);
    std::memcpy(buf.get(), bad.data(), bad.size());
    const std::string_view contents(buf.get(), bad.size());
    BlockIter it;
    if (!it.Init(contents)) continue;
    size_t steps = 0;
    unsigned sum = 0;  // reads every byte of every view
    for (it.SeekToFirst(); it.Valid() && steps < 10000; it.Next()) {
      steps++;
      for (char c : it.key()) sum += static_cast<uint8_t>(c);
      for (char c : it.value()) sum += static_cast<uint8_t>(c);
    }
    (void)sum;
    for (int i = 0; i < 5; i++) {
      it.Seek(RandomKey(&rng, 12));
      if (it.Valid()) {
        ASSERT_GE(it.value().data(), contents.data());
        ASSERT_LE(it.value().data() + it.value().size(), contents.data() + contents.size());
      }
    }
  }
}

}  // namespace
}  // namespace lsm
