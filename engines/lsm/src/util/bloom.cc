#include "util/bloom.h"

#include <algorithm>

#include "util/hash.h"

namespace lsm {
namespace {

constexpr uint64_t kBloomSeed = 0xb10f11e7ull;
constexpr int kMaxProbes = 30;

uint64_t BloomHash(std::string_view key) { return Hash64(key, kBloomSeed); }

// The probe stride of double hashing: the hash with its halves swapped, odd
// so that it never degenerates to zero.
inline uint64_t Delta(uint64_t h) { return ((h >> 32) | (h << 32)) | 1; }

// Maps h uniformly onto [0, bits) with a multiply instead of a division
// (uses the high bits of h, which the stride additions mix best), and works
// for filters of any size.
inline uint64_t Reduce(uint64_t h, uint64_t bits) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * bits) >> 64);
}

int NumProbes(int bits_per_key) {
  // k = bits_per_key * ln 2 minimizes the false positive rate; truncate
  // (fewer probes: cheaper lookups, nearly the same rate).
  int k = static_cast<int>(bits_per_key * 0.6931471805599453);
  return std::clamp(k, 1, kMaxProbes);
}

// Appends a zeroed filter for n keys to *dst; returns the offset of its bit
// array in *dst and sets *bits and *k.
size_t AppendEmptyFilter(uint64_t n, int bits_per_key, std::string* dst, uint64_t* bits, int* k) {
  if (bits_per_key < 1) bits_per_key = 1;
  // A tiny filter has a large false positive rate from rounding; 64 bits
  // is the floor. The cap only guards against absurd size hints.
  n = std::min<uint64_t>(n, (uint64_t{1} << 38) / bits_per_key);
  *bits = std::max<uint64_t>(n * bits_per_key, 64);
  const uint64_t bytes = (*bits + 7) / 8;
  *bits = bytes * 8;
  *k = NumProbes(bits_per_key);
  const size_t start = dst->size();
  dst->resize(start + bytes, 0);
  dst->push_back(static_cast<char>(*k));
  return start;
}

inline void SetBits(uint64_t h, uint64_t bits, int k, uint8_t* array) {
  const uint64_t delta = Delta(h);
  for (int j = 0; j < k; j++) {
    const uint64_t pos = Reduce(h, bits);
    array[pos / 8] |= static_cast<uint8_t>(1u << (pos % 8));
    h += delta;
  }
}

void BuildFromHashes(const uint64_t* hashes, size_t n, int bits_per_key, std::string* dst) {
  uint64_t bits;
  int k;
  const size_t start = AppendEmptyFilter(n, bits_per_key, dst, &bits, &k);
  auto* array = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  for (size_t i = 0; i < n; i++) SetBits(hashes[i], bits, k, array);
}

}  // namespace

void CreateBloomFilter(const std::string_view* keys, size_t n, int bits_per_key,
                       std::string* dst) {
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; i++) hashes[i] = BloomHash(keys[i]);
  BuildFromHashes(hashes.data(), n, bits_per_key, dst);
}

bool BloomKeyMayMatch(std::string_view key, std::string_view filter) {
  if (filter.size() < 2) return false;
  const auto* array = reinterpret_cast<const uint8_t*>(filter.data());
  const uint64_t bits = uint64_t{filter.size() - 1} * 8;
  const int k = array[filter.size() - 1];
  if (k > kMaxProbes) return true;

  uint64_t h = BloomHash(key);
  const uint64_t delta = Delta(h);
  for (int j = 0; j < k; j++) {
    const uint64_t pos = Reduce(h, bits);
    if ((array[pos / 8] & (1u << (pos % 8))) == 0) return false;
    h += delta;
  }
  return true;
}

BloomFilterBuilder::BloomFilterBuilder(int bits_per_key, uint64_t expected_keys)
    : bits_per_key_(bits_per_key) {
  if (expected_keys > 0) {
    uint64_t bits;
    int k;
    AppendEmptyFilter(expected_keys, bits_per_key, &filter_, &bits, &k);
  }
}

void BloomFilterBuilder::AddKey(std::string_view key) {
  num_keys_++;
  if (filter_.empty()) {
    hashes_.push_back(BloomHash(key));
    return;
  }
  const uint64_t bits = uint64_t{filter_.size() - 1} * 8;
  SetBits(BloomHash(key), bits, static_cast<uint8_t>(filter_.back()),
          reinterpret_cast<uint8_t*>(filter_.data()));
}

void BloomFilterBuilder::Finish(std::string* dst) const {
  if (filter_.empty()) {
    BuildFromHashes(hashes_.data(), hashes_.size(), bits_per_key_, dst);
  } else {
    dst->append(filter_);
  }
}

}  // namespace lsm
