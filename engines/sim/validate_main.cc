// lsm-sim-validate: the engine-vs-simulator table of README.md. For each
// policy and k it runs the engine (engine_replay.h), then lsm-sim's code on
// the flush sizes the engine produced, and prints one row:
//   policy,k,update_fraction,flushes,engine_write_amp,sim_write_amp,
//   write_amp_diff_pct,engine_avg_sstables,sim_avg_sstables,avg_sstables_diff,agree
// --series PATH adds both sides over time (Mao et al.'s Fig. 6), as CSV:
//   policy,k,update_fraction,flushes,engine_write_amp,sim_write_amp,
//   engine_sstables,sim_sstables
// --update-fractions 0,0.7 runs each policy and k once per fraction: that
// fraction of the writes update existing keys (zipfian, the newest hottest:
// Mao et al.'s Sec. V-E, Fig. 4). The simulator models no updates, so with
// updates its figures are the bound the engine stays under, and the row does
// not "agree".
// Exit 0 when every row agrees (|WA diff| <= 5 %, |avg diff| <= 0.2), 3 when
// one does not, 1 on an error, 2 on bad flags.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "lsm/option_table.h"
#include "sim/cli.h"
#include "sim/engine_replay.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

const char kUsage[] =
    "usage: lsm-sim-validate [--policies bigtable,exploring,constant,minlatency,binomial]\n"
    "         [--ks 4,6,8] [--flushes 2000] [--value-bytes 1000] [--OPTION VALUE ...]\n"
    "         [--dir DIR] [--sizes-dir DIR] [--format csv|markdown]\n"
    "         [--series PATH [--series-every N]] [--update-fractions 0,0.7]\n"
    "         [--update-theta 0.99]\n"
    "Runs the engine (insert-only, one flush at a time, merges completed before the next\n"
    "write) and the simulator on the engine's flush sizes; prints one row per policy x k.\n"
    "--OPTION VALUE: any engine option by its name ('-' may stand for '_'; lsm-driver\n"
    "--describe-options builtin), for the engine and the simulator alike; the engine's\n"
    "defaults, except memtable_bytes 64K (2,000 flushes in seconds). The policy and k are\n"
    "--policies and --ks.\n"
    "--sizes-dir keeps each run's flush sizes as POLICY-kK.txt (input of lsm-sim --flush-file).\n"
    "--series writes both sides' write amplification and SSTable count after every N-th\n"
    "flush and the last (default N: flushes / 100) as CSV: policy,k,update_fraction,\n"
    "flushes,engine_write_amp,sim_write_amp,engine_sstables,sim_sstables.\n"
    "--update-fractions (each in [0, 1), default 0): a run per fraction, in which that\n"
    "fraction of the writes update an existing key, zipfian (--update-theta, in (0, 1))\n"
    "back from the newest insert (Mao et al.'s Fig. 4); lsm-sim models no updates, so\n"
    "its figures are then an upper bound.\n";

bool ParseCount(const std::string& value, uint64_t* out) {
  char* end = nullptr;
  *out = std::strtoull(value.c_str(), &end, 10);
  return !value.empty() && *end == '\0' && *out >= 1 && value[0] != '-';
}

bool ParseFraction(const std::string& value, double* out) {
  char* end = nullptr;
  *out = std::strtod(value.c_str(), &end);
  return !value.empty() && *end == '\0' && std::isfinite(*out);
}

