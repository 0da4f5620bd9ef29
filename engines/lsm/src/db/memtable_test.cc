#include "db/memtable.h"

#include <gtest/gtest.h>

namespace lsm {
namespace {

TEST(MemTableTest, NewestVersionWins) {
  MemTable mem(0, 1 << 20);
  mem.Add(1, ValueType::kValue, "a", "1");
  mem.Add(2, ValueType::kValue, "b", "2");
  mem.Add(3, ValueType::kValue, "a", "3");
  mem.Add(4, ValueType::kDeletion, "b", "");
  ValueType type;
  std::string value;
  ASSERT_TRUE(mem.Get("a", &type, &value));
  EXPECT_EQ(type, ValueType::kValue);
  EXPECT_EQ(value, "3");
  ASSERT_TRUE(mem.Get("b", &type, &value));
  EXPECT_EQ(type, ValueType::kDeletion);
  EXPECT_FALSE(mem.Get("c", &type, &value));
  EXPECT_FALSE(mem.Get("", &type, &value));
  EXPECT_EQ(mem.NumEntries(), 4u);
}

TEST(MemTableTest, IteratorSeesItsSnapshotOnly) {
  MemTable mem(0, 1 << 20);
  mem.Add(1, ValueType::kValue, "a", "1");
  mem.Add(2, ValueType::kValue, "c", "2");
  mem.Add(3, ValueType::kValue, "b", "3");  // after the snapshot
  mem.Add(4, ValueType::kValue, "a", "4");  // after the snapshot
  auto it = mem.NewIterator(2);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "a");
  EXPECT_EQ(it->value(), "1");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Next();
  EXPECT_FALSE(it->Valid());

  auto latest = mem.NewIterator(4);
  latest->Seek("a");
  ASSERT_TRUE(latest->Valid());
  EXPECT_EQ(latest->value(), "4");
  latest->Seek("b");
  ASSERT_TRUE(latest->Valid());
  EXPECT_EQ(latest->key(), "b");
  latest->Seek("d");
  EXPECT_FALSE(latest->Valid());
}

TEST(MemTableTest, BinaryKeysOrderBytewise) {
  MemTable mem(0, 1 << 20);
  const std::string k1("\x00\x01", 2), k2("\x00", 1), k3("\xff", 1);
  mem.Add(1, ValueType::kValue, k1, "x");
  mem.Add(2, ValueType::kValue, k2, "y");
  mem.Add(3, ValueType::kValue, k3, std::string(100000, 'v'));
  auto it = mem.NewIterator(3);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), k2);
  it->Next();
  EXPECT_EQ(it->key(), k1);
  it->Next();
  EXPECT_EQ(it->key(), k3);
  EXPECT_EQ(it->value().size(), 100000u);
}

}  // namespace
}  // namespace lsm

namespace lsm {
namespace {

// A small budget must hold many entries: the arena's blocks scale with it.
TEST(MemTableTest, SmallBudgetHoldsManyEntries) {
  MemTable mem(0, 8 * 1024);
  int n = 0;
  while (mem.ApproximateMemoryUsage() < 8 * 1024) {
    mem.Add(n + 1, ValueType::kValue, "key" + std::to_string(n), "0123456789");
    n++;
  }
  EXPECT_GT(n, 100);
}

}  // namespace
}  // namespace lsm
