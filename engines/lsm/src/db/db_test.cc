#include "lsm/db.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "db/filenames.h"
#include "db/test_util.h"
#include "options/option_test_util.h"

namespace lsm {
namespace {

std::unique_ptr<DB> OpenOrDie(const Options& options, const std::string& dir) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return db;
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

std::vector<std::string> FilesOfType(const std::string& dir, FileType type) {
  std::vector<std::string> children, result;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  for (const auto& name : children) {
    uint64_t number;
    if (ParseFileName(name, &number) == type) result.push_back(dir + "/" + name);
  }
  return result;
}

TEST(DBTest, PutGetDelete) {
  test::TempDir dir;
  auto db = OpenOrDie(Options(), dir.path());
  std::string value;
  EXPECT_TRUE(db->Get("a", &value).IsNotFound());
  ASSERT_TRUE(db->Put("a", "1").ok());
  ASSERT_TRUE(db->Put("", "empty key").ok());
  ASSERT_TRUE(db->Get("a", &value).ok());
  EXPECT_EQ(value, "1");
  ASSERT_TRUE(db->Get("", &value).ok());
  EXPECT_EQ(value, "empty key");
  ASSERT_TRUE(db->Delete("a").ok());
  EXPECT_TRUE(db->Get("a", &value).IsNotFound());
  Stats st = db->GetStats();
  EXPECT_EQ(st.puts, 2u);
  EXPECT_EQ(st.deletes, 1u);
  EXPECT_EQ(st.gets, 4u);
}

TEST(DBTest, FlushCreatesComponentAndDataSurvivesReopen) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  {
    auto db = OpenOrDie(options, dir.path());
    for (int i = 0; i < 1000; i++) ASSERT_TRUE(db->Put(Key(i), "v" + std::to_string(i)).ok());
    ASSERT_TRUE(db->Flush().ok());
    Stats st = db->GetStats();
    EXPECT_EQ(st.disk_components, 1u);
    EXPECT_EQ(st.flushes_completed, 1u);
    EXPECT_GT(st.flush_bytes_written, 1000u * 10);
    ASSERT_TRUE(db->Put("after-flush", "x").ok());  // flushed by the clean close
  }
  auto db = OpenOrDie(options, dir.path());
  std::string value;
  for (int i = 0; i < 1000; i += 37) {
    ASSERT_TRUE(db->Get(Key(i), &value).ok());
    EXPECT_EQ(value, "v" + std::to_string(i));
  }
  ASSERT_TRUE(db->Get("after-flush", &value).ok());
}

TEST(DBTest, WalRecoversUnflushedWrites) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kSync;
  {
    auto db = OpenOrDie(options, dir.path());
    ASSERT_TRUE(db->Put("k", "v").ok());
    ASSERT_TRUE(db->Delete("gone").ok());
  }
  EXPECT_TRUE(FilesOfType(dir.path(), FileType::kTable).empty()) << "close should not flush";
  auto db = OpenOrDie(options, dir.path());
  std::string value;
  ASSERT_TRUE(db->Get("k", &value).ok());
  EXPECT_EQ(value, "v");
  EXPECT_EQ(FilesOfType(dir.path(), FileType::kWal).size(), 1u) << "replayed logs are removed";
}

TEST(DBTest, OversizedKeyOrValueIsInvalidArgument) {
  test::TempDir dir;
  auto db = OpenOrDie(Options(), dir.path());
  std::string big_key(kMaxKeyBytes + 1, 'k');
  std::string max_key(kMaxKeyBytes, 'k');
  std::string big_value(kMaxValueBytes + 1, 'v');
  EXPECT_TRUE(db->Put(big_key, "v").IsInvalidArgument());
  EXPECT_TRUE(db->Delete(big_key).IsInvalidArgument());
  EXPECT_TRUE(db->Put("k", big_value).IsInvalidArgument());
  ASSERT_TRUE(db->Put(max_key, std::string(kMaxValueBytes, 'v')).ok());
  ASSERT_TRUE(db->Flush().ok());
  std::string value;
  ASSERT_TRUE(db->Get(max_key, &value).ok());
  EXPECT_EQ(value.size(), kMaxValueBytes);
}

