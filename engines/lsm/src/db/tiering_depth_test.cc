// Tiering in the engine under updates over a fixed key space: the tree stops
// deepening once the data fills its deepest level, across reopens (the
// entries flushed into each component are in the manifest), and every key
// keeps its last value; tiering_unbounded_depth deepens as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>

#include "db/test_util.h"
#include "lsm/db.h"

namespace lsm {
namespace {

constexpr int kKeys = 300;           // the unique data: ~5 memtables of 60 writes
constexpr int kWritesPerFlush = 60;  // well under the 8 KiB memtable
constexpr int kFlushes = 300;        // unbounded tiering (T = 3) reaches level 5

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

Options TieringOptions(bool unbounded) {
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 8 << 10;
  options.merge_policy = PolicyKind::kTiering;
  options.tiering_unbounded_depth = unbounded;
  return options;
}

int Deepest(DB* db) {
  const Stats st = db->GetStats();
  int deepest = 0;
  for (size_t level = 0; level < st.disk_components_per_level.size(); ++level) {
    if (st.disk_components_per_level[level] > 0) deepest = static_cast<int>(level);
  }
  return deepest;
}

// Loads every key once, then updates random keys one memtable at a time
// (each flush's merges done before the next), reopening often in the second
// half. Returns
// the deepest level after the first and the second half.
std::pair<int, int> RunUpdates(bool unbounded, uint32_t seed) {
  test::TempDir dir;
  std::map<std::string, std::string> model;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(TieringOptions(unbounded), dir.path(), &db).ok());
  auto flush = [&] {
    EXPECT_TRUE(db->Flush().ok());
    EXPECT_TRUE(db->WaitForIdle().ok());
  };
  for (int i = 0; i < kKeys; ++i) {
    model[Key(i)] = "load";
    EXPECT_TRUE(db->Put(Key(i), "load").ok());
    if ((i + 1) % kWritesPerFlush == 0) flush();
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, kKeys - 1);
  std::pair<int, int> depths;
  for (int f = 1; f <= kFlushes; ++f) {
    for (int w = 0; w < kWritesPerFlush; ++w) {
      const std::string key = Key(pick(rng));
      const std::string value = "v" + std::to_string(f) + "." + std::to_string(w);
      model[key] = value;
      EXPECT_TRUE(db->Put(key, value).ok());
    }
    flush();
    if (f == kFlushes / 2) depths.first = Deepest(db.get());
    // The second half reopens every 5 flushes: a tree that forgot what was
    // flushed into its components would take each for fresh data, and deepen.
    if (f >= kFlushes / 2 && f % 5 == 0) {
      db.reset();
      EXPECT_TRUE(DB::Open(TieringOptions(unbounded), dir.path(), &db).ok());
    }
  }
  depths.second = Deepest(db.get());
  std::string value;
  for (const auto& [key, expected] : model) {
    EXPECT_TRUE(db->Get(key, &value).ok()) << key;
    EXPECT_EQ(expected, value) << key;
  }
  return depths;
}

TEST(TieringDepthTest, TheTreeStopsDeepeningOnceTheDataFillsItsDeepestLevel) {
  const uint32_t seed = 20261202;
  std::printf("seed %u\n", seed);
  const auto [half, end] = RunUpdates(/*unbounded=*/false, seed);
  const auto [unbounded_half, unbounded_end] = RunUpdates(/*unbounded=*/true, seed);
  std::printf("deepest level after %d and %d flushes: %d, %d (unbounded: %d, %d)\n",
              kFlushes / 2, kFlushes, half, end, unbounded_half, unbounded_end);
  // 300 keys fill ~5 flushes; a level-2 component holds 9 flushes of
  // updates, more than the data: level 2 is the last.
  EXPECT_EQ(2, half);
  EXPECT_EQ(2, end) << "the reopen lost the entries flushed into each component";
  EXPECT_GT(unbounded_end, unbounded_half);
  EXPECT_GE(unbounded_end, 4);
}

}  // namespace
}  // namespace lsm
