// MemTableCapacity against the DB itself: every memtable a DB seals while
// writes keep coming holds exactly that many entries.
#include "lsm/memtable_capacity.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/test_util.h"
#include "lsm/db.h"
#include "lsm/listener.h"

namespace lsm {
namespace {

class FlushSizes : public EventListener {
 public:
  void OnFlushCompleted(const FlushInfo& info) override {
    std::lock_guard<std::mutex> lock(mu);
    entries.push_back(info.entries);
  }
  std::mutex mu;
  std::vector<uint64_t> entries;
};

TEST(MemTableCapacityTest, EveryFullMemTableTheDbSealsHoldsThatMany) {
  struct Case {
    size_t memtable_bytes, key_bytes, value_bytes;
  };
  for (const Case c : {Case{64 << 10, 16, 100}, Case{256 << 10, 16, 1000},
                       Case{128 << 10, 40, 0}, Case{4096, 8, 3000}}) {
    SCOPED_TRACE(std::to_string(c.memtable_bytes) + " / " + std::to_string(c.key_bytes) +
                 " + " + std::to_string(c.value_bytes));
    const uint64_t capacity = MemTableCapacity(c.memtable_bytes, c.key_bytes, c.value_bytes);
    ASSERT_GE(capacity, 1u);
    test::TempDir dir;
    FlushSizes flushes;
    Options options;
    options.memtable_bytes = c.memtable_bytes;
    options.wal = WalMode::kOff;
    options.listener = &flushes;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    const std::string value(c.value_bytes, 'v');
    const uint64_t writes = 3 * capacity + 1;  // three full memtables, then one more write
    for (uint64_t i = 0; i < writes; ++i) {
      std::string key(c.key_bytes, '0');
      const std::string digits = std::to_string(i);
      key.replace(key.size() - digits.size(), digits.size(), digits);  // distinct keys
      ASSERT_TRUE(db->Put(key, value).ok());
    }
    ASSERT_TRUE(db->WaitForIdle().ok());
    std::lock_guard<std::mutex> lock(flushes.mu);
    ASSERT_EQ(flushes.entries.size(), 3u);
    for (uint64_t n : flushes.entries) EXPECT_EQ(n, capacity);
  }
}

TEST(MemTableCapacityTest, LargerBudgetsScaleFromTheExactSize) {
  const uint64_t exact = MemTableCapacity(kExactCapacityBytes, 16, 1000);
  EXPECT_EQ(MemTableCapacity(4 * kExactCapacityBytes, 16, 1000), 4 * exact);
  EXPECT_LT(MemTableCapacity(1 << 20, 16, 4000), MemTableCapacity(1 << 20, 16, 1000) / 3);
}

}  // namespace
}  // namespace lsm
