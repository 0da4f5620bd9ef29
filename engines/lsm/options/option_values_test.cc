#include "lsm/option_values.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace lsm {
namespace {

TEST(OptionValuesTest, Bool) {
  bool b = false;
  ASSERT_TRUE(ParseBool("x", "true", &b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(ParseBool("x", "0", &b).ok());
  EXPECT_FALSE(b);
  ASSERT_TRUE(ParseBool("x", "1", &b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(ParseBool("x", "false", &b).ok());
  EXPECT_FALSE(b);
  for (const char* bad : {"", "TRUE", "yes", "2", "true ", " 1"}) {
    b = true;
    Status s = ParseBool("flag", bad, &b);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_TRUE(b) << "unchanged on error";
  }
  EXPECT_EQ(
      "Invalid argument: engine option 'flag': bad value 'yes' "
      "(choose from: true, false, 1, 0)",
            ParseBool("flag", "yes", &b).ToString());
}

TEST(OptionValuesTest, Int64WholeStringAndRange) {
  int64_t v = 0;
  ASSERT_TRUE(ParseInt64("n", "42", 0, 100, &v).ok());
  EXPECT_EQ(42, v);
  ASSERT_TRUE(ParseInt64("n", "-5", -10, 10, &v).ok());
  EXPECT_EQ(-5, v);
  ASSERT_TRUE(ParseInt64("n", "9223372036854775807", INT64_MIN, INT64_MAX, &v).ok());
  EXPECT_EQ(INT64_MAX, v);
  ASSERT_TRUE(ParseInt64("n", "-9223372036854775808", INT64_MIN, INT64_MAX, &v).ok());
  EXPECT_EQ(INT64_MIN, v);
  for (const char* bad : {"", "-", "+5", " 5", "5 ", "5x", "0x10", "1e3", "1.0", "--1",
                          "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999999"}) {
    v = 7;
    EXPECT_TRUE(ParseInt64("n", bad, INT64_MIN, INT64_MAX, &v).IsInvalidArgument()) << bad;
    EXPECT_EQ(7, v);
  }
  EXPECT_TRUE(ParseInt64("n", "101", 0, 100, &v).IsInvalidArgument());
  EXPECT_TRUE(ParseInt64("n", "-1", 0, 100, &v).IsInvalidArgument());
  EXPECT_EQ(
      "Invalid argument: engine option 'n': bad value '101' (expected an integer in [0, 100])",
            ParseInt64("n", "101", 0, 100, &v).ToString());
}

TEST(OptionValuesTest, SizeSuffixesAreBinary) {
  uint64_t v = 0;
  ASSERT_TRUE(ParseSize("s", "4096", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(4096u, v);
  ASSERT_TRUE(ParseSize("s", "64K", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(65536u, v);
  ASSERT_TRUE(ParseSize("s", "64k", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(65536u, v);
  ASSERT_TRUE(ParseSize("s", "32M", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(32u << 20, v);
  ASSERT_TRUE(ParseSize("s", "2G", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(2ull << 30, v);
  ASSERT_TRUE(ParseSize("s", "0", 0, UINT64_MAX, &v).ok());
  EXPECT_EQ(0u, v);
  for (const char* bad : {"", "K", "1.5M", "1KB", "1KiB", "-1", "1 K", "1T", "0x10",
                          "17179869184G", "18446744073709551616"}) {
    EXPECT_TRUE(ParseSize("s", bad, 0, UINT64_MAX, &v).IsInvalidArgument()) << bad;
  }
  EXPECT_TRUE(ParseSize("s", "1K", 2000, 4000, &v).IsInvalidArgument());
  EXPECT_TRUE(ParseSize("s", "4K", 2000, 4000, &v).IsInvalidArgument());
  Status s = ParseSize("memtable_bytes", "12X", 0, 100, &v);
  EXPECT_NE(std::string::npos, s.ToString().find("engine option 'memtable_bytes': bad value '12X'"))
      << s.ToString();
}

TEST(OptionValuesTest, Real) {
  double v = 0;
  ASSERT_TRUE(ParseReal("r", "1.5", 0, 10, &v).ok());
  EXPECT_EQ(1.5, v);
  ASSERT_TRUE(ParseReal("r", "1e3", 0, 1e4, &v).ok());
  EXPECT_EQ(1000, v);
  ASSERT_TRUE(ParseReal("r", "-2", -5, 0, &v).ok());
  EXPECT_EQ(-2, v);
  for (const char* bad : {"", "abc", "1.5x", " 1", "1 ", "nan", "inf", "-inf", "1e999"}) {
    EXPECT_TRUE(ParseReal("r", bad, -1e300, 1e300, &v).IsInvalidArgument()) << bad;
  }
  EXPECT_TRUE(ParseReal("r", "10.5", 0, 10, &v).IsInvalidArgument());
}

TEST(OptionValuesTest, Choice) {
  size_t i = 99;
  ASSERT_TRUE(ParseChoice("wal", "async", {"off", "async", "sync"}, &i).ok());
  EXPECT_EQ(1u, i);
  EXPECT_EQ(
      "Invalid argument: engine option 'wal': bad value 'sometimes' "
      "(choose from: off, async, sync)",
      ParseChoice("wal", "sometimes", {"off", "async", "sync"}, &i).ToString());
  EXPECT_TRUE(ParseChoice("wal", "SYNC", {"off", "async", "sync"}, &i).IsInvalidArgument());
}

TEST(OptionValuesTest, UnknownSuggestsTheClosestName) {
  const std::vector<std::string> known = {"memtable_bytes", "merge_policy", "wal"};
  EXPECT_EQ("memtable_bytes", ClosestName("memtable_byts", known));
  EXPECT_EQ("merge_policy", ClosestName("merge_polcy", known));
  EXPECT_EQ("", ClosestName("compression", known));
  EXPECT_EQ(
      "Invalid argument: engine option 'wall': unknown (did you mean 'wal'? choose from: "
      "memtable_bytes, merge_policy, wal)",
      UnknownOption("wall", known).ToString());
  EXPECT_EQ(
      "Invalid argument: engine option 'xyz': unknown (choose from: memtable_bytes, "
      "merge_policy, wal)",
      UnknownOption("xyz", known).ToString());
}

}  // namespace
}  // namespace lsm
