// CRC-32C (Castagnoli), the checksum of every on-disk block and log record.
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at
// run time), a table-driven software loop otherwise. Thread-safe.
#ifndef LSM_SRC_UTIL_CRC32C_H_
#define LSM_SRC_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace lsm::crc32c {

// The crc32c of A followed by data[0, n), given init = Value(A).
uint32_t Extend(uint32_t init, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// Stored checksums are masked: a CRC computed over bytes that themselves
// contain CRCs (a block holding a checksummed record, say) is weak, and a
// run of zero bytes would otherwise carry a valid-looking zero CRC.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The two implementations, exposed so tests can check they agree.
namespace internal {
uint32_t ExtendSoftware(uint32_t init, const char* data, size_t n);
// REQUIRES: HardwareAvailable().
uint32_t ExtendHardware(uint32_t init, const char* data, size_t n);
bool HardwareAvailable();
}  // namespace internal

}  // namespace lsm::crc32c

#endif  // LSM_SRC_UTIL_CRC32C_H_
