// lsm-sim's command line: parsing, the flush-size sources and the output
// rows. The command line is a contract (issue 6):
//   lsm-sim --policy NAME --k K --flushes N [--flush-bytes B]
//           [--checkpoints 1000,3000,...] [--format csv|jsonl] ...
//   lsm-sim --memtable-entries K,V [--memtable_bytes B]   (one JSON object)
// CSV columns policy,k,flushes,write_amp,avg_sstables,sstables (plus
// time_s,stall_s,max_sstables in the timed model), one row per checkpoint
// and one for the end.
#ifndef LSM_SIM_CLI_H_
#define LSM_SIM_CLI_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "lsm/status.h"
#include "sim/simulator.h"

namespace lsm::sim {

struct CliOptions {
  SimOptions sim;
  uint64_t flushes = 0;              // N; 0 with --flush-file: every size in it
  uint64_t flush_bytes = 1 << 20;    // B, the mean with --flush-jitter
  double flush_jitter = 0;           // sizes uniform in B * [1 - j, 1 + j]
  uint64_t seed = 1;
  std::string flush_file;            // one size per line, used in order
  std::vector<uint64_t> checkpoints;  // ascending, each <= N
  std::string format = "csv";        // csv | jsonl
  std::string decisions_path;        // every merge as JSONL; "" = none
  uint64_t load_flushes = 0;         // flushes of --flush-bytes building the tree first
  // --memtable-entries K,V: only print how many writes of a K-byte key and a V-byte value
  // fill one memtable of the engine's memtable_bytes (lsm/memtable_capacity.h).
  bool memtable_entries = false;
  uint64_t key_bytes = 0;
  uint64_t value_bytes = 0;
};

std::string Usage();

// InvalidArgument naming the flag and what it allows. *help is set for
// --help (nothing else is then checked).
Status ParseArgs(const std::vector<std::string>& args, CliOptions* options, bool* help);

// Sizes from a file: one positive integer per line (a K/M/G suffix allowed),
// blank lines and lines starting with '#' skipped.
Status ReadFlushSizes(const std::string& path, std::vector<uint64_t>* sizes);

// The engine option a flag names: --policy, --k and --scheduler are the
// command line's short names; otherwise the option's own name, with '-'
// allowed for '_'. "" when the flag names no engine option.
std::string EngineOptionOf(const std::string& flag);

// A size such as 4096, 64K, 4M or 1G (binary multiples).
Status ParseBytes(const std::string& flag, const std::string& text, uint64_t* bytes);

std::string CsvHeader(bool timed);
std::string FormatRow(const CliOptions& options, const Checkpoint& c, bool timed);

// Runs the simulation and writes the rows to `out`; returns the exit code
// (0, or 1 with a message on `err`).
int RunSimulation(const CliOptions& options, std::ostream& out, std::ostream& err);

}  // namespace lsm::sim

#endif  // LSM_SIM_CLI_H_
