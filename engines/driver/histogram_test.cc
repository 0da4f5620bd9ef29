#include "driver/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace lsmbench {
namespace driver {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kHour = 3600ULL * 1000 * 1000 * 1000;

TEST(HistogramTest, BucketsTileTheRange) {
  // Consecutive buckets are adjacent, every bound maps back to its bucket,
  // and the last bucket ends at the largest uint64.
  EXPECT_EQ(Histogram::BucketLow(0), 0u);
  for (size_t i = 0; i < Histogram::kNumBuckets; i++) {
    const uint64_t lo = Histogram::BucketLow(i), hi = Histogram::BucketHigh(i);
    ASSERT_LE(lo, hi) << i;
    ASSERT_EQ(Histogram::BucketIndex(lo), i) << i;
    ASSERT_EQ(Histogram::BucketIndex(hi), i) << i;
    if (i + 1 < Histogram::kNumBuckets) {
      ASSERT_EQ(Histogram::BucketLow(i + 1), hi + 1) << i;
    }
  }
  EXPECT_EQ(Histogram::BucketHigh(Histogram::kNumBuckets - 1), UINT64_MAX);
}

TEST(HistogramTest, BucketWidthBoundsTheRelativeError) {
  for (size_t i = Histogram::kSubBuckets; i < Histogram::kNumBuckets; i++) {
    const double lo = static_cast<double>(Histogram::BucketLow(i));
    const double hi = static_cast<double>(Histogram::BucketHigh(i));
    const double mid = static_cast<double>(Histogram::BucketMid(i));
    // The worst values of the bucket are its ends.
    ASSERT_LE((mid - lo) / lo, Histogram::kMaxRelativeError) << i;
    ASSERT_LE((hi - mid) / hi, Histogram::kMaxRelativeError) << i;
  }
  EXPECT_LE(Histogram::kMaxRelativeError, 0.01);
}

// Percentiles against the exact order statistics of the recorded values.
void CheckPercentiles(const std::vector<uint64_t>& values, const Histogram& h) {
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::clamp<size_t>(rank, 1, sorted.size());
    const double exact = static_cast<double>(sorted[rank - 1]);
    const double got = static_cast<double>(h.Percentile(q));
    EXPECT_LE(std::fabs(got - exact), exact * 0.01) << "q=" << q << " exact=" << exact;
    EXPECT_LE(std::fabs(got - exact), exact * Histogram::kMaxRelativeError + 0.5) << "q=" << q;
  }
  EXPECT_EQ(h.min(), sorted.front());
  EXPECT_EQ(h.max(), sorted.back());
}

TEST(HistogramTest, PercentilesWithinOnePercentFromOneMicrosecondToOneHour) {
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Log-uniform over 1 us .. 1 h: every octave of the range is exercised.
  std::uniform_real_distribution<double> log_dist(std::log(1.0 * kUs), std::log(1.0 * kHour));
  std::vector<uint64_t> values;
  Histogram h;
  double sum = 0;
  for (int i = 0; i < 200000; i++) {
    const uint64_t v = static_cast<uint64_t>(std::exp(log_dist(rng)));
    values.push_back(v);
    h.Record(v);
    sum += static_cast<double>(v);
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_NEAR(h.Mean(), sum / values.size(), sum / values.size() * 1e-9);
  CheckPercentiles(values, h);
}

TEST(HistogramTest, EveryValueIsReportedWithinTheBound) {
  // A histogram holding one value reports that value's bucket midpoint
  // (clamped to min/max, so exactly the value); two values at the same
  // bucket check the midpoint itself.
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; i++) {
    const uint64_t v = kUs + rng() % kHour;
    const size_t b = Histogram::BucketIndex(v);
    Histogram h;
    h.Record(Histogram::BucketLow(b));
    h.Record(Histogram::BucketHigh(b));
    const double got = static_cast<double>(h.Percentile(0.5));
    ASSERT_LE(std::fabs(got - static_cast<double>(v)), static_cast<double>(v) * 0.01) << v;
  }
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  std::mt19937_64 rng(7);
  Histogram a, b, all;
  std::vector<uint64_t> values;
  for (int i = 0; i < 50000; i++) {
    const uint64_t v = rng() % (10 * kHour);
    values.push_back(v);
    (i % 3 == 0 ? a : b).Record(v);
    all.Record(v);
  }
  Histogram merged;
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_NEAR(merged.sum(), all.sum(), all.sum() * 1e-12);
  for (size_t i = 0; i < Histogram::kNumBuckets; i++) {
    ASSERT_EQ(merged.bucket_count(i), all.bucket_count(i)) << i;
  }
  CheckPercentiles(values, merged);
}

