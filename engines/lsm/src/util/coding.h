// Little-endian fixed-width and varint encodings shared by every on-disk
// format of the engine (tables, WAL, manifest). Decoders never read past the
// bytes they are given: malformed input makes them return false / nullptr.
#ifndef LSM_SRC_UTIL_CODING_H_
#define LSM_SRC_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace lsm {

// Longest varint encodings.
inline constexpr int kMaxVarint32Bytes = 5;
inline constexpr int kMaxVarint64Bytes = 10;

// memcpy compiles to a single (unaligned) load/store on little-endian
// targets; the byte-order swap keeps big-endian hosts correct.
inline void EncodeFixed32(char* dst, uint32_t value) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap32(value);
#endif
  std::memcpy(dst, &value, sizeof(value));
}

inline void EncodeFixed64(char* dst, uint64_t value) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  std::memcpy(dst, &value, sizeof(value));
}

inline uint32_t DecodeFixed32(const char* ptr) {
  uint32_t value;
  std::memcpy(&value, ptr, sizeof(value));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap32(value);
#endif
  return value;
}

inline uint64_t DecodeFixed64(const char* ptr) {
  uint64_t value;
  std::memcpy(&value, ptr, sizeof(value));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  return value;
}

inline void PutFixed32(std::string* dst, uint32_t value) {
  char buf[sizeof(value)];
  EncodeFixed32(buf, value);
  dst->append(buf, sizeof(buf));
}

inline void PutFixed64(std::string* dst, uint64_t value) {
  char buf[sizeof(value)];
  EncodeFixed64(buf, value);
  dst->append(buf, sizeof(buf));
}

// Writes the varint at dst (which has room for kMaxVarint*Bytes) and returns
// the byte after it.
char* EncodeVarint32(char* dst, uint32_t value);
char* EncodeVarint64(char* dst, uint64_t value);

inline void PutVarint32(std::string* dst, uint32_t value) {
  char buf[kMaxVarint32Bytes];
  dst->append(buf, EncodeVarint32(buf, value) - buf);
}

inline void PutVarint64(std::string* dst, uint64_t value) {
  char buf[kMaxVarint64Bytes];
  dst->append(buf, EncodeVarint64(buf, value) - buf);
}

// Bytes EncodeVarint64 writes for value.
inline int VarintLength(uint64_t value) {
  int len = 1;
  while (value >= 128) {
    value >>= 7;
    len++;
  }
  return len;
}

// Appends varint32(value.size()) followed by the bytes.
inline void PutLengthPrefixedSlice(std::string* dst, std::string_view value) {
  PutVarint32(dst, static_cast<uint32_t>(value.size()));
  dst->append(value.data(), value.size());
}

// Pointer-based decoders for hot loops: parse a varint from [p, limit) and
// return the byte after it, or nullptr if the varint is truncated or too
// long (more than 5 / 10 bytes, or bits beyond 32 / 64).
const char* GetVarint32PtrFallback(const char* p, const char* limit, uint32_t* value);
inline const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* value) {
  // One-byte varints (< 128) dominate block entry headers.
  if (p < limit) {
    uint32_t byte = static_cast<uint8_t>(*p);
    if (byte < 128) {
      *value = byte;
      return p + 1;
    }
  }
  return GetVarint32PtrFallback(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

// Parse from the front of *input and advance it past what was consumed. On
// failure return false and leave *input unspecified.
inline bool GetVarint32(std::string_view* input, uint32_t* value) {
  const char* p = input->data();
  const char* limit = p + input->size();
  const char* q = GetVarint32Ptr(p, limit, value);
  if (q == nullptr) return false;
  input->remove_prefix(q - p);
  return true;
}

inline bool GetVarint64(std::string_view* input, uint64_t* value) {
  const char* p = input->data();
  const char* limit = p + input->size();
  const char* q = GetVarint64Ptr(p, limit, value);
  if (q == nullptr) return false;
  input->remove_prefix(q - p);
  return true;
}

inline bool GetFixed32(std::string_view* input, uint32_t* value) {
  if (input->size() < sizeof(uint32_t)) return false;
  *value = DecodeFixed32(input->data());
  input->remove_prefix(sizeof(uint32_t));
  return true;
}

inline bool GetFixed64(std::string_view* input, uint64_t* value) {
  if (input->size() < sizeof(uint64_t)) return false;
  *value = DecodeFixed64(input->data());
  input->remove_prefix(sizeof(uint64_t));
  return true;
}

// *result views into the bytes of *input (no copy).
inline bool GetLengthPrefixedSlice(std::string_view* input, std::string_view* result) {
  uint32_t len;
  if (!GetVarint32(input, &len) || len > input->size()) return false;
  *result = input->substr(0, len);
  input->remove_prefix(len);
  return true;
}

}  // namespace lsm

#endif  // LSM_SRC_UTIL_CODING_H_
