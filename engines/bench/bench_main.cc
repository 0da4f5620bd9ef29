// lsm-bench: random fill then random point reads, against the bundled engine
// and LevelDB in one process run, with matched settings. See
// engines/BENCHMARKS.md for how to run it and what it measures.
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_engine.h"
#ifdef LSM_BENCH_HAVE_LSM
#include "lsm/option_table.h"
#include "lsm/options.h"
#endif

namespace lsmbench {
namespace {

struct Flags {
  uint64_t num = 1000000;
  uint64_t reads = 0;  // 0: as many as num
  size_t key_size = 16;
  size_t value_size = 100;
  BenchConfig engines_config;  // memtable_bytes, bloom bits, checksums, the lsm options
  std::string dir;  // empty: a fresh directory under /tmp, removed at the end
  bool keep = false;
  std::vector<std::string> engines = {"lsm", "leveldb"};
  uint64_t seed = 301;
};

const char kUsage[] =
    "usage: lsm-bench [--flag=value ...]\n"
    "  --num=N               keys to fill (default 1000000)\n"
    "  --reads=N             random point reads after the fill (default: num)\n"
    "  --key_size=B          key bytes, zero-padded decimal (default 16)\n"
    "  --value_size=B        value bytes (default 100)\n"
    "  --memtable_bytes=B    memtable size of both engines; K/M/G suffixes (default 4M,\n"
    "                        LevelDB's default write buffer)\n"
    "  --bloom_bits=N        Bloom filter bits per key, both engines (default 10)\n"
    "  --verify_checksums=0|1  verify block checksums on reads, both engines (default 1)\n"
    "  --[lsm_]OPTION=VALUE  any other option of the bundled engine (lsm-driver\n"
    "                        --describe-options builtin), checked by its option table, e.g.\n"
    "                        --merge_policy=partitioned --partition_bytes=64K --lsm_wal=async;\n"
    "                        the engine's defaults, except merge_policy=leveling and wal=off\n"
    "  --engines=LIST        comma-separated subset of lsm,leveldb (default lsm,leveldb)\n"
    "  --dir=DIR             where the databases go (DIR/<engine>, must not exist);\n"
    "                        default a fresh directory under /tmp\n"
    "  --keep=0|1            keep the databases at the end (default 0)\n"
    "  --seed=N              seed of the fill order and values; reads use seed+1 (default 301)\n";

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "lsm-bench: %s\n", msg.c_str());
  std::exit(2);
}

uint64_t ParseUint(const std::string& name, const std::string& v, bool size_suffix) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || errno != 0 || end == v.c_str()) {
    Die("--" + name + ": not a number: " + v);
  }
  uint64_t mult = 1;
  if (size_suffix && *end != '\0' && end[1] == '\0') {
    switch (*end) {
      case 'K': case 'k': mult = 1ull << 10; end++; break;
      case 'M': case 'm': mult = 1ull << 20; end++; break;
      case 'G': case 'g': mult = 1ull << 30; end++; break;
      default: break;
    }
  }
  if (*end != '\0') Die("--" + name + ": not a number: " + v);
  return static_cast<uint64_t>(x) * mult;
}

bool ParseBool(const std::string& name, const std::string& v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  Die("--" + name + ": expected 0 or 1: " + v);
}

#ifdef LSM_BENCH_HAVE_LSM
// --[lsm_]NAME=V for an option of the bundled engine: kept as text for its table; false when
// NAME is none of its options.
bool SetLsmOption(const std::string& flag, const std::string& v, BenchConfig* config) {
  const std::string name = flag.rfind("lsm_", 0) == 0 ? flag.substr(4) : flag;
  if (lsm::FindOption(name) == nullptr) return false;
  config->lsm_options[name] = v;
  return true;
}

