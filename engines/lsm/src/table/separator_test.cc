#include "table/separator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace lsm {
namespace {

std::string Sep(std::string_view a, std::string_view b) {
  std::string s;
  ShortestSeparator(a, b, &s);
  return s;
}

std::string Succ(std::string_view a) {
  std::string s;
  ShortSuccessor(a, &s);
  return s;
}

TEST(SeparatorTest, Examples) {
  EXPECT_EQ(Sep("abc1000", "abc2000"), "abc11");  // '1' + 1 == '2': bump the next byte
  EXPECT_EQ(Sep("abc", "abd"), "abc");       // nothing fits between
  EXPECT_EQ(Sep("abc", "abcdef"), "abc");    // start is a prefix
  EXPECT_EQ(Sep("apple", "banana"), "aq");
  EXPECT_EQ(Sep("a1zz", "b"), "a2");
  EXPECT_EQ(Sep("", "a"), "");
  EXPECT_EQ(Sep(std::string("a\xff\xff", 3), "b"), std::string("a\xff\xff", 3));
  EXPECT_EQ(Sep("a\x10", "c"), "b");
  EXPECT_EQ(Sep("user000123", "user000124"), "user000123");
  EXPECT_EQ(Sep("user000123", "user000200"), "user00013");
  EXPECT_EQ(Sep("user000123", "user000300"), "user0002");
}

TEST(SeparatorTest, SuccessorExamples) {
  EXPECT_EQ(Succ("abc"), "b");
  EXPECT_EQ(Succ(std::string("\xff\xff" "a", 3)), std::string("\xff\xff" "b", 3));
  EXPECT_EQ(Succ(std::string("\xff\xff", 2)), std::string("\xff\xff", 2));
  EXPECT_EQ(Succ(""), "");
}

TEST(SeparatorTest, RandomPairs) {
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  static const char kBytes[] = {'\0', '\x01', 'a', 'b', 'c', '\xfe', '\xff'};
  auto random_key = [&] {
    std::string k(rng() % 8, '\0');
    for (char& c : k) c = kBytes[rng() % sizeof(kBytes)];
    return k;
  };
  for (int i = 0; i < 200000; i++) {
    std::string a = random_key(), b = random_key();
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    const std::string s = Sep(a, b);
    ASSERT_LE(a, s) << i;
    ASSERT_LT(s, b) << i;
    ASSERT_LE(s.size(), a.size());
    const std::string t = Succ(a);
    ASSERT_LE(a, t);
    ASSERT_LE(t.size(), a.size());
  }
}

}  // namespace
}  // namespace lsm
