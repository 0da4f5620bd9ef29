// Log-linear latency histograms.
//
// Values (nanoseconds) below 64 get a bucket each; every power-of-two range
// [2^m, 2^(m+1)) above is split into 64 equal buckets. A bucket's width is
// thus at most 1/64 of its lower bound, and reporting its midpoint is off by
// at most 1/128 (0.78 %) of the true value, over the whole uint64 range
// (1 us .. 1 h and far beyond). 3776 buckets; recording is a shift, a count
// of leading zeros and an increment.
//
// Histogram is a plain value (one thread at a time). RecordingHistogram is
// written by exactly one thread and read concurrently by a sampler: it
// keeps cumulative counts in relaxed atomics (plain loads and stores on
// x86, no lock prefix), and the sampler turns two snapshots into an
// interval's histogram by subtraction, so neither side ever waits.
#ifndef LSMBENCH_DRIVER_HISTOGRAM_H_
#define LSMBENCH_DRIVER_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace lsmbench {
namespace driver {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 6;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;  // 64
  static constexpr size_t kNumBuckets = (64 - kSubBucketBits) * kSubBuckets + kSubBuckets;
  // Bound on |reported - true| / true for any reported value.
  static constexpr double kMaxRelativeError = 1.0 / (2 * kSubBuckets);

  static size_t BucketIndex(uint64_t v) {
    if (v < kSubBuckets) return static_cast<size_t>(v);
    const int m = 63 - __builtin_clzll(v);  // v in [2^m, 2^(m+1)), m >= 6
    const int shift = m - kSubBucketBits;
    return static_cast<size_t>((static_cast<uint64_t>(shift + 1) << kSubBucketBits) +
                               ((v >> shift) - kSubBuckets));
  }
  // Smallest value of bucket i.
  static uint64_t BucketLow(size_t i);
  // Largest value of bucket i (inclusive).
  static uint64_t BucketHigh(size_t i);
  // The value reported for bucket i: its midpoint.
  static uint64_t BucketMid(size_t i) {
    const uint64_t lo = BucketLow(i);
    return lo + (BucketHigh(i) - lo) / 2;
  }

  Histogram() { Clear(); }

  void Clear();
  void Record(uint64_t v) {
    counts_[BucketIndex(v)]++;
    count_++;
    sum_ += static_cast<double>(v);
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // 0 when empty.
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  // The value at quantile q in [0, 1] (the smallest recorded value v such
  // that at least ceil(q * count) values are <= v), to within
  // kMaxRelativeError and clamped to [min, max]; 0 when empty.
  uint64_t Percentile(double q) const;
  // Number of recorded values >= threshold, counting whole buckets whose
  // lower bound is >= threshold (exact when threshold is a bucket bound).
  uint64_t CountAtLeast(uint64_t threshold) const;

  uint64_t bucket_count(size_t i) const { return counts_[i]; }

  // What was recorded between two cumulative snapshots (`later` minus
  // `earlier`); min and max are the interval's, known separately.
  static void Delta(const Histogram& later, const Histogram& earlier, uint64_t min,
                    uint64_t max, Histogram* out);

 private:
  friend class RecordingHistogram;

  std::array<uint64_t, kNumBuckets> counts_;
  uint64_t count_;
  double sum_;
  uint64_t min_;
  uint64_t max_;
};

// Single writer, concurrent readers. Thread safety: Record() from one thread
// only; Snapshot()/TakeIntervalExtremes() from any one other thread.
class RecordingHistogram {
 public:
  RecordingHistogram();
  RecordingHistogram(const RecordingHistogram&) = delete;
  RecordingHistogram& operator=(const RecordingHistogram&) = delete;

  void Record(uint64_t v) {
    Bump(&counts_[Histogram::BucketIndex(v)]);
    Bump(&count_);
    sum_.store(sum_.load(std::memory_order_relaxed) + static_cast<double>(v),
               std::memory_order_relaxed);
    if (v < interval_min_.load(std::memory_order_relaxed)) {
      interval_min_.store(v, std::memory_order_relaxed);
    }
    if (v > interval_max_.load(std::memory_order_relaxed)) {
      interval_max_.store(v, std::memory_order_relaxed);
    }
  }

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

  // Cumulative counts and sum since construction into *out (min/max of *out
  // are left as "unknown": use TakeIntervalExtremes for those).
  void SnapshotCounts(Histogram* out) const;
  // The min and max recorded since the previous call, and restarts them.
  // A value recorded concurrently may land in either interval.
  void TakeIntervalExtremes(uint64_t* min, uint64_t* max);

 private:
  static void Bump(std::atomic<uint64_t>* c) {
    c->store(c->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  std::array<std::atomic<uint64_t>, Histogram::kNumBuckets> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
  std::atomic<uint64_t> interval_min_{std::numeric_limits<uint64_t>::max()};
  std::atomic<uint64_t> interval_max_{0};
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_HISTOGRAM_H_