// The bundled engine's options as it will take them: a bad value exits here, with the
// table's message (the option, what it allows), before anything is written.
void CheckLsmOptions(const BenchConfig& config) {
  lsm::Options o;
  o.memtable_bytes = config.memtable_bytes;
  o.bloom_bits_per_key = config.bloom_bits_per_key;
  o.verify_checksums = config.verify_checksums;
  const lsm::Status s = lsm::SetOptions(&o, config.lsm_options);
  if (!s.ok()) Die(s.ToString());
}
#else
bool SetLsmOption(const std::string&, const std::string&, BenchConfig*) { return false; }
void CheckLsmOptions(const BenchConfig&) {}
#endif

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    size_t eq = arg.find('=');
    if (arg.compare(0, 2, "--") != 0 || eq == std::string::npos) {
      Die("bad argument (expected --flag=value): " + arg + "\n" + kUsage);
    }
    std::string name = arg.substr(2, eq - 2), v = arg.substr(eq + 1);
    if (name == "num") {
      f.num = ParseUint(name, v, false);
    } else if (name == "reads") {
      f.reads = ParseUint(name, v, false);
    } else if (name == "key_size") {
      f.key_size = ParseUint(name, v, false);
    } else if (name == "value_size") {
      f.value_size = ParseUint(name, v, false);
    } else if (name == "memtable_bytes") {
      f.engines_config.memtable_bytes = ParseUint(name, v, true);
    } else if (name == "bloom_bits") {
      f.engines_config.bloom_bits_per_key = static_cast<int>(ParseUint(name, v, false));
    } else if (name == "verify_checksums") {
      f.engines_config.verify_checksums = ParseBool(name, v);
    } else if (name == "engines") {
      f.engines.clear();
      std::stringstream ss(v);
      std::string e;
      while (std::getline(ss, e, ',')) {
        if (e != "lsm" && e != "leveldb") Die("--engines: unknown engine: " + e);
        if (std::find(f.engines.begin(), f.engines.end(), e) == f.engines.end()) {
          f.engines.push_back(e);
        }
      }
      if (f.engines.empty()) Die("--engines: empty");
    } else if (name == "dir") {
      f.dir = v;
    } else if (name == "keep") {
      f.keep = ParseBool(name, v);
    } else if (name == "seed") {
      f.seed = ParseUint(name, v, false);
    } else if (!SetLsmOption(name, v, &f.engines_config)) {
      Die("unknown flag --" + name + "\n" + kUsage);
    }
  }
  CheckLsmOptions(f.engines_config);
  if (f.num == 0) Die("--num must be positive");
  if (f.reads == 0) f.reads = f.num;
  if (f.key_size == 0 || f.key_size > 4096) Die("--key_size must be in [1, 4096]");
  if (f.value_size > (64u << 20)) Die("--value_size must be at most 64 MiB");
  const size_t digits = std::to_string(f.num - 1).size();
  if (digits > f.key_size) {
    Die("--key_size=" + std::to_string(f.key_size) + " cannot hold " + std::to_string(f.num) +
        " distinct decimal keys");
  }
  return f;
}

// Key i is i in decimal, zero-padded to key_size bytes, so the byte order of
// keys is their numeric order.
class KeyFormatter {
 public:
  explicit KeyFormatter(size_t key_size) : buf_(key_size, '0') {}
  std::string_view Key(uint64_t i) {
    char* p = buf_.data() + buf_.size();
    char* const begin = buf_.data();
    do {
      *--p = static_cast<char>('0' + i % 10);
      i /= 10;
    } while (i != 0);
    std::fill(begin, p, '0');
    return buf_;
  }

 private:
  std::string buf_;
};

// Values are slices of one random buffer at a position derived from the key
// index, so a read can check it got the right bytes without storing them.
class ValueSource {
 public:
  ValueSource(size_t value_size, uint64_t seed) : value_size_(value_size) {
    std::mt19937_64 rng(seed);
    data_.resize(std::max<size_t>(1 << 20, 2 * value_size));
    for (char& c : data_) c = static_cast<char>(rng() & 0xff);
  }
  std::string_view Value(uint64_t i) const {
    uint64_t pos = (i * 0x9E3779B97F4A7C15ull >> 20) % (data_.size() - value_size_ + 1);
    return std::string_view(data_).substr(pos, value_size_);
  }

