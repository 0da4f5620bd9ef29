// Crash test: a child process writes with wal=sync and reports each write
// before issuing it and again once it is acknowledged; the parent kills it
// with SIGKILL at a random moment, reopens, and checks that every
// acknowledged write survived. The one write in flight at the kill may or
// may not have happened.
#include <map>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "db/test_util.h"
#include "lsm/db.h"

namespace lsm {
namespace {

constexpr const char* kDeleted = "<deleted>";

Options CrashOptions() {
  Options options;
  options.wal = WalMode::kSync;
  options.memtable_bytes = 16 * 1024;  // flushes and merges all the time
  options.merge_policy = lsm::PolicyKind::kTiering;
  return options;
}

[[noreturn]] void ChildWriter(const std::string& dir, int fd, uint64_t seed) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(CrashOptions(), dir, &db);
  if (!s.ok()) {
    dprintf(fd, "E %s\n", s.ToString().c_str());
    _exit(1);
  }
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0;; i++) {
    std::string key = "k" + std::to_string(rng() % 3000);
    bool del = rng() % 5 == 0;
    std::string value = "v" + std::to_string(i) + std::string(rng() % 300, 'x');
    dprintf(fd, "A %s %s\n", key.c_str(), del ? kDeleted : value.c_str());
    s = del ? db->Delete(key) : db->Put(key, value);
    if (!s.ok()) {
      dprintf(fd, "E %s\n", s.ToString().c_str());
      _exit(1);
    }
    dprintf(fd, "K\n");
  }
}

TEST(CrashTest, AcknowledgedWritesSurviveSigkill) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  std::map<std::string, std::string> acked;  // key -> value or kDeleted
  uint64_t total_acked = 0;
  for (int round = 0; round < 20; round++) {
    const uint64_t child_seed = rng();
    const std::string stream = test::RunChildAndKill(
        [&](int fd) { ChildWriter(dir.path(), fd, child_seed); },
        100 + static_cast<int>(rng() % 700));

    // Replay the child's report: attempts become acknowledged on "K".
    std::istringstream in(stream);
    std::string line, pending_key, pending_value;
    bool pending = false;
    uint64_t round_acked = 0;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a torn last line: the write was not acknowledged
      if (line.rfind("E ", 0) == 0) FAIL() << "child failed: " << line;
      if (line.rfind("A ", 0) == 0) {
        size_t sp = line.find(' ', 2);
        pending_key = line.substr(2, sp - 2);
        pending_value = line.substr(sp + 1);
        pending = true;
      } else if (line == "K" && pending) {
        acked[pending_key] = pending_value;
        pending = false;
        round_acked++;
      }
    }
    total_acked += round_acked;

    std::unique_ptr<DB> db;
    Status s = DB::Open(CrashOptions(), dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    std::string value;
    for (const auto& [key, expected] : acked) {
      s = db->Get(key, &value);
      std::string got = s.ok() ? value : (s.IsNotFound() ? kDeleted : s.ToString());
      if (pending && key == pending_key && got == pending_value) continue;
      ASSERT_EQ(got, expected) << "round " << round << " key " << key;
    }
    // The in-flight write, if it made it, is now part of the state.
    if (pending) {
      s = db->Get(pending_key, &value);
      std::string got = s.ok() ? value : kDeleted;
      if (got == pending_value) acked[pending_key] = pending_value;
    }
    Stats st = db->GetStats();
    std::printf("round %d: %llu acked, %llu disk components\n", round,
                static_cast<unsigned long long>(round_acked),
                static_cast<unsigned long long>(st.disk_components));
  }
  EXPECT_GT(total_acked, 200u) << "the child barely wrote: the test proved little";
}

}  // namespace
}  // namespace lsm
