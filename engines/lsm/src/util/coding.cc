#include "util/coding.h"

namespace lsm {

char* EncodeVarint32(char* dst, uint32_t value) {
  return EncodeVarint64(dst, value);
}

char* EncodeVarint64(char* dst, uint64_t value) {
  auto* p = reinterpret_cast<uint8_t*>(dst);
  while (value >= 128) {
    *p++ = static_cast<uint8_t>(value | 128);
    value >>= 7;
  }
  *p++ = static_cast<uint8_t>(value);
  return reinterpret_cast<char*>(p);
}

const char* GetVarint32PtrFallback(const char* p, const char* limit, uint32_t* value) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && p < limit; shift += 7) {
    uint32_t byte = static_cast<uint8_t>(*p++);
    // The fifth byte carries bits 28..31 only; anything above is not a
    // uint32 and must be rejected rather than silently truncated.
    if (shift == 28 && byte > 0x0f) return nullptr;
    result |= (byte & 127) << shift;
    if (byte < 128) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && p < limit; shift += 7) {
    uint64_t byte = static_cast<uint8_t>(*p++);
    if (shift == 63 && byte > 0x01) return nullptr;
    result |= (byte & 127) << shift;
    if (byte < 128) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace lsm
