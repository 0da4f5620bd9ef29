#include "adapters/option_parser.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace lsmbench {
namespace {

TEST(OptionParserTest, TypedFrontEndsCheckTheFieldsRange) {
  int i = 0;
  EXPECT_TRUE(ParseInteger("i", "2147483648", &i).IsInvalidArgument());
  ASSERT_TRUE(ParseInteger("i", "-2147483648", &i).ok());
  EXPECT_EQ(INT32_MIN, i);
  uint32_t u = 0;
  EXPECT_TRUE(ParseSizeInto("u", "4G", &u).IsInvalidArgument());
  ASSERT_TRUE(ParseSizeInto("u", "4095M", &u).ok());
  EXPECT_EQ(4095u << 20, u);
}

struct Target {
  int a = 0;
  bool b = false;
};

const std::vector<OptionSpec<Target>> kTable = {
    {"alpha", IntField<0, 9, &Target::a>},
    {"beta", BoolField<&Target::b>},
};

TEST(OptionParserTest, ApplyOptions) {
  Target t;
  ASSERT_TRUE(ApplyOptions(kTable, {{"alpha", "3"}, {"beta", "true"}}, &t).ok());
  EXPECT_EQ(3, t.a);
  EXPECT_TRUE(t.b);
  ASSERT_TRUE(ApplyOptions(kTable, {}, &t).ok());
  EXPECT_EQ(3, t.a);

  EXPECT_EQ("Invalid argument: engine option 'gamma': unknown (choose from: alpha, beta)",
            ApplyOptions(kTable, {{"alpha", "1"}, {"gamma", "1"}}, &t).ToString());
  EXPECT_EQ(
      "Invalid argument: engine option 'alpha': bad value '10' (expected an integer in [0, 9])",
            ApplyOptions(kTable, {{"alpha", "10"}}, &t).ToString());
}

struct Inner {
  uint32_t bytes = 0;
  double ratio = 0;
};
struct Outer {
  Inner inner;
  int16_t small = 0;
};

TEST(OptionParserTest, FieldSettersFollowThePath) {
  Outer o;
  ASSERT_TRUE((SizeField<0, 1 << 20, &Outer::inner, &Inner::bytes>("b", "2K", &o)).ok());
  EXPECT_EQ(2048u, o.inner.bytes);
  EXPECT_TRUE(
      (SizeField<0, 1 << 20, &Outer::inner, &Inner::bytes>("b", "2M", &o)).IsInvalidArgument());
  EXPECT_EQ(2048u, o.inner.bytes);
  ASSERT_TRUE((RealField<1, 10, &Outer::inner, &Inner::ratio>("r", "2.5", &o)).ok());
  EXPECT_EQ(2.5, o.inner.ratio);
  EXPECT_TRUE(
      (RealField<1, 10, &Outer::inner, &Inner::ratio>("r", "0.5", &o)).IsInvalidArgument());
  // The field's own type bounds the range too.
  EXPECT_TRUE(
      (IntField<INT64_MIN, INT64_MAX, &Outer::small>("s", "40000", &o)).IsInvalidArgument());
  EXPECT_TRUE(
      (SizeField<0, UINT64_MAX, &Outer::inner, &Inner::bytes>("b", "4G", &o)).IsInvalidArgument());
  ASSERT_TRUE((IntField<INT64_MIN, INT64_MAX, &Outer::small>("s", "-3", &o)).ok());
  EXPECT_EQ(-3, o.small);
}

}  // namespace
}  // namespace lsmbench
