#include "driver/mixgraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "driver/op_generator.h"
#include "driver/workload.h"

namespace lsmbench {
namespace driver {
namespace {

// The prefix_dist parameters of RocksDB PR #5953 (db_bench's example).
Json PrefixDist() {
  return Json::parse(R"({"mix_get_ratio": 0.85, "mix_put_ratio": 0.14, "mix_seek_ratio": 0.01,
      "keyrange_num": 30, "keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917,
      "keyrange_dist_c": 0.0164, "keyrange_dist_d": -0.08082,
      "key_dist_a": 0.002312, "key_dist_b": 0.3467})");
}

std::string MixgraphError(Json m, uint64_t records = 100000) {
  MixgraphSpec spec;
  Status s = ParseMixgraph(m, "workload.mixgraph", records, &spec);
  EXPECT_FALSE(s.ok()) << m.dump();
  return ErrorText(s);
}

TEST(MixgraphTest, ImpossibleParametersNameTheField) {
  struct Case {
    const char* field;
    Json value;
    const char* says;
  };
  const Case cases[] = {
      {"mix_put_ratio", 0.5, "mix_get_ratio: mix_get_ratio + mix_put_ratio + mix_seek_ratio must "
                             "sum to 1 (they sum to 1.360000"},
      {"mix_seek_ratio", -0.1, "mix_seek_ratio"},
      {"value_sigma", -2, "value_sigma: must be > 0"},
      {"iter_sigma", 0, "iter_sigma: must be > 0"},
      {"value_k", 1.0, "value_k: must be < 1: a Generalized Pareto with shape k >= 1 has no "
                       "finite mean"},
      {"key_dist_b", -0.3, "key_dist_b: must be >= 0"},
      {"key_dist_a", 2.0, "key_dist_a: must be <= 1"},
      {"keyrange_num", 200000, "keyrange_num: exceeds record_count (100000)"},
      {"keyrange_dist_a", -1, "keyrange_dist_a: with keyrange_dist_b..d, gives every key range"},
      {"value_theta", -5, "value_theta"},
      {"mix_max_value_size", 0, "mix_max_value_size"},
      {"no_such_parameter", 1, "no_such_parameter: unknown field"},
  };
  for (const Case& c : cases) {
    Json m = PrefixDist();
    m[c.field] = c.value;
    if (std::string(c.field) == "keyrange_dist_a") m["keyrange_dist_c"] = -1;
    const std::string error = MixgraphError(m);
    EXPECT_NE(error.find(std::string("workload.mixgraph.") + c.says), std::string::npos)
        << c.field << ": " << error;
  }
  MixgraphSpec spec;
  EXPECT_TRUE(ParseMixgraph(PrefixDist(), "m", 100000, &spec).ok());
  // A negative shape is a bounded Generalized Pareto, not an error.
  Json bounded = PrefixDist();
  bounded["value_k"] = -0.5;
  EXPECT_TRUE(ParseMixgraph(bounded, "m", 100000, &spec).ok());
}

TEST(MixgraphTest, ValueSizesFollowDbBenchsRules) {
  MixgraphSpec m;  // db_bench's defaults: theta 0, k 0.2615, sigma 25.45, max 1024
  // u = 1: the distribution's minimum, 0, is raised to 10.
  EXPECT_EQ(MixgraphValueSize(m, 1.0), 10u);
  // The median: ceil(sigma (2^k - 1) / k).
  EXPECT_EQ(MixgraphValueSize(m, 0.5),
            static_cast<uint32_t>(std::ceil(25.45 * (std::pow(0.5, -0.2615) - 1) / 0.2615)));
  // Far in the tail a size beyond the maximum is taken modulo it.
  const double tail = std::ceil(ParetoInverse(1e-9, 0, 0.2615, 25.45));
  ASSERT_GT(tail, 1024);
  EXPECT_EQ(MixgraphValueSize(m, 1e-9), static_cast<uint32_t>(std::fmod(tail, 1024)));
  // k = 0 is the exponential law.
  EXPECT_DOUBLE_EQ(ParetoInverse(std::exp(-2.0), 3, 0, 5), 13);
  // Scan lengths are taken modulo mix_max_scan_len.
  m.mix_max_scan_len = 100;
  for (double u : {1e-12, 1e-6, 0.01, 0.3, 1.0}) EXPECT_LT(MixgraphScanLength(m, u), 100u);
  // The mean the estimates use: the default's mean by midpoint integration,
  // against a Monte Carlo mean of a million draws.
  MixgraphSpec d;
  Rng rng(42);
  double sum = 0;
  for (int i = 0; i < 1000000; i++) sum += MixgraphValueSize(d, 1 - rng.UniformDouble());
  EXPECT_NEAR(d.MeanValueSize(), sum / 1e6, 0.5);
}

TEST(MixgraphTest, KeyRangesGetTheirShareOfAccesses) {
  MixgraphSpec m;
  ASSERT_TRUE(ParseMixgraph(PrefixDist(), "m", 300000, &m).ok());
  MixgraphKeys keys(m, 300000, 1);
  ASSERT_EQ(keys.ranges(), 30u);
  ASSERT_EQ(keys.range_size(), 10000u);
  double total = 0;
  for (uint64_t i = 0; i < 30; i++) total += keys.RangeShare(i);
  EXPECT_NEAR(total, 1.0, 1e-12);
  // The weights w(x) = a e^{bx} + c e^{dx} at x = 1..30 as db_bench's integer
  // shares: floor(w(x) * s) with s = floor(1 / w(30)) + 1, the coldest range
  // getting about one share; the ranges hold them in some order (db_bench's
  // shuffle). The coldest ranges' shares are coarse: 1 of 1,334.
  auto w = [](int x) { return 14.18 * std::exp(-2.917 * x) + 0.0164 * std::exp(-0.08082 * x); };
  const double scale = std::floor(1 / w(30)) + 1;
  std::vector<double> expected, got;
  double shares = 0;
  for (int x = 1; x <= 30; x++) {
    expected.push_back(std::floor(w(x) * scale));
    shares += expected.back();
  }
  for (double& e : expected) e /= shares;
  for (uint64_t i = 0; i < 30; i++) got.push_back(keys.RangeShare(i));
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  for (int i = 0; i < 30; i++) EXPECT_DOUBLE_EQ(got[i], expected[i]) << i;
  // The hottest range is not the first: the shuffle placed it.
  uint64_t hottest = 0;
  for (uint64_t i = 1; i < 30; i++) {
    if (keys.RangeShare(i) > keys.RangeShare(hottest)) hottest = i;
  }
  // Draws: each range's share of 600,000 accesses within 6 sigma.
  std::vector<uint64_t> hits(30);
  Rng rng(7);
  const int n = 600000;
  for (int i = 0; i < n; i++) {
    const uint64_t id = keys.Choose(&rng);
    ASSERT_LT(id, 300000u);
    hits[id / 10000]++;
  }
  for (uint64_t i = 0; i < 30; i++) {
    const double p = keys.RangeShare(i);
    EXPECT_NEAR(hits[i] / double(n), p, 6 * std::sqrt(p * (1 - p) / n) + 1e-6) << "range " << i;
  }
  EXPECT_GT(hits[hottest], n / 3);
}

TEST(MixgraphTest, PowerKeysAreSkewed) {
  Json all_dist = Json::parse(R"({"key_dist_a": 0.002312, "key_dist_b": 0.3467})");
  MixgraphSpec m;
  ASSERT_TRUE(ParseMixgraph(all_dist, "m", 1000000, &m).ok());
  MixgraphKeys keys(m, 1000000, 3);
  std::map<uint64_t, uint64_t> count;
  Rng rng(11);
  const int n = 500000;
  for (int i = 0; i < n; i++) count[keys.Choose(&rng)]++;
  std::vector<uint64_t> c;
  for (const auto& [id, k] : count) c.push_back(k);
  std::sort(c.rbegin(), c.rend());
  // F(1) = a: the hottest rank alone takes 0.23 % of the accesses.
  EXPECT_NEAR(c[0] / double(n), 0.002312, 0.0006);
  // The 10,000 hottest ranks take F(10^4) = 5.6 % of the accesses; folded
  // with the 4e7 colder ranks into a million keys, the top 1 % of the keys
  // take somewhat more. Uniform keys would give them about 1.6 %.
  uint64_t top = 0;
  for (size_t i = 0; i < std::min<size_t>(10000, c.size()); i++) top += c[i];
  EXPECT_GT(top / double(n), 0.056);
  EXPECT_LT(top / double(n), 0.15);
}

TEST(MixgraphTest, WorkloadUsesItAndRefusesWhatItDecides) {
  Json w = Json::parse(R"({"record_count": 300000, "key_size": 16})");
  w["mixgraph"] = PrefixDist();
  WorkloadSpec spec;
  ASSERT_TRUE(ParseWorkload(w, "workload", &spec).ok());
  EXPECT_EQ(spec.insert_order, InsertOrder::kOrdered);
  EXPECT_DOUBLE_EQ(spec.mix[kRead], 0.85);
  EXPECT_DOUBLE_EQ(spec.mix[kUpdate], 0.14);
  EXPECT_DOUBLE_EQ(spec.mix[kScan], 0.01);
  EXPECT_NEAR(spec.MeanValueSize(), spec.mixgraph->MeanValueSize(), 1e-9);
  // The echo round-trips.
  WorkloadSpec again;
  ASSERT_TRUE(ParseWorkload(spec.ToJson(), "workload", &again).ok());
  EXPECT_EQ(again.ToJson(), spec.ToJson());

  for (const char* field : {"operations", "distribution", "value_size", "scan_length"}) {
    Json bad = w;
    bad[field] = std::string(field) == "operations" ? Json{{"update", 1}}
                 : std::string(field) == "distribution" ? Json("zipfian")
                                                         : Json(100);
    Status s = ParseWorkload(bad, "workload", &spec);
    ASSERT_FALSE(s.ok()) << field;
    EXPECT_NE(ErrorText(s).find(std::string("workload.") + field + ": not with mixgraph"),
              std::string::npos)
        << ErrorText(s);
  }
  Json hashed = w;
  hashed["insert_order"] = "hashed";
  EXPECT_NE(ErrorText(ParseWorkload(hashed, "workload", &spec)).find("must be ordered"),
            std::string::npos);

  // The generator: the mix, keys in range, sizes and lengths within bounds,
  // ordered keys (a key range is a range of keys).
  ASSERT_TRUE(ParseWorkload(w, "workload", &spec).ok());
  OpGenerator g(spec, 5, spec.record_count);
  int types[kNumOpTypes] = {};
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    Op op;
    g.Make(i, &op);
    types[op.type]++;
    ASSERT_LT(op.id, spec.record_count);
    if (op.type == kUpdate) ASSERT_LT(op.value.size(), 1025u);
    if (op.type == kScan) ASSERT_LT(op.scan_length, 10000u);
  }
  for (int t : {kRead, kUpdate, kScan}) {
    const double p = spec.mix[t];
    EXPECT_NEAR(types[t] / double(n), p, 6 * std::sqrt(p * (1 - p) / n)) << OpTypeName(t);
  }
  char key[17] = {};
  g.FormatKey(123, key);
  EXPECT_STREQ(key, "user000000000123");
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