TEST(DBTest, DataDirThatIsAFileIsIOErrorNamingIt) {
  test::TempDir dir;
  const std::string path = dir.path() + "/not-a-dir";
  std::ofstream(path) << "x";
  std::unique_ptr<DB> db;
  Status s = DB::Open(Options(), path, &db);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  EXPECT_EQ(db, nullptr);
}

TEST(DBTest, UnknownPolicyListsValidNames) {
  // A policy outside the enum (e.g. a cast from an unchecked integer).
  test::TempDir dir;
  Options options;
  options.merge_policy = lsm::test::Named<lsm::PolicyKind>("levelling");
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(db, nullptr);
  for (const char* name : {"'merge_policy'", "leveling", "tiering", "size-tiered"}) {
    EXPECT_NE(s.ToString().find(name), std::string::npos) << s.ToString();
  }
}

TEST(DBTest, BadOptionIsInvalidArgumentNamingIt) {
  test::TempDir dir;
  Options options;
  options.memtable_bytes = 10;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("memtable_bytes"), std::string::npos) << s.ToString();
}

TEST(DBTest, SecondOpenOfSameDirFails) {
  test::TempDir dir;
  auto db = OpenOrDie(Options(), dir.path());
  std::unique_ptr<DB> second;
  EXPECT_FALSE(DB::Open(Options(), dir.path(), &second).ok());
}

TEST(DBTest, IteratorIsASnapshotAndOutlivesMerges) {
  test::TempDir dir;
  Options options;
  options.memtable_bytes = 8 * 1024;
  options.merge_policy = lsm::PolicyKind::kTiering;
  auto db = OpenOrDie(options, dir.path());
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(db->Put(Key(i), "old").ok());
  auto it = db->NewIterator();
  // Overwrite everything and let flushes and merges replace the files the
  // iterator reads.
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(db->Put(Key(i), "new").ok());
  for (int i = 0; i < 2000; i += 2) ASSERT_TRUE(db->Delete(Key(i)).ok());
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->WaitForIdle().ok());
  EXPECT_GT(db->GetStats().merges_completed, 0u);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    ASSERT_EQ(it->key(), Key(n));
    ASSERT_EQ(it->value(), "old");
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(n, 2000);
  it.reset();
  auto now = db->NewIterator();
  n = 0;
  for (now->SeekToFirst(); now->Valid(); now->Next(), n++) ASSERT_EQ(now->value(), "new");
  EXPECT_EQ(n, 1000);
}

TEST(DBTest, ConcurrentWritersAndReaders) {
  test::TempDir dir;
  Options options;
  options.memtable_bytes = 32 * 1024;
  options.wal = WalMode::kSync;  // exercises group commit
  auto db = OpenOrDie(options, dir.path());
  constexpr int kThreads = 4, kPerThread = 1500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::string value;
      for (int i = 0; i < kPerThread; i++) {
        std::string key = "t" + std::to_string(t) + "-" + Key(i);
        ASSERT_TRUE(db->Put(key, key).ok());
        ASSERT_TRUE(db->Get(key, &value).ok());
        ASSERT_EQ(value, key);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(db->WaitForIdle().ok());
  auto it = db->NewIterator();
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(n, kThreads * kPerThread);
}

TEST(DBTest, StatsTrackLevelsAndWriteAmplification) {
  test::TempDir dir;
  Options options;
  options.memtable_bytes = 16 * 1024;
  options.merge_policy = lsm::PolicyKind::kLeveling;
  options.wal = WalMode::kOff;
  auto db = OpenOrDie(options, dir.path());
  for (int i = 0; i < 20000; i++) ASSERT_TRUE(db->Put(Key(i % 5000), std::string(50, 'v')).ok());
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->WaitForIdle().ok());
  Stats st = db->GetStats();
  EXPECT_GT(st.merges_completed, 0u);
  EXPECT_GT(st.merge_bytes_read, 0u);
  EXPECT_GT(st.write_amplification, 1.0);
  uint64_t per_level_total = 0;
  for (uint64_t n : st.disk_components_per_level) per_level_total += n;
  EXPECT_EQ(per_level_total, st.disk_components);
  EXPECT_GE(st.disk_components_per_level.size(), 2u) << "leveling should have reached level 1";
  EXPECT_EQ(st.merges_running, 0u);
  EXPECT_GT(st.max_components, 0u);
}

