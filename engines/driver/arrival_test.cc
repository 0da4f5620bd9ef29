#include "driver/arrival.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace lsmbench {
namespace driver {
namespace {

ArrivalSpec Parse(const std::string& text) {
  ArrivalSpec spec;
  Status s = ParseArrival(Json::parse(text), "arrival", {""}, &spec);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return spec;
}

std::string ParseError(const std::string& text) {
  ArrivalSpec spec;
  Status s = ParseArrival(Json::parse(text), "arrival", {""}, &spec);
  EXPECT_FALSE(s.ok()) << text;
  return ErrorText(s);
}

std::vector<double> Times(const ArrivalSpec& spec, int n, uint64_t seed = 1) {
  auto p = NewArrivalProcess(spec, seed);
  std::vector<double> t;
  for (int i = 0; i < n; i++) t.push_back(p->Next());
  return t;
}

TEST(ArrivalTest, ConstantRateIsEvenlySpaced) {
  auto t = Times(Parse(R"({"process": "constant", "rate": 1000})"), 5000);
  for (int i = 0; i < 5000; i++) ASSERT_NEAR(t[i], i / 1000.0, 1e-12);
}

TEST(ArrivalTest, PoissonHasExponentialGaps) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto t = Times(Parse(R"({"process": "poisson", "rate": 2000})"), 200000, seed);
  double sum = 0, sum2 = 0;
  int short_gaps = 0;
  for (size_t i = 1; i < t.size(); i++) {
    const double gap = t[i] - t[i - 1];
    ASSERT_GE(gap, 0);
    sum += gap;
    sum2 += gap * gap;
    short_gaps += gap < std::log(2.0) / 2000;  // below the median
  }
  const double n = static_cast<double>(t.size() - 1);
  const double mean = sum / n;
  const double sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 1 / 2000.0, 0.01 / 2000.0);
  EXPECT_NEAR(sd / mean, 1.0, 0.02);  // exponential: CV 1
  EXPECT_NEAR(short_gaps / n, 0.5, 0.01);
  // Reproducible from the seed.
  EXPECT_EQ(Times(Parse(R"({"process": "poisson", "rate": 2000})"), 100, seed)[99], t[99]);
}

TEST(ArrivalTest, BurstsInTime) {
  // 100/s for 2 s, then 3 s idle: 200 arrivals per 5 s period.
  auto t = Times(Parse(R"({"process": "bursts", "rate": 100, "burst_s": 2, "idle_s": 3})"), 1000);
  for (int i = 0; i < 1000; i++) {
    const int burst = i / 200;
    ASSERT_NEAR(t[i], burst * 5.0 + (i % 200) / 100.0, 1e-9) << i;
    const double phase = std::fmod(t[i], 5.0);
    ASSERT_LT(phase, 2.0 + 1e-9);
  }
}

TEST(ArrivalTest, BurstsInCount) {
  // 50 requests at 1000/s (50 ms), then 1 s idle.
  auto t = Times(Parse(R"({"process": "bursts", "rate": 1000, "burst_count": 50, "idle_s": 1})"),
                 500);
  for (int i = 0; i < 500; i++) {
    ASSERT_NEAR(t[i], (i / 50) * 1.05 + (i % 50) / 1000.0, 1e-9) << i;
  }
}

TEST(ArrivalTest, PoissonBurstsStayInsideBursts) {
  auto t = Times(Parse(R"({"process": "bursts", "rate": 1000, "burst_s": 1, "idle_s": 1,
                           "interarrival": "exponential"})"),
                 20000);
  for (double x : t) ASSERT_LT(std::fmod(x, 2.0), 1.0 + 1e-9);
  EXPECT_NEAR(t.back(), 2.0 * 20000 / 1000.0, 2.0);
}

TEST(ArrivalTest, TraceFollowsThePiecewiseRate) {
  std::vector<TracePoint> trace;
  ASSERT_TRUE(ParseTrace("time_s,rate\n# comment\n0,10\n1, 0\n2,100\n", "t.csv", &trace).ok());
  ASSERT_EQ(trace.size(), 3u);
  ArrivalSpec spec;
  spec.process = ArrivalSpec::Process::kTrace;
  spec.trace = trace;
  spec.rate_scale = 2;  // 20/s for 1 s, nothing for 1 s, then 200/s
  auto t = Times(spec, 60);
  for (int i = 0; i < 20; i++) ASSERT_NEAR(t[i], i / 20.0, 1e-9) << i;
  for (int i = 20; i < 60; i++) ASSERT_NEAR(t[i], 2.0 + (i - 20) / 200.0, 1e-9) << i;
}

