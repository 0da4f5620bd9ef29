#include "util/hash.h"

#include "util/coding.h"

namespace lsm {
namespace {

constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio, odd

// A bijective avalanche step (xor-shift / multiply rounds): every input bit
// affects every output bit, so consecutive keys spread over the filter.
inline uint64_t Avalanche(uint64_t x) {
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

}  // namespace

uint64_t Hash64(const char* data, size_t n, uint64_t seed) {
  uint64_t h = seed ^ (n * kMul);
  // Two lanes halve the multiply dependency chain on long keys.
  uint64_t a = h, b = ~h;
  for (; n >= 16; n -= 16, data += 16) {
    a = Rotl(a ^ (DecodeFixed64(data) * kMul), 29) * kMul;
    b = Rotl(b ^ (DecodeFixed64(data + 8) * kMul), 31) * kMul;
  }
  if (n >= 8) {
    a = Rotl(a ^ (DecodeFixed64(data) * kMul), 29) * kMul;
    data += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  for (size_t i = 0; i < n; i++) tail |= uint64_t{static_cast<uint8_t>(data[i])} << (8 * i);
  b = Rotl(b ^ (tail * kMul), 31) * kMul;
  return Avalanche(a ^ Rotl(b, 17) ^ h);
}

}  // namespace lsm