// --- corruption -----------------------------------------------------------

void FlipByte(const std::string& fname, std::streamoff offset) {
  std::fstream f(fname, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(offset);
  f.write(&c, 1);
  ASSERT_TRUE(f.good()) << fname;
}

TEST(CorruptionTest, FlippedDataByteIsCorruptionNamingTheFile) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  {
    auto db = OpenOrDie(options, dir.path());
    for (int i = 0; i < 500; i++) ASSERT_TRUE(db->Put(Key(i), std::string(100, 'v')).ok());
    ASSERT_TRUE(db->Flush().ok());
  }
  auto tables = FilesOfType(dir.path(), FileType::kTable);
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(FlipByte(tables[0], 100));
  auto db = OpenOrDie(options, dir.path());
  std::string value;
  Status s = db->Get(Key(0), &value);  // the first block holds key 0
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(tables[0]), std::string::npos) << s.ToString();
  auto it = db->NewIterator();
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString() << " after " << n;
  EXPECT_NE(it->status().ToString().find(tables[0]), std::string::npos);
}

// Damage, unlike a manifest that ends inside its last edit (an append that
// never completed: manifest_test.cc), is never taken for an earlier state.
TEST(CorruptionTest, DamagedManifestFailsOpenNamingIt) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 8 * 1024;
  {
    auto db = OpenOrDie(options, dir.path());
    for (int i = 0; i < 3000; i++) ASSERT_TRUE(db->Put(Key(i), std::string(30, 'v')).ok());
  }
  auto manifests = FilesOfType(dir.path(), FileType::kManifest);
  ASSERT_EQ(manifests.size(), 1u);
  struct stat st;
  ASSERT_EQ(stat(manifests[0].c_str(), &st), 0);
  ASSERT_GT(st.st_size, 20);
  ASSERT_NO_FATAL_FAILURE(FlipByte(manifests[0], st.st_size - 5));
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(manifests[0]), std::string::npos) << s.ToString();
}

TEST(CorruptionTest, MissingComponentFileFailsOpen) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  {
    auto db = OpenOrDie(options, dir.path());
    ASSERT_TRUE(db->Put("k", "v").ok());
    ASSERT_TRUE(db->Flush().ok());
  }
  auto tables = FilesOfType(dir.path(), FileType::kTable);
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(unlink(tables[0].c_str()), 0);
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(tables[0]), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lsm

namespace lsm {
namespace {

// With a backlog of flushes and merges, the budget bounds how fast they
// write: the work cannot finish sooner than its bytes over the budget.
TEST(IoBudgetDBTest, FlushesAndMergesKeepToTheBudget) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 256 * 1024;
  options.merge_policy = lsm::PolicyKind::kTiering;
  options.io_budget_bytes_per_sec = 4 << 20;
  auto db = OpenOrDie(options, dir.path());
  const uint64_t start = Env::Default()->NowMicros();
  for (int i = 0; i < 40000; i++) ASSERT_TRUE(db->Put(Key(i), std::string(100, 'v')).ok());
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->WaitForIdle().ok());
  const double seconds = (Env::Default()->NowMicros() - start) / 1e6;
  Stats st = db->GetStats();
  const double written = static_cast<double>(st.flush_bytes_written + st.merge_bytes_written);
  std::printf("wrote %.1f MiB in %.2f s: %.2f MiB/s against a 4 MiB/s budget\n",
              written / (1 << 20), seconds, written / (1 << 20) / seconds);
  ASSERT_GT(written, 8.0 * (1 << 20)) << "too little background work to measure";
  // The bucket may start with up to 10 ms of burst and one request of debt.
  EXPECT_GE(seconds, written / (4 << 20) * 0.95);
}

}  // namespace
}  // namespace lsm