TEST(ArrivalTest, TraceEndingAtZeroRunsOut) {
  ArrivalSpec spec;
  spec.process = ArrivalSpec::Process::kTrace;
  ASSERT_TRUE(ParseTrace("0,10\n1,0\n", "t.csv", &spec.trace).ok());
  auto p = NewArrivalProcess(spec, 1);
  for (int i = 0; i < 10; i++) ASSERT_LT(p->Next(), 1.0);
  EXPECT_TRUE(std::isinf(p->Next()));
}

TEST(ArrivalTest, BadTraces) {
  std::vector<TracePoint> t;
  EXPECT_FALSE(ParseTrace("", "x", &t).ok());
  EXPECT_FALSE(ParseTrace("0,1\n0,2\n", "x", &t).ok());     // times must increase
  EXPECT_FALSE(ParseTrace("0,-1\n", "x", &t).ok());          // negative rate
  EXPECT_FALSE(ParseTrace("0,1,2\n", "x", &t).ok());         // three columns
  EXPECT_FALSE(ParseTrace("0,1\nfoo,2\n", "x", &t).ok());    // header only first
  Status s = ParseTrace("0,1\n5,abc\n", "r.csv", &t);
  EXPECT_NE(ErrorText(s).find("r.csv line 2"), std::string::npos) << s.ToString();
}

TEST(ArrivalTest, TraceFileIsResolvedAndLoaded) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/trace-test.csv");
    f << "0,100\n";
  }
  ArrivalSpec spec;
  Status s = ParseArrival(Json::parse(R"({"process": "trace", "trace_file": "trace-test.csv"})"),
                          "arrival", {"/nonexistent", dir}, &spec);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(spec.trace.size(), 1u);
  EXPECT_EQ(spec.trace_file, dir + "/trace-test.csv");
  const std::string err = ParseError(R"({"process": "trace", "trace_file": "missing.csv"})");
  EXPECT_NE(err.find("arrival.trace_file"), std::string::npos) << err;
}

TEST(ArrivalTest, BadSpecsNameTheField) {
  EXPECT_NE(ParseError(R"({"process": "constant", "rate": -5})").find("arrival.rate: must be > 0"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "constant", "rat": 5})").find("arrival.rat: unknown field"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "gaussian", "rate": 5})").find("arrival.process"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"rate": 5})").find("arrival.process"), std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "constant"})").find("arrival.rate"), std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "constant", "rate": 5, "idle_s": 1})").find("arrival.idle_s"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "bursts", "rate": 5, "idle_s": 1})").find("burst_s"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "bursts", "rate": 5, "burst_s": 1, "burst_count": 3,
                            "idle_s": 1})")
                .find("exactly one"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"process": "poisson", "rate": 5, "interarrival": "fixed"})")
                .find("arrival.interarrival"),
            std::string::npos);
}