TEST(HistogramTest, EmptyHistogram) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.99), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
}

TEST(HistogramTest, CountAtLeast) {
  Histogram h;
  for (uint64_t v = 1; v <= 1000; v++) h.Record(v * 1000000);  // 1 ms .. 1 s
  // Whole buckets are counted, so values sharing the threshold's bucket may
  // be missed: here that bucket is ~1 ms wide, one or two values.
  const uint64_t n = h.CountAtLeast(100 * 1000000);
  EXPECT_NEAR(static_cast<double>(n), 901.0, 901 * 0.02);
  EXPECT_EQ(h.CountAtLeast(0), 1000u);
  EXPECT_EQ(h.CountAtLeast(2000000000ULL), 0u);
}

TEST(HistogramTest, IntervalDeltasAddUpToTheWhole) {
  RecordingHistogram rec;
  Histogram prev, cur, delta, total;
  std::mt19937_64 rng(3);
  std::vector<uint64_t> all;
  for (int interval = 0; interval < 5; interval++) {
    std::vector<uint64_t> mine;
    for (int i = 0; i < 1000 * (interval + 1); i++) {
      const uint64_t v = 1000 + rng() % 1000000000;
      rec.Record(v);
      mine.push_back(v);
      all.push_back(v);
    }
    rec.SnapshotCounts(&cur);
    uint64_t mn, mx;
    rec.TakeIntervalExtremes(&mn, &mx);
    Histogram::Delta(cur, prev, mn, mx, &delta);
    EXPECT_EQ(delta.count(), mine.size());
    EXPECT_EQ(delta.min(), *std::min_element(mine.begin(), mine.end()));
    EXPECT_EQ(delta.max(), *std::max_element(mine.begin(), mine.end()));
    CheckPercentiles(mine, delta);
    total.Merge(delta);
    prev = cur;
  }
  CheckPercentiles(all, total);
}

TEST(HistogramTest, ConcurrentSnapshotsLoseNothing) {
  // One writer records while a sampler takes interval deltas; the deltas
  // must add up to exactly what was recorded.
  RecordingHistogram rec;
  constexpr int kValues = 2000000;
  std::atomic<bool> done{false};
  // The writer waits, halfway, for one snapshot taken while it is mid-way:
  // without it a fast writer can finish before the sampler's first look,
  // and the test would check no concurrency at all.
  std::atomic<bool> halfway{false};
  std::atomic<bool> seen_halfway{false};
  std::thread writer([&] {
    for (int i = 0; i < kValues; i++) {
      if (i == kValues / 2) {
        halfway.store(true);
        while (!seen_halfway.load()) std::this_thread::yield();
      }
      rec.Record(static_cast<uint64_t>(100 + (i % 100000)));
    }
    done.store(true);
  });
  Histogram prev, cur, delta, total;
  int snapshots = 0;
  for (;;) {
    const bool finished = done.load();
    const bool writer_halfway = halfway.load();
    rec.SnapshotCounts(&cur);
    uint64_t mn, mx;
    rec.TakeIntervalExtremes(&mn, &mx);
    Histogram::Delta(cur, prev, mn, mx, &delta);
    if (delta.count() > 0) {
      ASSERT_LE(delta.min(), delta.max());
      ASSERT_GE(delta.Percentile(0.5), delta.min());
    }
    total.Merge(delta);
    prev = cur;
    snapshots++;
    if (writer_halfway) seen_halfway.store(true);
    if (finished) break;
  }
  writer.join();
  EXPECT_EQ(total.count(), static_cast<uint64_t>(kValues));
  EXPECT_GT(snapshots, 1);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
