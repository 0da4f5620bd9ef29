#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace lsm::crc32c {
namespace {

TEST(Crc32cTest, KnownVectors) {
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(Value(buf, sizeof(buf)), 0x8a9136aau);
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(Value(buf, sizeof(buf)), 0x62a8ab43u);
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  EXPECT_EQ(Value(buf, sizeof(buf)), 0x46dd794eu);
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(31 - i);
  EXPECT_EQ(Value(buf, sizeof(buf)), 0x113fdb5cu);
  EXPECT_EQ(Value("123456789", 9), 0xe3069283u);
  EXPECT_EQ(Value("", 0), 0u);
}

TEST(Crc32cTest, SoftwareKnownVectors) {
  EXPECT_EQ(internal::ExtendSoftware(0, "123456789", 9), 0xe3069283u);
  char zeros[32] = {};
  EXPECT_EQ(internal::ExtendSoftware(0, zeros, sizeof(zeros)), 0x8a9136aau);
}

TEST(Crc32cTest, LongKnownVector) {
  // Long enough for the interleaved path; values from a bitwise reference
  // implementation.
  std::string zeros(4096, '\0'), ones(4096, '\xff'), pattern(10000, '\0');
  for (size_t i = 0; i < pattern.size(); i++) pattern[i] = static_cast<char>(i % 251);
  EXPECT_EQ(Value(zeros.data(), zeros.size()), 0x98f94189u);
  EXPECT_EQ(Value(ones.data(), ones.size()), 0x25c1fe13u);
  EXPECT_EQ(Value(pattern.data(), pattern.size()), 0xd3716c83u);
  EXPECT_EQ(internal::ExtendSoftware(0, pattern.data(), pattern.size()), 0xd3716c83u);
  // Extend over 4 KiB one byte at a time equals one call.
  uint32_t crc = 0;
  for (char c : ones) crc = Extend(crc, &c, 1);
  EXPECT_EQ(crc, Value(ones.data(), ones.size()));
}

TEST(Crc32cTest, ValuesDiffer) {
  EXPECT_NE(Value("a", 1), Value("foo", 3));
  EXPECT_NE(Value("foo", 3), Value("fop", 3));
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  const std::string s = "hello world, this string is longer than eight bytes";
  for (size_t split = 0; split <= s.size(); split++) {
    EXPECT_EQ(Extend(Value(s.data(), split), s.data() + split, s.size() - split),
              Value(s.data(), s.size()));
  }
}

TEST(Crc32cTest, Mask) {
  const uint32_t crc = Value("foo", 3);
  EXPECT_NE(crc, Mask(crc));
  EXPECT_NE(crc, Mask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Unmask(Mask(Mask(crc)))));
  for (uint32_t v : {0u, 1u, 0xffffffffu, 0x80000000u, 0x12345678u}) EXPECT_EQ(Unmask(Mask(v)), v);
}

TEST(Crc32cTest, HardwareAndSoftwareAgree) {
  if (!internal::HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  // Lengths around the interleaved rounds' boundaries (3 x 128, 3 x 1024).
  for (size_t len : {383, 384, 385, 767, 768, 769, 1151, 3071, 3072, 3073, 3455, 3456, 4100,
                     6144, 6145, 65536}) {
    for (size_t start : {0, 1, 7}) {
      ASSERT_EQ(internal::ExtendHardware(0, data.data() + start, len),
                internal::ExtendSoftware(0, data.data() + start, len))
          << "start " << start << " len " << len;
    }
  }
  for (int trial = 0; trial < 2000; trial++) {
    // Random lengths and unaligned starts exercise every tail loop.
    const size_t start = rng() % 64;
    const size_t len = trial < 200 ? trial : rng() % (data.size() - start);
    const uint32_t init = (trial % 2) ? static_cast<uint32_t>(rng()) : 0;
    ASSERT_EQ(internal::ExtendHardware(init, data.data() + start, len),
              internal::ExtendSoftware(init, data.data() + start, len))
        << "start " << start << " len " << len;
  }
}

}  // namespace
}  // namespace lsm::crc32c
