#include "driver/op_generator.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace lsmbench {
namespace driver {
namespace {

WorkloadSpec Mixed() {
  WorkloadSpec w;
  w.record_count = 10000;
  w.mix = {0.1, 0.4, 0.1, 0.2, 0.1, 0.1};
  w.value_size_min = 100;
  w.value_size_max = 200;
  w.scan_length_min = w.scan_length_max = 7;
  return w;
}

TEST(OpGeneratorTest, SameSequenceNumberSameOperation) {
  WorkloadSpec w = Mixed();
  w.mix = {0, 0.5, 0.1, 0.3, 0.1};  // no inserts: those take the next free id
  OpGenerator a(w, 99, w.record_count), b(w, 99, w.record_count), c(w, 100, w.record_count);
  int differs = 0;
  for (uint64_t seq = 0; seq < 10000; seq++) {
    Op x, y, z;
    // b generates in reverse order: the result must not depend on order.
    a.Make(seq, &x);
    b.Make(9999 - seq, &y);
    b.Make(seq, &y);
    c.Make(seq, &z);
    ASSERT_EQ(x.type, y.type);
    ASSERT_EQ(x.id, y.id);
    ASSERT_EQ(x.value, y.value);
    differs += x.id != z.id;
  }
  EXPECT_GT(differs, 9000);  // another seed, another stream
}

TEST(OpGeneratorTest, TypeOfIsMakesTypeAndDrawsNoId) {
  WorkloadSpec w = Mixed();
  OpGenerator g(w, 7, w.record_count), peek(w, 7, w.record_count);
  int kinds = 0;
  bool seen[kNumOpTypes] = {};
  for (uint64_t seq = 0; seq < 5000; seq++) {
    Op op;
    g.Make(seq, &op);
    const int type = peek.TypeOf(seq);
    ASSERT_EQ(type, op.type) << "seq " << seq;
    if (!seen[type]) kinds++;
    seen[type] = true;
  }
  EXPECT_EQ(kinds, kNumOpTypes);
  // Asking the type of an insert must not use up an id.
  EXPECT_EQ(peek.key_count(), w.record_count);
}

TEST(OpGeneratorTest, MixProportionsAndValueSizes) {
  WorkloadSpec w = Mixed();
  OpGenerator g(w, 1, w.record_count);
  int counts[kNumOpTypes] = {};
  std::set<uint64_t> inserted;
  const int n = 200000;
  for (uint64_t seq = 0; seq < n; seq++) {
    Op op;
    g.Make(seq, &op);
    counts[op.type]++;
    if (op.type == kInsert) {
      ASSERT_GE(op.id, w.record_count);
      ASSERT_TRUE(inserted.insert(op.id).second) << "insert reused id " << op.id;
    } else {
      ASSERT_LT(op.id, g.key_count());
    }
    if (op.type == kInsert || op.type == kUpdate || op.type == kReadModifyWrite) {
      ASSERT_GE(op.value.size(), 100u);
      ASSERT_LE(op.value.size(), 200u);
    } else {
      ASSERT_TRUE(op.value.empty());
    }
    ASSERT_EQ(op.scan_length, op.type == kScan ? 7u : 0u);
  }
  for (int t = 0; t < kNumOpTypes; t++) {
    EXPECT_NEAR(counts[t] / static_cast<double>(n), w.mix[t], 0.01) << OpTypeName(t);
  }
  EXPECT_EQ(g.key_count(), w.record_count + counts[kInsert]);
}

TEST(OpGeneratorTest, InsertsStartAtInsertStart) {
  WorkloadSpec w;
  w.record_count = 0;
  w.mix = {1, 0, 0, 0, 0};
  OpGenerator g(w, 1, 500);
  Op op;
  g.Make(0, &op);
  EXPECT_EQ(op.id, 500u);
  g.Make(1, &op);
  EXPECT_EQ(op.id, 501u);
}

TEST(OpGeneratorTest, LoadValuesAreReproducible) {
  WorkloadSpec w = Mixed();
  OpGenerator a(w, 5, 0), b(w, 5, 0);
  for (uint64_t id = 0; id < 1000; id++) {
    Op x, y;
    a.MakeLoad(id, &x);
    b.MakeLoad(id, &y);
    ASSERT_EQ(x.id, id);
    ASSERT_EQ(x.value, y.value);
  }
}

TEST(OpGeneratorTest, SecondaryFieldsAreReproducibleAndInRange) {
  WorkloadSpec w = Mixed();
  w.mix = {0.5, 0.5, 0, 0, 0};
  w.secondary_fields = 3;
  w.secondary_values = 50;
  OpGenerator a(w, 7, w.record_count), b(w, 7, w.record_count);
  std::set<uint64_t> seen;
  for (uint64_t seq = 0; seq < 2000; seq++) {
    Op x, y;
    a.Make(seq, &x);
    b.Make(seq, &y);
    ASSERT_EQ(x.fields.size(), 3u);
    ASSERT_EQ(x.fields, y.fields);
    for (uint64_t f : x.fields) {
      ASSERT_LT(f, 50u);
      seen.insert(f);
    }
  }
  EXPECT_EQ(seen.size(), 50u);  // uniform over every value
  Op load;
  a.MakeLoad(3, &load);
  EXPECT_EQ(load.fields.size(), 3u);

  // A secondary query's range: `selectivity` values, inside [0, 50).
  Rng rng(1);
  std::set<uint64_t> lows;
  for (int i = 0; i < 1000; i++) {
    Op q;
    a.MakeSecondaryQuery(10, &rng, &q);
    ASSERT_EQ(q.range_high - q.range_low, 10u);
    ASSERT_LE(q.range_high, 50u);
    lows.insert(q.range_low);
  }
  EXPECT_EQ(lows.size(), 41u);  // every placement 0..40
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