namespace lsm {
namespace {

// How many merges a scheduler lets run at once, sampled while a throttled
// tree keeps several merges alive: single and greedy one, greedy_k at most k.
uint64_t MaxMergesRunning(const std::string& scheduler, uint64_t* max_created) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 32 * 1024;
  options.merge_policy = lsm::PolicyKind::kTiering;
  options.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(scheduler);
  options.greedy_k = 2;
  options.io_budget_bytes_per_sec = 2 << 20;  // merges last long enough to overlap
  auto db = OpenOrDie(options, dir.path());
  uint64_t max_running = 0;
  *max_created = 0;
  for (int i = 0; i < 30000; i++) {
    EXPECT_TRUE(db->Put(Key(i % 7000), std::string(60, 'v')).ok());
    if (i % 50 == 0) {
      Stats st = db->GetStats();
      max_running = std::max(max_running, st.merges_running);
      *max_created = std::max(*max_created, st.merges_running + st.merges_pending);
      EXPECT_EQ(st.merge_remaining_input_bytes.size(), st.merges_running);
    }
  }
  EXPECT_TRUE(db->WaitForIdle().ok());
  Stats st = db->GetStats();
  EXPECT_EQ(st.merges_running + st.merges_pending, 0u);
  EXPECT_GT(st.merges_completed, 10u);
  std::printf("%s: at most %llu running of %llu created\n", scheduler.c_str(),
              static_cast<unsigned long long>(max_running),
              static_cast<unsigned long long>(*max_created));
  return max_running;
}

TEST(SchedulerDBTest, SingleAndGreedyRunOneMergeAtATime) {
  uint64_t created;
  EXPECT_LE(MaxMergesRunning("single", &created), 1u);
  EXPECT_LE(MaxMergesRunning("greedy", &created), 1u);
  EXPECT_LE(MaxMergesRunning("greedy_k", &created), 2u);
}

TEST(SchedulerDBTest, FairRunsEveryCreatedMerge) {
  uint64_t created;
  uint64_t running = MaxMergesRunning("fair", &created);
  EXPECT_EQ(running, created) << "fair pauses nothing";
}

TEST(SchedulerDBTest, UnknownSchedulerIsInvalidArgument) {
  test::TempDir dir;
  Options options;
  options.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>("gredy");
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("single, fair, greedy"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lsm

namespace lsm {
namespace {

struct ConstraintRun {
  uint64_t max_over = 0;  // the most components seen above the bound in force
  Stats final;
};

// Writes into a throttled tree and samples how far the component count gets
// above the constraint in force.
ConstraintRun RunUnderConstraint(const std::string& constraint, const std::string& write_control) {
  test::TempDir dir;
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 32 * 1024;
  options.merge_policy = lsm::PolicyKind::kTiering;
  options.merge_scheduler = lsm::SchedulerKind::kGreedy;
  options.constraint = lsm::test::Named<lsm::ConstraintScope>(constraint);
  options.write_control = lsm::test::Named<lsm::WriteControl>(write_control);
  options.io_budget_bytes_per_sec = 2 << 20;
  auto db = OpenOrDie(options, dir.path());
  ConstraintRun run;
  for (int i = 0; i < 20000; i++) {
    EXPECT_TRUE(db->Put(Key(i % 5000), std::string(60, 'v')).ok());
    if (i % 40 == 0) {
      Stats st = db->GetStats();
      uint64_t count = st.disk_components;
      if (constraint == "local") {
        count = 0;
        for (uint64_t n : st.disk_components_per_level) count = std::max(count, n);
        EXPECT_EQ(st.max_components, 6u) << "2T for tiering with T = 3";
      }
      // The stats' own count is the one the constraint applies to.
      EXPECT_LE(count, st.constrained_components + 1) << "a flush may land between the reads";
      const uint64_t bound = st.max_components;
      if (count > bound) run.max_over = std::max(run.max_over, count - bound);
    }
  }
  EXPECT_TRUE(db->WaitForIdle().ok());
  run.final = db->GetStats();
  return run;
}

TEST(ConstraintTest, CountNeverExceedsTheBoundByMoreThanTheMemoryComponents) {
  for (const char* constraint : {"global", "local"}) {
    ConstraintRun run = RunUnderConstraint(constraint, "stop");
    EXPECT_LE(run.max_over, 2u) << constraint;
    EXPECT_EQ(run.final.slowdowns, 0u) << "stop never slows writes down";
    std::printf("%s: at most %llu over the bound; %llu merge stalls\n", constraint,
                static_cast<unsigned long long>(run.max_over),
                static_cast<unsigned long long>(run.final.merge_stalls));
  }
}

TEST(ConstraintTest, SlowdownDelaysWritesBeforeTheyStop) {
  ConstraintRun run = RunUnderConstraint("global", "slowdown");
  EXPECT_GT(run.final.slowdowns, 0u);
  EXPECT_GE(run.final.slowdown_micros, run.final.slowdowns * 1000);
  std::printf("slowdown: %llu writes delayed, %llu merge stalls\n",
              static_cast<unsigned long long>(run.final.slowdowns),
              static_cast<unsigned long long>(run.final.merge_stalls));
}

TEST(ConstraintTest, BadValuesAreInvalidArgumentListingTheChoices) {
  test::TempDir dir;
  std::unique_ptr<DB> db;
  Options options;
  options.constraint = lsm::test::Named<lsm::ConstraintScope>("regional");
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("global, local"), std::string::npos) << s.ToString();
  options = Options();
  options.write_control = lsm::test::Named<lsm::WriteControl>("brake");
  s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("stop, slowdown"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lsm

namespace lsm {
namespace {

// A small tiered tree under the idle scheduler; the threshold is far below
// any rate a writer loop reaches, so every merge is deferred while it writes.
Options IdleOptions(const std::string& mode) {
  Options options;
  options.wal = WalMode::kOff;
  options.memtable_bytes = 32 * 1024;
  options.merge_policy = lsm::PolicyKind::kTiering;
  options.merge_scheduler = lsm::SchedulerKind::kIdle;
  options.idle_mode = lsm::test::Named<lsm::IdleMode>(mode);
  options.idle_probe_ms = 500;
  options.idle_threshold_bytes_per_sec = 16 * 1024;
  options.idle_delay_ms = 300;
  return options;
}

TEST(IdleSchedulerDBTest, MergesWaitForTheWritesToStop) {
  for (const char* mode : {"rate", "after_burst"}) {
    test::TempDir dir;
    Options options = IdleOptions(mode);
    options.max_components = 100000;  // the constraint never forces a merge
    auto db = OpenOrDie(options, dir.path());
    uint64_t max_created = 0;
    for (int i = 0; i < 30000; i++) {
      ASSERT_TRUE(db->Put(Key(i % 7000), std::string(60, 'v')).ok());
      if (i % 50 == 0) {
        Stats st = db->GetStats();
        ASSERT_EQ(st.merges_running, 0u) << mode << " at write " << i;
        max_created = std::max(max_created, st.merges_pending);
      }
    }
    Stats st = db->GetStats();
    EXPECT_EQ(st.merges_completed, 0u) << mode;
    EXPECT_GT(st.flushes_completed, 10u) << mode << ": flushes always run";
    EXPECT_GT(max_created, 0u) << mode << ": merges were created, and deferred";
    // No more writes: the rate falls below the threshold (or the delay passes)
    // and the timer lets the merges run without any other event.
    ASSERT_TRUE(db->WaitForIdle().ok());
    st = db->GetStats();
    EXPECT_GT(st.merges_completed, 0u) << mode;
    EXPECT_EQ(st.merges_running + st.merges_pending, 0u) << mode;
    std::string value;
    for (int i = 0; i < 7000; i += 101) ASSERT_TRUE(db->Get(Key(i), &value).ok()) << Key(i);
    std::printf("idle %s: %llu merges deferred at most, %llu completed after the writes\n", mode,
                static_cast<unsigned long long>(max_created),
                static_cast<unsigned long long>(st.merges_completed));
  }
}

TEST(IdleSchedulerDBTest, TheConstraintForcesMergesSoWritersNeverDeadlock) {
  for (const char* mode : {"rate", "after_burst"}) {
    test::TempDir dir;
    Options options = IdleOptions(mode);
    options.max_components = 6;
    options.idle_delay_ms = 60 * 1000;  // deferral alone would outlast the test
    options.idle_probe_ms = 60 * 1000;
    auto db = OpenOrDie(options, dir.path());
    uint64_t max_over = 0;
    for (int i = 0; i < 20000; i++) {
      ASSERT_TRUE(db->Put(Key(i % 5000), std::string(60, 'v')).ok());
      if (i % 40 == 0) {
        Stats st = db->GetStats();
        if (st.disk_components > 6) max_over = std::max(max_over, st.disk_components - 6);
      }
    }
    Stats st = db->GetStats();
    EXPECT_GT(st.merges_completed, 0u) << mode << ": merges ran while the client wrote";
    EXPECT_LE(max_over, 2u) << mode;
    std::printf("idle %s under max_components=6: %llu merges, %llu merge stalls, %llu over\n",
                mode, static_cast<unsigned long long>(st.merges_completed),
                static_cast<unsigned long long>(st.merge_stalls),
                static_cast<unsigned long long>(max_over));
    std::string value;
    ASSERT_TRUE(db->Get(Key(4999), &value).ok());
  }
}

TEST(IdleSchedulerDBTest, BadIdleModeIsInvalidArgument) {
  test::TempDir dir;
  Options options = IdleOptions("sometimes");
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("idle_mode"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("rate, after_burst"), std::string::npos) << s.ToString();
}

// Holds every table file's creation until opened: the flush thread waits, the memtables fill up
// and the writer stalls for as long as the test wants.
class TableGateEnv final : public EnvWrapper {
 public:
  TableGateEnv() : EnvWrapper(Env::Default()) {}
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override {
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".sst") == 0) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return open_; });
    }
    return EnvWrapper::NewWritableFile(f, r);
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(DBTest, StatsCountAStallInProgressUpToNow) {
  // A snapshot taken during a stall sees it so far: a window that ends mid-stall gets the
  // part inside it, not nothing (nor, at the next snapshot, all of it).
  test::TempDir dir;
  TableGateEnv env;
  Options options;
  options.env = &env;
  options.memtable_bytes = 4 * 1024;
  options.memory_components = 2;
  auto db = OpenOrDie(options, dir.path());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 2000; i++) EXPECT_TRUE(db->Put(Key(i), std::string(100, 'v')).ok());
    done = true;
  });
  Stats st = db->GetStats();
  for (int i = 0; i < 2000 && st.memory_stalls == 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    st = db->GetStats();
  }
  ASSERT_EQ(st.memory_stalls, 1u) << "the writer stalls once the memtables are full";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Stats during = db->GetStats();
  EXPECT_FALSE(done.load()) << "the stall lasts until the gate opens";
  EXPECT_EQ(during.memory_stalls, 1u);
  EXPECT_GE(during.memory_stall_micros, st.memory_stall_micros + 50000)
      << "at least the 50 ms slept since the first look";
  env.Open();
  writer.join();
  ASSERT_TRUE(db->WaitForIdle().ok());
  const Stats after = db->GetStats();
  EXPECT_GE(after.memory_stall_micros, during.memory_stall_micros) << "never counted back";
}

}  // namespace
}  // namespace lsm
