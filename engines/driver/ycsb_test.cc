// What YCSB's CoreWorkload gives that the paper workloads do not: its
// scrambled zipfian, its skewed-latest keys and its read-modify-write
// (workloads/ycsb/README.md). The statistics against YCSB's own client are
// pipelines/tests/workload_shape/test_ycsb_workloads.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "driver/keys.h"
#include "driver/runner.h"
#include "driver/runner_test_util.h"
#include "driver/zipfian.h"

namespace lsmbench {
namespace driver {
namespace {

TEST(YcsbTest, FnvHashIsYcsbs) {
  // YCSB 0.17.0 names key number 0 "user6284781860667377211" (Utils.fnvhash64).
  EXPECT_EQ(YcsbFnvHash64(0), 6284781860667377211ULL);
  EXPECT_EQ(YcsbFnvHash64(1), 8517097267634966620ULL);
  for (uint64_t v = 0; v < 1000; v++) EXPECT_LT(YcsbFnvHash64(v), uint64_t{1} << 63);
}

TEST(YcsbTest, GrowingZipfianZetaIsTheSum) {
  GrowingZipfian g(0.99, 1000);
  for (uint64_t n : std::vector<uint64_t>{1, 2, 1000, GrowingZipfian::kExact, GrowingZipfian::kExact + 1,
                     1000000, 20000000}) {
    EXPECT_NEAR(g.Zeta(n) / Zipfian::Zeta(n, 0.99), 1.0, 1e-9) << n;
  }
  EXPECT_EQ(g.Sample(0, 0.5), 0u);
  EXPECT_EQ(g.Sample(1, 0.999), 0u);
}

// YCSB's zipfian over 1000 records: the hottest key gets ~1/26.47 of the
// draws whatever the record count, the top 1 % ~12 % (a zipfian 0.99 over
// the 1000 records themselves would give them 13 % and 38 %).
TEST(YcsbTest, ScrambledZipfianIsFlatterThanZipfianOverTheRecords) {
  const uint64_t n = 1000;
  KeyChooser ycsb(Distribution::kScrambledZipfian, n, 0.99, 1, n + 1);
  KeyChooser plain(Distribution::kZipfian, n, 0.99, 1);
  Rng rng(11);
  constexpr int kDraws = 200000;
  std::vector<int> counts(n, 0), plain_counts(n, 0);
  for (int i = 0; i < kDraws; i++) {
    const uint64_t id = ycsb.Choose(&rng, n);
    ASSERT_LT(id, n);
    counts[id]++;
    plain_counts[plain.Choose(&rng, n)]++;
  }
  const auto hottest = std::max_element(counts.begin(), counts.end()) - counts.begin();
  EXPECT_EQ(static_cast<uint64_t>(hottest), YcsbFnvHash64(0) % (n + 1));
  EXPECT_NEAR(counts[hottest] / double{kDraws}, 1 / 26.46902820178302 + 1.0 / n, 0.003);
  auto top10 = [](std::vector<int> c) {
    std::sort(c.rbegin(), c.rend());
    int sum = 0;
    for (int i = 0; i < 10; i++) sum += c[i];
    return sum / double{kDraws};
  };
  EXPECT_NEAR(top10(counts), 0.12, 0.01);
  EXPECT_GT(top10(plain_counts), 0.3);
}

// Key numbers the scrambled domain holds but no insert has used yet are
// drawn again, as CoreWorkload.nextKeynum does.
TEST(YcsbTest, ScrambledZipfianRedrawsIdsNotInsertedYet) {
  KeyChooser c(Distribution::kScrambledZipfian, 1000, 0.99, 1, 3001);
  Rng rng(12);
  std::set<uint64_t> seen;
  for (int i = 0; i < 50000; i++) {
    const uint64_t id = c.Choose(&rng, 1500);
    ASSERT_LT(id, 1500u);
    seen.insert(id);
  }
  EXPECT_GT(seen.size(), 1400u);  // not folded onto the first ids
}

TEST(YcsbTest, LatestIsSkewedLatestOverTheGrownKeys) {
  KeyChooser c(Distribution::kLatest, 1000, 0.99, 1);
  Rng rng(4);
  const uint64_t count = 5000;  // 4000 inserted after the load
  int newest = 0;
  for (int i = 0; i < 100000; i++) {
    const uint64_t id = c.Choose(&rng, count);
    ASSERT_LT(id, count);
    ASSERT_GT(id, 0u);  // max - zipfian(max): key number 0 never
    newest += id == count - 1;
  }
  // The zipfian's domain is the ids before the newest, not the 1000 loaded.
  EXPECT_NEAR(newest / 100000.0, 1.0 / Zipfian::Zeta(count - 1, 0.99), 0.006);
  EXPECT_GT(std::abs(1.0 / Zipfian::Zeta(1000, 0.99) - newest / 100000.0), 0.015);
}

// A read-modify-write asks the engine for the record and then writes the
// same key, and counts as a write.
TEST(YcsbTest, ReadModifyWriteGetsThenPutsTheSameKey) {
  RunConfig config = Config(R"({"engine": "null", "phase": "testing", "duration_s": 60,
      "threads": 1, "progress_s": 0, "max_ops": 3000,
      "workload": {"record_count": 500, "operations": {"rmw": 0.5, "read": 0.5},
                   "distribution": "scrambled_zipfian", "value_size": 1000}})");
  RecordingAdapter engine;
  auto result = std::make_unique<RunResult>();
  RunPhase(config, &engine, RunHooks(), result.get());
  ASSERT_TRUE(result->error.ok()) << result->error.ToString();
  const uint64_t rmw = result->total_ops[kReadModifyWrite];
  EXPECT_EQ(rmw + result->total_ops[kRead], 3000u);
  EXPECT_NEAR(rmw / 3000.0, 0.5, 0.05);
  EXPECT_EQ(engine.keys["put"].size(), rmw);
  EXPECT_EQ(engine.keys["get"].size(), 3000u);
  EXPECT_EQ(engine.sizes["put"], rmw * 1000);
  for (const std::string& k : engine.keys["put"]) EXPECT_GT(engine.keys["get"].count(k), 0u);
  EXPECT_TRUE(IsWrite(kReadModifyWrite));
  EXPECT_STREQ(OpTypeName(kReadModifyWrite), "rmw");
}

TEST(YcsbTest, ScrambledItemsOnlyWithTheScrambledZipfian) {
  RunConfig c;
  Status s = ParseRunConfig(Json::parse(R"({"engine": "null", "phase": "testing",
      "duration_s": 5, "workload": {"record_count": 10, "distribution": "zipfian",
      "scrambled_zipfian_items": 30}})"), ".", AdapterNames(), &c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("workload.scrambled_zipfian_items: only with distribution: "
                              "scrambled_zipfian"), std::string::npos) << s.ToString();
  RunConfig ok = Config(R"({"engine": "null", "phase": "testing", "duration_s": 5,
      "workload": {"record_count": 10, "distribution": "scrambled_zipfian"}})");
  EXPECT_EQ(ok.workload.ScrambledZipfianItems(), 11u);
  EXPECT_EQ(ok.workload.ToJson()["scrambled_zipfian_items"], 11);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