 private:
  size_t value_size_;
  std::string data_;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct PhaseResult {
  std::string phase;
  uint64_t ops = 0;
  double secs = 0;
};

struct EngineResult {
  std::string engine;
  std::vector<PhaseResult> phases;
  const PhaseResult* Find(const std::string& phase) const {
    for (const auto& p : phases) {
      if (p.phase == phase) return &p;
    }
    return nullptr;
  }
};

void PrintPhase(const std::string& engine, const PhaseResult& p) {
  std::printf("%-8s %-18s %10" PRIu64 " %9.3f %11.0f %10.3f\n", engine.c_str(), p.phase.c_str(),
              p.ops, p.secs, p.ops / p.secs, p.secs * 1e6 / p.ops);
  std::fflush(stdout);
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) total += it->file_size(ec2);
  }
  return total;
}

void CheckOk(const lsm::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

// Fills engine with every key in `order`, then reads `reads` random keys.
// Returns false if any read missed or returned a wrong value.
bool RunEngine(BenchEngine* engine, const Flags& flags, const std::vector<uint64_t>& order,
               const ValueSource& values, const std::string& dir, EngineResult* result) {
  result->engine = engine->name();
  CheckOk(engine->Open(dir), std::string(engine->name()) + ": open " + dir);
  KeyFormatter keys(flags.key_size);

  auto start = std::chrono::steady_clock::now();
  for (uint64_t i : order) {
    lsm::Status s = engine->Put(keys.Key(i), values.Value(i));
    if (!s.ok()) CheckOk(s, std::string(engine->name()) + ": put");
  }
  result->phases.push_back({"fillrandom", order.size(), Seconds(start)});
  PrintPhase(result->engine, result->phases.back());
  lsm::Status idle;
  if (engine->WaitForIdle(&idle)) {
    CheckOk(idle, std::string(engine->name()) + ": WaitForIdle");
    result->phases.push_back({"fill+WaitForIdle", order.size(), Seconds(start)});
    PrintPhase(result->engine, result->phases.back());
  }
  const std::string stats = engine->StatsLine();
  const uint64_t dir_bytes = DirBytes(dir);

  std::mt19937_64 rng(flags.seed + 1);
  uint64_t misses = 0, wrong = 0;
  std::string value;
  start = std::chrono::steady_clock::now();
  for (uint64_t j = 0; j < flags.reads; j++) {
    const uint64_t i = rng() % flags.num;
    lsm::Status s = engine->Get(keys.Key(i), &value);
    if (s.IsNotFound()) {
      misses++;
    } else if (!s.ok()) {
      CheckOk(s, std::string(engine->name()) + ": get");
    } else if (value != values.Value(i)) {
      wrong++;
    }
  }
  result->phases.push_back({"readrandom", flags.reads, Seconds(start)});
  PrintPhase(result->engine, result->phases.back());
  std::printf("%-8s after fill: %s dir_bytes=%" PRIu64 "\n", engine->name(), stats.c_str(),
              dir_bytes);
  CheckOk(engine->Close(), std::string(engine->name()) + ": close");

  if (misses != 0 || wrong != 0) {
    std::printf("%-8s FAILED: %" PRIu64 " of %" PRIu64 " reads missed their key, %" PRIu64
                " returned a wrong value\n",
                engine->name(), misses, flags.reads, wrong);
    return false;
  }
  return true;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string Kernel() {
  struct utsname u;
  if (::uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const BenchConfig& config = flags.engines_config;

  // Resolve the engines first so that a missing one is reported up front.
  std::vector<std::unique_ptr<BenchEngine>> engines;
  for (const std::string& name : flags.engines) {
    if (name == "lsm") {
#ifdef LSM_BENCH_HAVE_LSM
      engines.push_back(NewLsmBenchEngine(config));
#else
      std::printf(
          "lsm      SKIPPED: lsm-bench was configured without the `lsm` target\n");
#endif
    } else if (name == "leveldb") {
#ifdef LSM_BENCH_HAVE_LEVELDB
      engines.push_back(NewLevelDbBenchEngine(config));
#else
      std::printf(
          "leveldb  SKIPPED: LevelDB was not found when lsm-bench was configured\n"
          "         (install libleveldb-dev and re-run cmake)\n");
#endif
    }
  }
  if (engines.empty()) {
    std::fprintf(stderr, "lsm-bench: no engine to run\n");
    return 1;
  }

  std::string base = flags.dir;
  const bool own_base = base.empty();
  if (own_base) {
    char tmpl[] = "/tmp/lsm-bench.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) Die(std::string("mkdtemp: ") + std::strerror(errno));
    base = tmpl;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(base, ec);
    if (ec) Die("create " + base + ": " + ec.message());
  }

  std::printf("lsm-bench: fillrandom then readrandom, one thread\n");
  std::printf("  machine: %u CPUs, %s, %s\n", std::thread::hardware_concurrency(),
              CpuModel().c_str(), Kernel().c_str());
  std::printf("  keys: %" PRIu64 " x %zu B (random order, seed %" PRIu64 "), values: %zu B\n",
              flags.num, flags.key_size, flags.seed, flags.value_size);
  std::printf("  reads: %" PRIu64 " uniformly random existing keys (seed %" PRIu64 ")\n",
              flags.reads, flags.seed + 1);
  const char* cleanup = flags.keep ? "kept"
                        : own_base ? "removed at the end"
                                   : "engine subdirectories removed at the end";
  std::printf("  dir: %s (%s)\n", base.c_str(), cleanup);
  for (const auto& e : engines) std::printf("  %-8s %s\n", e->name(), e->Describe().c_str());
  std::printf("\n%-8s %-18s %10s %9s %11s %10s\n", "engine", "phase", "ops", "seconds", "ops/s",
              "micros/op");
  std::fflush(stdout);

  // The fill order: a permutation of [0, num).
  std::vector<uint64_t> order(flags.num);
  for (uint64_t i = 0; i < flags.num; i++) order[i] = i;
  std::mt19937_64 rng(flags.seed);
  std::shuffle(order.begin(), order.end(), rng);
  const ValueSource values(flags.value_size, flags.seed);

  bool all_ok = true;
  std::vector<EngineResult> results;
  for (const auto& e : engines) {
    const std::string dir = base + "/" + e->name();
    if (std::filesystem::exists(dir)) Die(dir + " already exists");
    EngineResult r;
    all_ok &= RunEngine(e.get(), flags, order, values, dir, &r);
    results.push_back(r);
    if (!flags.keep) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }
  if (own_base && !flags.keep) {
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
  }

  if (results.size() == 2) {
    std::printf("\nratio %s/%s (ops/s; above 1 means %s is faster):", results[0].engine.c_str(),
                results[1].engine.c_str(), results[0].engine.c_str());
    for (const char* phase : {"fillrandom", "readrandom"}) {
      const PhaseResult* a = results[0].Find(phase);
      const PhaseResult* b = results[1].Find(phase);
      if (a && b) std::printf(" %s %.2fx", phase, (a->ops / a->secs) / (b->ops / b->secs));
    }
    std::printf("\n");
  }
  std::printf(
      "note: LevelDB cannot turn its write-ahead log off; it runs with the log on and\n"
      "      WriteOptions.sync=false (each Put hands the log record to the OS, no fsync).\n"
      "      The bundled engine runs with --lsm_wal (default off). LevelDB's fill time excludes its\n"
      "      background compactions still running when the last Put returns.\n");
  if (!all_ok) {
    std::fprintf(stderr, "lsm-bench: FAILED: reads missed keys (see above)\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lsmbench

int main(int argc, char** argv) { return lsmbench::Main(argc, argv); }
