#include "db/version.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "db/test_util.h"

namespace lsm {
namespace {

// Only the key range and level matter to the read order: no table.
ComponentPtr Meta(uint64_t number, int level, std::string smallest, std::string largest) {
  return std::make_shared<ComponentFile>(
      test::MakeMeta(number, level, std::move(smallest), std::move(largest)), nullptr, nullptr, "");
}

std::vector<uint64_t> Numbers(const ReadSource& source) {
  std::vector<uint64_t> out;
  for (const ComponentFile* f : source.files) out.push_back(f->meta().number);
  return out;
}

uint64_t Found(const ReadSource& source, std::string_view key) {
  const ComponentFile* f = source.Candidate(key);
  return f == nullptr ? 0 : f->meta().number;
}

TEST(VersionTest, PartitionedLevelsAreOneSourceEach) {
  Version v;
  // Level blocks, deepest first; within a level in no particular order.
  v.stack = {Meta(1, 2, "m", "p"), Meta(2, 2, "a", "f"), Meta(3, 1, "c", "k"),
             Meta(4, 0, "a", "z"), Meta(5, 0, "b", "c")};
  v.Index(/*partitioned=*/true);
  ASSERT_EQ(4u, v.read_order.size());
  EXPECT_EQ((std::vector<uint64_t>{5}), Numbers(v.read_order[0]));  // newest first
  EXPECT_EQ((std::vector<uint64_t>{4}), Numbers(v.read_order[1]));
  EXPECT_EQ((std::vector<uint64_t>{3}), Numbers(v.read_order[2]));
  EXPECT_EQ((std::vector<uint64_t>{2, 1}), Numbers(v.read_order[3]));  // sorted by key

  v.Index(/*partitioned=*/false);
  ASSERT_EQ(5u, v.read_order.size());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((std::vector<uint64_t>{5 - i}), Numbers(v.read_order[i]));
  }
}

TEST(VersionTest, CandidateIsTheFileWhoseRangeHoldsTheKey) {
  Version v;
  v.stack = {Meta(7, 1, "k", "n"), Meta(8, 1, "c", "e"), Meta(9, 1, "f", "f")};
  v.Index(true);
  ASSERT_EQ(1u, v.read_order.size());
  const ReadSource& level = v.read_order[0];
  EXPECT_EQ(0u, Found(level, "a"));   // before the first file
  EXPECT_EQ(8u, Found(level, "c"));   // its smallest
  EXPECT_EQ(8u, Found(level, "d"));
  EXPECT_EQ(8u, Found(level, "e"));   // its largest
  EXPECT_EQ(0u, Found(level, "e0"));  // between files
  EXPECT_EQ(9u, Found(level, "f"));   // a one-key file
  EXPECT_EQ(0u, Found(level, "g"));
  EXPECT_EQ(7u, Found(level, "k"));
  EXPECT_EQ(7u, Found(level, "n"));
  EXPECT_EQ(0u, Found(level, "n0"));  // after the last
}

TEST(VersionTest, CandidateAgreesWithALinearScan) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 50; ++round) {
    // Disjoint ranges over 3-digit keys: cut points, then every other gap.
    std::vector<int> cuts;
    for (int k = 0; k < 1000; k += 1 + static_cast<int>(rng() % 40)) cuts.push_back(k);
    Version v;
    uint64_t number = 1;
    auto key = [](int k) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "%03d", k);
      return std::string(buf);
    };
    for (size_t i = 0; i + 1 < cuts.size(); i += 2) {
      v.stack.push_back(Meta(number++, 3, key(cuts[i]), key(cuts[i + 1] - (rng() % 2))));
    }
    std::shuffle(v.stack.begin(), v.stack.end(), rng);
    v.Index(true);
    ASSERT_EQ(1u, v.read_order.size());
    for (int k = 0; k < 1000; ++k) {
      const std::string probe = key(k);
      uint64_t want = 0;
      for (const ComponentPtr& c : v.stack) {
        if (probe >= c->meta().smallest && probe <= c->meta().largest) want = c->meta().number;
      }
      ASSERT_EQ(want, Found(v.read_order[0], probe)) << "seed " << seed << " key " << probe;
    }
  }
}

}  // namespace
}  // namespace lsm
