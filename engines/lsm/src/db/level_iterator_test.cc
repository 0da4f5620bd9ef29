#include "db/level_iterator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "table/test_util.h"

namespace lsm {
namespace {

// An in-memory component holding `entries` (key order), named `number`.
ComponentPtr MakeFile(uint64_t number, const std::map<std::string, std::string>& entries) {
  TableOptions options;
  test::StringSink sink;
  TableBuilder builder(options, &sink);
  for (const auto& [k, v] : entries) builder.Add(k, ValueType::kValue, v);
  EXPECT_TRUE(builder.Finish().ok());
  std::unique_ptr<Table> table;
  const std::string contents = sink.contents();
  EXPECT_TRUE(Table::Open(options, std::make_unique<test::StringSource>(contents),
                          contents.size(), "mem", &table)
                  .ok());
  ComponentMeta meta;
  meta.number = number;
  meta.level = 1;
  meta.file_size = contents.size();
  meta.entries = entries.size();
  meta.smallest = entries.begin()->first;
  meta.largest = entries.rbegin()->first;
  // No Env: the file is never marked obsolete, so nothing is removed.
  return std::make_shared<ComponentFile>(meta, std::move(table), nullptr, "");
}

TEST(LevelIteratorTest, ReadsDisjointFilesAsOneSortedRun) {
  const unsigned seed = test::Seed();
  std::mt19937 rng(seed);
  // Keys k000..k999 with gaps, cut into files of random length, given to
  // the iterator in shuffled order.
  std::map<std::string, std::string> all;
  for (int i = 0; i < 1000; i++) {
    if (rng() % 3 == 0) continue;
    char key[8];
    std::snprintf(key, sizeof(key), "k%03d", i);
    all[key] = "v" + std::to_string(i);
  }
  std::vector<ComponentPtr> files;
  std::map<std::string, std::string> chunk;
  uint64_t number = 1;
  for (const auto& [k, v] : all) {
    chunk[k] = v;
    if (rng() % 40 == 0) {
      files.push_back(MakeFile(number++, chunk));
      chunk.clear();
    }
  }
  if (!chunk.empty()) files.push_back(MakeFile(number++, chunk));
  ASSERT_GT(files.size(), 5u);
  std::shuffle(files.begin(), files.end(), rng);
  auto it = NewLevelIterator(files);

  auto m = all.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, all.end());
    ASSERT_EQ(it->key(), m->first);
    ASSERT_EQ(it->value(), m->second);
  }
  EXPECT_EQ(m, all.end());
  EXPECT_TRUE(it->status().ok());

  // Seeks to present keys, to gaps (inside a file and between files), and
  // past the end.
  for (int i = -1; i <= 1000; i++) {
    char target[8];
    std::snprintf(target, sizeof(target), "k%03d", i < 0 ? 0 : i);
    const std::string t = i < 0 ? "a" : (i == 1000 ? "z" : target);
    it->Seek(t);
    auto expected = all.lower_bound(t);
    if (expected == all.end()) {
      EXPECT_FALSE(it->Valid()) << t;
    } else {
      ASSERT_TRUE(it->Valid()) << t;
      EXPECT_EQ(it->key(), expected->first) << t;
    }
  }
}

TEST(LevelIteratorTest, EmptyLevelIsNeverValid) {
  auto it = NewLevelIterator({});
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->Seek("x");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

}  // namespace
}  // namespace lsm