int Fail(const std::string& message) {
  std::cerr << "lsm-sim-validate: " << message << "\n(see --help)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> policies = {"bigtable", "exploring", "constant", "minlatency",
                                       "binomial"};
  std::vector<int> ks = {4, 6, 8};
  std::vector<double> fractions = {0};
  lsm::sim::ReplayOptions base;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/lsm-sim-validate." +
                    std::to_string(getpid());
  std::string sizes_dir, series_path, format = "csv";
  uint64_t series_every = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) return Fail(flag + " needs a value");
    const std::string value = argv[++i];
    lsm::Status s;
    if (flag == "--policies") {
      policies = Split(value);
    } else if (flag == "--ks") {
      ks.clear();
      for (const std::string& k : Split(value)) {
        char* end = nullptr;
        const long v = std::strtol(k.c_str(), &end, 10);
        if (k.empty() || *end != '\0' || v < 1 || v > 1000) {
          return Fail("--ks '" + value + "': expected integers in [1, 1000] such as 4,6,8");
        }
        ks.push_back(static_cast<int>(v));
      }
    } else if (flag == "--flushes") {
      if (!ParseCount(value, &base.flushes)) {
        return Fail("--flushes '" + value + "': expected an integer >= 1");
      }
    } else if (flag == "--series") {
      series_path = value;
    } else if (flag == "--series-every") {
      if (!ParseCount(value, &series_every)) {
        return Fail("--series-every '" + value + "': expected an integer >= 1");
      }
    } else if (flag == "--update-fractions") {
      fractions.clear();
      for (const std::string& f : Split(value)) {
        double v = 0;
        if (!ParseFraction(f, &v) || v < 0 || v >= 1) {
          return Fail("--update-fractions '" + value + "': expected numbers in [0, 1) such "
                      "as 0,0.7");
        }
        fractions.push_back(v);
      }
      if (fractions.empty()) return Fail("--update-fractions: give at least one");
    } else if (flag == "--update-theta") {
      if (!ParseFraction(value, &base.update_theta) || base.update_theta <= 0 ||
          base.update_theta >= 1) {
        return Fail("--update-theta '" + value + "': expected a number in (0, 1)");
      }
    } else if (const std::string option = lsm::sim::EngineOptionOf(flag); !option.empty()) {
      if (option == "merge_policy" || option == "sstable_bound") {
        return Fail(flag + ": the policies and k are --policies and --ks");
      }
      s = lsm::SetOption(&base.engine, option, value);
    } else if (flag == "--value-bytes") {
      s = lsm::sim::ParseBytes(flag, value, &base.value_bytes);
    } else if (flag == "--dir") {
      dir = value;
    } else if (flag == "--sizes-dir") {
      sizes_dir = value;
    } else if (flag == "--format") {
      if (value != "csv" && value != "markdown") return Fail("--format: expected csv or markdown");
      format = value;
    } else {
      return Fail("unknown flag " + flag);
    }
    if (!s.ok()) return Fail(s.ToString());
  }
  if (series_every > 0 && series_path.empty()) return Fail("--series-every needs --series");
  if (const lsm::Status s = lsm::CheckOptions(base.engine); !s.ok()) return Fail(s.ToString());
  std::ofstream series;
  if (!series_path.empty()) {
    base.series_every = series_every > 0 ? series_every : std::max<uint64_t>(1, base.flushes / 100);
    series.open(series_path);
    if (!series) {
      std::cerr << "lsm-sim-validate: cannot write " << series_path << "\n";
      return 1;
    }
    series << "policy,k,update_fraction,flushes,engine_write_amp,sim_write_amp,"
              "engine_sstables,sim_sstables\n";
  }
  const bool md = format == "markdown";
  std::cout << (md ? "| policy | k | updates | flushes | engine WA | sim WA | WA diff % | "
                     "engine avg SSTables | sim avg SSTables | avg diff | agree |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|\n"
                   : "policy,k,update_fraction,flushes,engine_write_amp,sim_write_amp,"
                     "write_amp_diff_pct,engine_avg_sstables,sim_avg_sstables,"
                     "avg_sstables_diff,agree\n");
  bool all_agree = true;
  int run = 0;
  for (double fraction : fractions) {
    for (const std::string& policy : policies) {
      for (int k : ks) {
        lsm::sim::ReplayOptions o = base;
        o.policy = policy;
        o.k = k;
        o.update_fraction = fraction;
        o.dir = dir + "-" + std::to_string(run++);
        char updates[32];
        std::snprintf(updates, sizeof(updates), "%g", fraction);
        lsm::sim::ReplayResult r;
        lsm::Status s = lsm::sim::RunReplay(o, &r);
        if (!s.ok()) {
          std::cerr << "lsm-sim-validate: " << policy << " k=" << k << " updates " << updates
                    << ": " << s.ToString() << "\n";
          return 1;
        }
        if (!sizes_dir.empty()) {
          const std::string path = sizes_dir + "/" + policy + "-k" + std::to_string(k) +
                                   (fraction > 0 ? std::string("-u") + updates : "") + ".txt";
          std::ofstream out(path);
          for (uint64_t b : r.flush_sizes) out << b << "\n";
          if (!out) {
            std::cerr << "lsm-sim-validate: cannot write " << path << "\n";
            return 1;
          }
        }
        for (const lsm::sim::SeriesPoint& p : r.series) {
          char line[256];
          std::snprintf(line, sizeof(line), "%s,%d,%s,%llu,%.4f,%.4f,%llu,%llu\n",
                        policy.c_str(), k, updates, static_cast<unsigned long long>(p.flushes),
                        p.engine_write_amp, p.sim_write_amp,
                        static_cast<unsigned long long>(p.engine_sstables),
                        static_cast<unsigned long long>(p.sim_sstables));
          series << line;
        }
        if (series.is_open() && !series.flush()) {
          std::cerr << "lsm-sim-validate: cannot write " << series_path << "\n";
          return 1;
        }
        const bool agree =
            std::fabs(r.WriteAmpDiffPercent()) <= lsm::sim::kMaxWriteAmpDiffPercent &&
            std::fabs(r.AvgDiff()) <= lsm::sim::kMaxAvgSstablesDiff;
        all_agree = all_agree && agree;
        char row[512];
        std::snprintf(
            row, sizeof(row),
            md ? "| %s | %d | %s | %zu | %.3f | %.3f | %+.2f | %.3f | %.3f | %+.3f | %s |\n"
               : "%s,%d,%s,%zu,%.4f,%.4f,%.3f,%.4f,%.4f,%.4f,%s\n",
            policy.c_str(), k, updates, r.flush_sizes.size(), r.engine_write_amp,
            r.sim_write_amp, r.WriteAmpDiffPercent(), r.engine_avg_sstables, r.sim_avg_sstables,
            r.AvgDiff(), agree ? "yes" : "no");
        std::cout << row << std::flush;
      }
    }
  }
  return all_agree ? 0 : 3;
}
