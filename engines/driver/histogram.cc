#include "driver/histogram.h"

#include <algorithm>
#include <cmath>

namespace lsmbench {
namespace driver {

uint64_t Histogram::BucketLow(size_t i) {
  if (i < kSubBuckets) return i;
  const int shift = static_cast<int>(i >> kSubBucketBits) - 1;
  const uint64_t sub = (i & (kSubBuckets - 1)) + kSubBuckets;
  return sub << shift;
}

uint64_t Histogram::BucketHigh(size_t i) {
  if (i < kSubBuckets) return i;
  const int shift = static_cast<int>(i >> kSubBucketBits) - 1;
  return BucketLow(i) + ((uint64_t{1} << shift) - 1);
}

void Histogram::Clear() {
  counts_.fill(0);
  count_ = 0;
  sum_ = 0.0;
  min_ = std::numeric_limits<uint64_t>::max();
  max_ = 0;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t i = 0; i < kNumBuckets; i++) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t Histogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Rank of the wanted value, 1-based: the smallest value covering q.
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kNumBuckets; i++) {
    seen += counts_[i];
    if (seen >= rank) {
      return std::clamp(BucketMid(i), min(), max_);
    }
  }
  return max_;  // counts and count_ disagree only if a snapshot raced a record
}

uint64_t Histogram::CountAtLeast(uint64_t threshold) const {
  uint64_t n = 0;
  for (size_t i = kNumBuckets; i-- > 0;) {
    if (BucketLow(i) < threshold) break;
    n += counts_[i];
  }
  return n;
}

void Histogram::Delta(const Histogram& later, const Histogram& earlier, uint64_t min,
                      uint64_t max, Histogram* out) {
  uint64_t total = 0;
  for (size_t i = 0; i < kNumBuckets; i++) {
    // Cumulative counts only grow; the guard keeps a misuse from wrapping.
    const uint64_t c =
        later.counts_[i] >= earlier.counts_[i] ? later.counts_[i] - earlier.counts_[i] : 0;
    out->counts_[i] = c;
    total += c;
  }
  out->count_ = total;
  out->sum_ = std::max(0.0, later.sum_ - earlier.sum_);
  if (total == 0) {
    out->min_ = std::numeric_limits<uint64_t>::max();
    out->max_ = 0;
    return;
  }
  // The extremes are collected separately from the buckets, so a value
  // recorded during the snapshot can show in one but not the other: keep
  // them inside the range the buckets cover.
  size_t first = 0;
  while (out->counts_[first] == 0) first++;
  size_t last = kNumBuckets - 1;
  while (out->counts_[last] == 0) last--;
  out->min_ = std::clamp(min, BucketLow(first), BucketHigh(first));
  out->max_ = std::clamp(max, BucketLow(last), BucketHigh(last));
  if (out->min_ > out->max_) out->min_ = out->max_;
}

RecordingHistogram::RecordingHistogram() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

void RecordingHistogram::SnapshotCounts(Histogram* out) const {
  // The count is the sum of the buckets as read, so a snapshot taken while
  // the writer records is still self-consistent for percentile walks.
  uint64_t total = 0;
  for (size_t i = 0; i < Histogram::kNumBuckets; i++) {
    const uint64_t c = counts_[i].load(std::memory_order_relaxed);
    out->counts_[i] = c;
    total += c;
  }
  out->count_ = total;
  out->sum_ = sum_.load(std::memory_order_relaxed);
  out->min_ = std::numeric_limits<uint64_t>::max();
  out->max_ = 0;
}

void RecordingHistogram::TakeIntervalExtremes(uint64_t* min, uint64_t* max) {
  *min = interval_min_.exchange(std::numeric_limits<uint64_t>::max(), std::memory_order_relaxed);
  *max = interval_max_.exchange(0, std::memory_order_relaxed);
}

}  // namespace driver
}  // namespace lsmbench
