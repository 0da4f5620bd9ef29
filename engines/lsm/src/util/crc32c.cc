#include "util/crc32c.h"

#include <array>

#include "util/coding.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define LSM_CRC32C_X86 1
#else
#define LSM_CRC32C_X86 0
#endif

namespace lsm::crc32c {
namespace {

constexpr uint32_t kPolyReflected = 0x82f63b78u;

// Slicing-by-8 tables: kTables[k][b] is the CRC of byte b followed by k zero
// bytes, so eight input bytes are folded with eight independent lookups.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t crc = b;
    for (int i = 0; i < 8; i++) crc = (crc >> 1) ^ ((crc & 1) ? kPolyReflected : 0);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; k++) {
    for (uint32_t b = 0; b < 256; b++) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

#if LSM_CRC32C_X86
using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

ExtendFn ChooseExtend() {
  return internal::HardwareAvailable() ? internal::ExtendHardware : internal::ExtendSoftware;
}
#endif

}  // namespace

namespace internal {

uint32_t ExtendSoftware(uint32_t init, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const uint8_t*>(data);
  uint32_t crc = init ^ 0xffffffffu;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = DecodeFixed32(reinterpret_cast<const char*>(p)) ^ crc;
    uint32_t hi = DecodeFixed32(reinterpret_cast<const char*>(p) + 4);
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; n--, p++) crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xff];
  return crc ^ 0xffffffffu;
}

#if LSM_CRC32C_X86
namespace {

// The crc32 instruction has a latency of 3 cycles but a throughput of 1 per
// cycle: one dependency chain uses a third of it. Long inputs are therefore
// cut into rounds of three equal chunks whose CRCs run interleaved, the
// second and third starting from a zero register; the chunk CRCs are then
// joined by "appending chunk_bytes zero bytes" to the earlier ones, which is
// a linear map on the 32-bit register, done with four table lookups.
template <size_t kChunkBytes>
class ZeroShift {
 public:
  ZeroShift() {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) {
      uint32_t x = uint32_t{1} << bit;
      for (size_t i = 0; i < kChunkBytes; i++) x = (x >> 8) ^ kTables[0][x & 0xff];
      basis[bit] = x;
    }
    for (int j = 0; j < 4; j++) {
      for (uint32_t b = 0; b < 256; b++) {
        uint32_t v = 0;
        for (int bit = 0; bit < 8; bit++) {
          if (b & (1u << bit)) v ^= basis[8 * j + bit];
        }
        table_[j][b] = v;
      }
    }
  }

  // The register after kChunkBytes zero bytes, from register x.
  uint32_t Apply(uint32_t x) const {
    return table_[0][x & 0xff] ^ table_[1][(x >> 8) & 0xff] ^ table_[2][(x >> 16) & 0xff] ^
           table_[3][x >> 24];
  }

 private:
  uint32_t table_[4][256];
};

constexpr size_t kLongChunk = 1024;
constexpr size_t kShortChunk = 128;

const ZeroShift<kLongChunk>& LongShift() {
  static const ZeroShift<kLongChunk> shift;
  return shift;
}
const ZeroShift<kShortChunk>& ShortShift() {
  static const ZeroShift<kShortChunk> shift;
  return shift;
}

// Processes 3 * kChunkBytes bytes from register crc; returns the register.
template <size_t kChunkBytes>
__attribute__((target("sse4.2"))) inline uint32_t ThreeWayRound(
    uint32_t crc, const char* p, const ZeroShift<kChunkBytes>& shift) {
  uint64_t c0 = crc, c1 = 0, c2 = 0;
  for (size_t i = 0; i < kChunkBytes; i += 8) {
    c0 = _mm_crc32_u64(c0, DecodeFixed64(p + i));
    c1 = _mm_crc32_u64(c1, DecodeFixed64(p + kChunkBytes + i));
    c2 = _mm_crc32_u64(c2, DecodeFixed64(p + 2 * kChunkBytes + i));
  }
  uint32_t r = shift.Apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return shift.Apply(r) ^ static_cast<uint32_t>(c2);
}

}  // namespace

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t init, const char* data,
                                                          size_t n) {
  const char* p = data;
  uint32_t crc32 = init ^ 0xffffffffu;
#if defined(__x86_64__)
  if (n >= 3 * kShortChunk) {
    const auto& long_shift = LongShift();
    const auto& short_shift = ShortShift();
    for (; n >= 3 * kLongChunk; n -= 3 * kLongChunk, p += 3 * kLongChunk) {
      crc32 = ThreeWayRound(crc32, p, long_shift);
    }
    for (; n >= 3 * kShortChunk; n -= 3 * kShortChunk, p += 3 * kShortChunk) {
      crc32 = ThreeWayRound(crc32, p, short_shift);
    }
  }
  uint64_t crc = crc32;
  for (; n >= 8; n -= 8, p += 8) crc = _mm_crc32_u64(crc, DecodeFixed64(p));
  crc32 = static_cast<uint32_t>(crc);
#endif
  for (; n >= 4; n -= 4, p += 4) crc32 = _mm_crc32_u32(crc32, DecodeFixed32(p));
  for (; n > 0; n--, p++) crc32 = _mm_crc32_u8(crc32, static_cast<uint8_t>(*p));
  return crc32 ^ 0xffffffffu;
}

bool HardwareAvailable() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}
#else
uint32_t ExtendHardware(uint32_t init, const char* data, size_t n) {
  return ExtendSoftware(init, data, n);
}
bool HardwareAvailable() { return false; }
#endif

}  // namespace internal

uint32_t Extend(uint32_t init, const char* data, size_t n) {
#if LSM_CRC32C_X86
  static const ExtendFn fn = ChooseExtend();
  return fn(init, data, n);
#else
  return internal::ExtendSoftware(init, data, n);
#endif
}

}  // namespace lsm::crc32c