TEST(ArrivalQueueTest, ClaimsInOrderUntilTheEnd) {
  // 1000/s, end at 1 s: exactly arrivals 0..999, in order, across threads.
  ArrivalQueue q(NewArrivalProcess(Parse(R"({"process": "constant", "rate": 1000})"), 1),
                 1'000'000'000, UINT64_MAX);
  std::vector<std::vector<std::pair<uint64_t, int64_t>>> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; i++) {
    threads.emplace_back([&, i] {
      uint64_t seq;
      int64_t t;
      while (q.Claim(&seq, &t)) got[i].push_back({seq, t});
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int64_t> time_of(1000, -1);
  size_t total = 0;
  for (const auto& v : got) {
    for (size_t k = 0; k < v.size(); k++) {
      ASSERT_LT(v[k].first, 1000u);
      ASSERT_EQ(time_of[v[k].first], -1) << "claimed twice";
      time_of[v[k].first] = v[k].second;
      if (k > 0) {
        ASSERT_GT(v[k].first, v[k - 1].first);  // each thread: in order
      }
    }
    total += v.size();
  }
  EXPECT_EQ(total, 1000u);
  for (int i = 0; i < 1000; i++) EXPECT_EQ(time_of[i], int64_t{i} * 1'000'000);
  EXPECT_EQ(q.PeekNext(), -1);
}

TEST(ArrivalQueueTest, MaxRequests) {
  ArrivalQueue q(NewArrivalProcess(Parse(R"({"process": "constant", "rate": 1000})"), 1),
                 INT64_MAX, 10);
  uint64_t seq;
  int64_t t;
  int n = 0;
  while (q.Claim(&seq, &t)) n++;
  EXPECT_EQ(n, 10);
}

// db_bench's sine load: the rate is f(t) at the start of each interval,
// held for the interval; with a rate, the wave is scaled to have that mean.
TEST(ArrivalTest, SineHoldsEachIntervalsRate) {
  const ArrivalSpec spec = Parse(R"({"process": "sine", "sine_a": 400, "sine_b": 0.5,
      "sine_c": 0.25, "sine_d": 1000, "sine_mix_rate_interval_milliseconds": 500})");
  EXPECT_DOUBLE_EQ(spec.NominalRate(), 1000);
  auto p = NewArrivalProcess(spec, 1);
  std::vector<int> per_interval(40);
  for (;;) {
    const double t = p->Next();
    if (t >= 20) break;
    per_interval[static_cast<int>(t / 0.5)]++;
  }
  for (int k = 0; k < 40; k++) {
    const double f = 400 * std::sin(0.5 * (k * 0.5) + 0.25) + 1000;
    EXPECT_NEAR(per_interval[k], f * 0.5, 1.01) << "interval " << k;
  }
  ArrivalSpec scaled = Parse(R"({"process": "sine", "rate": 250, "sine_a": 400, "sine_b": 0.5,
      "sine_d": 1000})");
  EXPECT_DOUBLE_EQ(scaled.NominalRate(), 250);
  auto q = NewArrivalProcess(scaled, 1);
  int first = 0;
  while (q->Next() < 10) first++;  // the first 10-s interval: f(0) = 1000, scaled by 1/4
  EXPECT_NEAR(first, 2500, 1);
  // The rate never goes below 0: a wave below the axis gives no arrivals
  // there, and sampled only where it is below, none at all.
  ArrivalSpec dips = Parse(R"({"process": "sine", "sine_a": 2000, "sine_b": 3.14159265358979,
      "sine_c": 1.5707963267949, "sine_d": 1000, "sine_mix_rate_interval_milliseconds": 1000})");
  auto r = NewArrivalProcess(dips, 1);
  std::vector<double> t;
  for (int i = 0; i < 6000; i++) t.push_back(r->Next());
  // f(0) = 3000, f(1) = -1000 -> 0, f(2) = 3000: seconds 1-2 are empty.
  EXPECT_NEAR(t[2999], 1.0, 1e-3);
  EXPECT_GE(t[3000], 2.0);
  ArrivalSpec never = Parse(R"({"process": "sine", "sine_a": 2000, "sine_b": 6.28318530717959,
      "sine_c": -1.5707963267949, "sine_d": 1000, "sine_mix_rate_interval_milliseconds": 1000})");
  EXPECT_TRUE(std::isinf(NewArrivalProcess(never, 1)->Next()));
  // Noise: deterministic per seed, within +- sine_a / 2 * noise per interval.
  ArrivalSpec noisy = Parse(R"({"process": "sine", "sine_a": 100, "sine_b": 0, "sine_d": 1000,
      "sine_mix_rate_interval_milliseconds": 1000, "sine_mix_rate_noise": 1})");
  EXPECT_EQ(Times(noisy, 5000, 3), Times(noisy, 5000, 3));
  EXPECT_NE(Times(noisy, 5000, 3), Times(noisy, 5000, 4));
}

TEST(ArrivalTest, BadSinesNameTheField) {
  EXPECT_EQ(ParseError(R"({"process": "sine", "sine_a": 1, "sine_d": -2})"),
            "arrival.sine_d: with sine_a..c, the rate sine_a*sin(sine_b*x + sine_c) + sine_d is "
            "never above 0: no request would arrive");
  EXPECT_EQ(ParseError(R"({"process": "sine", "rate": 100, "sine_a": 5, "sine_d": 0})"),
            "arrival.sine_d: must be > 0 with a rate: the rate sets the wave's mean, sine_d");
  EXPECT_EQ(ParseError(R"({"process": "constant", "rate": 100, "sine_a": 5})"),
            "arrival.sine_a: not allowed with process constant (only with sine)");
  EXPECT_NE(ParseError(R"({"process": "sine", "sine_mix_rate_noise": 2})")
                .find("arrival.sine_mix_rate_noise"),
            std::string::npos);
}

TEST(ArrivalCounterTest, CountsWhatTheQueueIssues) {
  const ArrivalSpec spec = Parse(R"({"process": "poisson", "rate": 10000})");
  const int64_t end = 500'000'000;
  ArrivalQueue q(NewArrivalProcess(spec, 7), end, UINT64_MAX);
  ArrivalCounter c(NewArrivalProcess(spec, 7), end, UINT64_MAX);
  std::vector<int64_t> times;
  uint64_t seq;
  int64_t t;
  while (q.Claim(&seq, &t)) times.push_back(t);
  // Count at arbitrary increasing instants and compare with the list.
  size_t idx = 0;
  for (int64_t at = 0; at <= end + 1000; at += 7'777'777) {
    while (idx < times.size() && times[idx] <= at) idx++;
    ASSERT_EQ(c.CountUpTo(at), idx) << at;
  }
  EXPECT_EQ(c.CountUpTo(INT64_MAX), times.size());
  EXPECT_NEAR(static_cast<double>(times.size()), 5000, 300);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
