#include "lsm/listener.h"

#include <cstdio>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "db/test_util.h"
#include "lsm/db.h"

namespace lsm {
namespace {

class Recorder : public EventListener {
 public:
  void OnFlushCompleted(const FlushInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    flushes.push_back(info);
  }
  void OnMergeCompleted(const MergeInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    merges.push_back(info);
  }
  std::mutex mu_;
  std::vector<FlushInfo> flushes;
  std::vector<MergeInfo> merges;
};

TEST(ListenerTest, EveryFlushAndMergeIsToldOnce) {
  for (const PolicyKind policy : {PolicyKind::kTiering, PolicyKind::kLeveling}) {
    SCOPED_TRACE(ToString(policy));
    test::TempDir dir;
    Recorder recorder;
    Options options;
    options.merge_policy = policy;
    options.memtable_bytes = 64 << 10;
    options.wal = WalMode::kOff;
    options.listener = &recorder;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    const std::string value(100, 'v');
    const int n = 20000;  // distinct keys: every entry survives to its flush
    for (int i = 0; i < n; ++i) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % n);
      ASSERT_TRUE(db->Put(key, value).ok());
    }
    ASSERT_TRUE(db->Flush().ok());
    ASSERT_TRUE(db->WaitForIdle().ok());
    const Stats st = db->GetStats();
    std::lock_guard<std::mutex> lock(recorder.mu_);
    EXPECT_EQ(st.flushes_completed, recorder.flushes.size());
    EXPECT_EQ(st.merges_completed, recorder.merges.size());
    ASSERT_GT(recorder.merges.size(), 0u);
    uint64_t flushed_entries = 0, flushed_bytes = 0, merged_bytes = 0, read_bytes = 0;
    uint64_t previous_sealed = 0;
    for (const FlushInfo& f : recorder.flushes) {
      EXPECT_LE(f.start_micros, f.end_micros);
      // Sealed before it was flushed, and memtables are flushed in order.
      EXPECT_GT(f.sealed_micros, 0u);
      EXPECT_LE(f.sealed_micros, f.start_micros);
      EXPECT_GE(f.sealed_micros, previous_sealed);
      previous_sealed = f.sealed_micros;
      flushed_entries += f.entries;
      flushed_bytes += f.bytes;
    }
    for (const MergeInfo& m : recorder.merges) {
      EXPECT_LE(m.start_micros, m.end_micros);
      EXPECT_GE(m.inputs, 1u);
      EXPECT_GE(m.output_level, m.deepest_input_level);
      EXPECT_EQ(m.moved, m.inputs == 1);
      if (!m.moved) {
        read_bytes += m.input_bytes;
        merged_bytes += m.output_bytes;
      }
    }
    EXPECT_EQ(static_cast<uint64_t>(n), flushed_entries);
    EXPECT_EQ(st.flush_bytes_written, flushed_bytes);
    EXPECT_EQ(st.merge_bytes_written, merged_bytes);
    EXPECT_EQ(st.merge_bytes_read, read_bytes);
  }
}

}  // namespace
}  // namespace lsm
