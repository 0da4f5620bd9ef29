#include "util/coding.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace lsm {
namespace {

TEST(CodingTest, Fixed32IsLittleEndian) {
  std::string s;
  PutFixed32(&s, 0x04030201u);
  ASSERT_EQ(s, std::string("\x01\x02\x03\x04", 4));
  EXPECT_EQ(DecodeFixed32(s.data()), 0x04030201u);
}

TEST(CodingTest, Fixed64IsLittleEndian) {
  std::string s;
  PutFixed64(&s, 0x0807060504030201ull);
  ASSERT_EQ(s, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_EQ(DecodeFixed64(s.data()), 0x0807060504030201ull);
}

TEST(CodingTest, FixedRoundTrip) {
  std::string s;
  for (uint32_t v = 0; v < 100000; v++) PutFixed32(&s, v * 2654435761u);
  for (uint64_t power = 0; power <= 63; power++) {
    uint64_t v = uint64_t{1} << power;
    PutFixed64(&s, v - 1);
    PutFixed64(&s, v);
    PutFixed64(&s, v + 1);
  }
  std::string_view in(s);
  for (uint32_t v = 0; v < 100000; v++) {
    uint32_t got;
    ASSERT_TRUE(GetFixed32(&in, &got));
    ASSERT_EQ(got, v * 2654435761u);
  }
  for (uint64_t power = 0; power <= 63; power++) {
    uint64_t v = uint64_t{1} << power, got;
    ASSERT_TRUE(GetFixed64(&in, &got));
    ASSERT_EQ(got, v - 1);
    ASSERT_TRUE(GetFixed64(&in, &got));
    ASSERT_EQ(got, v);
    ASSERT_TRUE(GetFixed64(&in, &got));
    ASSERT_EQ(got, v + 1);
  }
  EXPECT_TRUE(in.empty());
  uint32_t x;
  EXPECT_FALSE(GetFixed32(&in, &x));
}

TEST(CodingTest, KnownVarints) {
  std::string s;
  PutVarint32(&s, 0);
  PutVarint32(&s, 127);
  PutVarint32(&s, 128);
  PutVarint32(&s, 300);
  EXPECT_EQ(s, std::string("\x00\x7f\x80\x01\xac\x02", 6));
}

TEST(CodingTest, Varint32RoundTrip) {
  std::string s;
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < (32 * 32); i++) {
    uint32_t v = (i / 32) << (i % 32);
    values.push_back(v);
    PutVarint32(&s, v);
  }
  values.push_back(std::numeric_limits<uint32_t>::max());
  PutVarint32(&s, values.back());
  std::string_view in(s);
  for (uint32_t expected : values) {
    size_t before = in.size();
    uint32_t got;
    ASSERT_TRUE(GetVarint32(&in, &got));
    ASSERT_EQ(got, expected);
    ASSERT_EQ(before - in.size(), static_cast<size_t>(VarintLength(expected)));
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, Varint64RoundTrip) {
  std::vector<uint64_t> values = {0, 100, ~uint64_t{0}, ~uint64_t{0} - 1};
  for (uint32_t k = 0; k < 64; k++) {
    const uint64_t power = uint64_t{1} << k;
    values.push_back(power);
    values.push_back(power - 1);
    values.push_back(power + 1);
  }
  std::string s;
  for (uint64_t v : values) PutVarint64(&s, v);
  std::string_view in(s);
  for (uint64_t expected : values) {
    size_t before = in.size();
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    ASSERT_EQ(got, expected);
    ASSERT_EQ(before - in.size(), static_cast<size_t>(VarintLength(expected)));
  }
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(VarintLength(~uint64_t{0}), kMaxVarint64Bytes);
}

TEST(CodingTest, Varint32Overflow) {
  uint32_t v;
  // Six continuation bytes: longer than any uint32.
  std::string_view too_long("\x81\x82\x83\x84\x85\x11", 6);
  EXPECT_FALSE(GetVarint32(&too_long, &v));
  // Five bytes whose last carries bits above 2^32.
  std::string_view too_big("\xff\xff\xff\xff\x1f", 5);
  EXPECT_FALSE(GetVarint32(&too_big, &v));
  std::string_view max("\xff\xff\xff\xff\x0f", 5);
  ASSERT_TRUE(GetVarint32(&max, &v));
  EXPECT_EQ(v, 0xffffffffu);
}

TEST(CodingTest, Varint64Overflow) {
  uint64_t v;
  std::string_view too_long("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  EXPECT_FALSE(GetVarint64(&too_long, &v));
  std::string_view too_big("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(GetVarint64(&too_big, &v));
}

TEST(CodingTest, VarintTruncated) {
  const uint64_t big = (uint64_t{1} << 62) + 100;
  std::string s;
  PutVarint64(&s, big);
  for (size_t len = 0; len < s.size(); len++) {
    std::string_view in(s.data(), len);
    uint64_t v;
    EXPECT_FALSE(GetVarint64(&in, &v)) << len;
  }
  std::string s32;
  PutVarint32(&s32, 0xfffffffu);
  for (size_t len = 0; len < s32.size(); len++) {
    std::string_view in(s32.data(), len);
    uint32_t v;
    EXPECT_FALSE(GetVarint32(&in, &v)) << len;
  }
}

TEST(CodingTest, LengthPrefixedSlice) {
  std::string s;
  PutLengthPrefixedSlice(&s, "");
  PutLengthPrefixedSlice(&s, "foo");
  PutLengthPrefixedSlice(&s, std::string_view("b\0r", 3));
  PutLengthPrefixedSlice(&s, std::string(200, 'x'));
  std::string_view in(s), v;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ(v, "");
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ(v, "foo");
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ(v, std::string_view("b\0r", 3));
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ(v, std::string(200, 'x'));
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &v));
}

TEST(CodingTest, LengthPrefixedSliceLongerThanInput) {
  std::string s;
  PutVarint32(&s, 10);
  s += "short";
  std::string_view in(s), v;
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &v));
}

}  // namespace
}  // namespace lsm
