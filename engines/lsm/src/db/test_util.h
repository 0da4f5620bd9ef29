// Helpers shared by the DB tests.
#ifndef LSM_SRC_DB_TEST_UTIL_H_
#define LSM_SRC_DB_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "db/filenames.h"
#include "db/version.h"
#include "env/fault_env.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace lsm::test {

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/lsm-test-XXXXXX";
    path_ = mkdtemp(templ.data()) != nullptr ? templ : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A soak's length: $name as a number if set, else fallback.
inline uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

// A seed for randomized tests: $LSM_TEST_SEED if set, else random; always
// printed so a failure can be replayed.
inline uint64_t TestSeed() {
  const char* env = std::getenv("LSM_TEST_SEED");
  uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::printf("seed: %llu (replay with LSM_TEST_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

// A key of the model tests: varied lengths and a shared prefix exercise
// prefix compression.
inline std::string RandomKey(std::mt19937_64& rng, int key_space) {
  uint64_t k = rng() % key_space;
  std::string key = "key" + std::to_string(k);
  if (k % 7 == 0) key.push_back('\0');
  if (k % 11 == 0) key += std::string(k % 50, '\xff');
  return key;
}

// A value of the model tests: mostly short, now and then larger than a block.
inline std::string RandomValue(std::mt19937_64& rng) {
  size_t len = rng() % 200;
  if (rng() % 100 == 0) len = 4000 + rng() % 20000;
  std::string v(len, '\0');
  for (auto& c : v) c = static_cast<char>('a' + rng() % 26);
  return v;
}

// A test name for a policy and a scheduler ("size-tiered", "greedy_k" ->
// "size_tiered_greedy_k"): gtest takes no '-'.
inline std::string PolicySchedulerName(const std::string& policy, const std::string& scheduler) {
  std::string name = policy + "_" + scheduler;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// Every policy x scheduler, by name: the cases of the soaks.
inline std::vector<std::pair<std::string, std::string>> PolicySchedulerPairs() {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& policy : policy::PolicyNames()) {
    for (const std::string& scheduler : sched::SchedulerNames()) {
      pairs.emplace_back(policy, scheduler);
    }
  }
  return pairs;
}

// A component's description as the manifest records it (sizes made up).
inline ComponentMeta MakeMeta(uint64_t number, int level, std::string smallest,
                              std::string largest) {
  ComponentMeta c;
  c.number = number;
  c.level = level;
  c.file_size = 100 * number;
  c.entries = number;
  c.smallest = std::move(smallest);
  c.largest = std::move(largest);
  return c;
}

// The kind of a database file, for FaultEnv.
inline FaultFile DbFileKind(const std::string& path) {
  uint64_t number;
  switch (ParseFileName(path.substr(path.rfind('/') + 1), &number)) {
    case FileType::kWal: return FaultFile::kWal;
    case FileType::kTable: return FaultFile::kTable;
    case FileType::kManifest: return FaultFile::kManifest;
    // CURRENT is written as a temp file, then renamed over: the engine
    // writes no other temp file.
    case FileType::kCurrent:
    case FileType::kTemp: return FaultFile::kCurrent;
    default: return FaultFile::kOther;
  }
}

// Crash tests: forks a child that runs child(fd) (it reports on fd and never
// returns), reads what it writes for `millis` ms, then SIGKILLs it and
// returns everything it wrote ("E fork" / "E pipe" when it could not start).
inline std::string RunChildAndKill(const std::function<void(int fd)>& child, int millis) {
  int fds[2];
  if (pipe(fds) != 0) return "E pipe\n";
  const pid_t pid = fork();
  if (pid < 0) return "E fork\n";
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  // Read while the child runs so it never blocks on a full pipe.
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::string stream;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      stream.append(buf, static_cast<size_t>(n));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  fcntl(fds[0], F_SETFL, 0);
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) stream.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return stream;
}

}  // namespace lsm::test

#endif  // LSM_SRC_DB_TEST_UTIL_H_
