#include "sim/cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "lsm/memtable_capacity.h"
#include "lsm/option_table.h"
#include "lsm/option_values.h"
#include "policy/policy.h"

namespace lsm::sim {

namespace {

Status Bad(const std::string& flag, const std::string& value, const std::string& allowed) {
  return Status::InvalidArgument(flag + " '" + value + "'", "expected " + allowed);
}

Status ParseUint(const std::string& flag, const std::string& text, uint64_t low, uint64_t high,
                 uint64_t* value) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || v < low || v > high) {
    return Bad(flag, text,
               "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  *value = v;
  return Status::OK();
}

Status ParseDouble(const std::string& flag, const std::string& text, double* value) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v)) {
    return Bad(flag, text, "a number");
  }
  *value = v;
  return Status::OK();
}

std::string Fixed(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", v);
  return buf;
}

}  // namespace

std::string Usage() {
  std::string names;
  for (const std::string& n : policy::PolicyNames()) names += (names.empty() ? "" : "|") + n;
  return "usage: lsm-sim --policy NAME --k K --flushes N [options]\n"
         "Runs a merge policy of the bundled engine (the same code) over N flushes.\n"
         "  --policy NAME          " + names + "\n"
         "  --k K                  SSTable bound of the bounded-depth policies (default 6)\n"
         "  --flushes N            number of flushes (default with --flush-file: all sizes)\n"
         "  --flush-bytes B        flush size, e.g. 4096, 64K, 4M (default 1M)\n"
         "  --flush-jitter J       sizes uniform in B*[1-J, 1+J], J in [0, 1) (default 0)\n"
         "  --seed S               seed of the jitter (default 1)\n"
         "  --flush-file PATH      flush sizes, one per line, instead of B\n"
         "  --checkpoints LIST     rows after these flushes, e.g. 1000,3000 (always the end)\n"
         "  --format csv|jsonl     output format (default csv)\n"
         "  --obsolete F           fraction of each merge's input dropped, in [0, 1)\n"
         "  --key-space BYTES      the unique data every write after the load updates\n"
         "                         (uniform keys: merges keep one entry per key);\n"
         "                         not with --obsolete\n"
         "  --OPTION VALUE         any engine option by its name (lsm-driver\n"
         "                         --describe-options; '-' may stand for '_'), e.g.\n"
         "                         --exploring_ratio 1.2 --size_ratio 4 --memtable_bytes 4M\n"
         "                         (--policy is merge_policy, --k sstable_bound,\n"
         "                         --scheduler merge_scheduler)\n"
         "  --decisions PATH       write every merge as JSONL\n"
         "  --memtable-entries K,V only print (JSON) how many writes of a K-byte key and\n"
         "                         a V-byte value fill one memtable of --memtable_bytes\n"
         "                         (the engine's own memtable, filled as the DB fills it)\n"
         "  --load-flushes L       first build the tree with L flushes of --flush-bytes,\n"
         "                         merges done (instant); the run and its counters start\n"
         "                         from that tree (the loaded store of a testing phase)\n"
         "Timed model (default: merges are instant):\n"
         "  --bandwidth B          flush and merge bandwidth in bytes/s (a merge takes\n"
         "                         input/B s; a flush size/B s, before any merge)\n"
         "  --arrival-rate B       bytes/s into the memtable (a flush every size/B s)\n"
         "  --write-rate B         the writer's bytes/s while it has a backlog (>= the\n"
         "                         arrival rate; default: the arrival rate, no catch-up)\n"
         "  --flush-priority alternate|strict|shared  a flush takes half the bandwidth\n"
         "                         while merges run (default), all of it while they\n"
         "                         wait, or an even share with them\n"
         "  --flush-rate B, --merge-rate B   the most one flush / one merge writes per\n"
         "                         second whatever the bandwidth (CPU); default no cap\n"
         "  --flush-time on|none   none: flushes take no time and no memtable waits\n"
         "                         (the first model; default on, as in the engine)\n"
         "  --memory_components N  memtables in all (engine option, default 2): the\n"
         "                         writer waits when all are full (a memory stall)\n"
         "  --merge_scheduler, --greedy_k, --max_components   the scheduler (single, fair,\n"
         "                         greedy, greedy_k) and the constraint of the engine\n"
         "CSV columns: policy,k,flushes,write_amp,avg_sstables,sstables\n"
         "  (+ time_s,stall_s,max_sstables in the timed model)\n";
}

Status ParseBytes(const std::string& flag, const std::string& text, uint64_t* bytes) {
  // The engine's size grammar, with the command line's wording.
  if (ParseSize(flag, text, 1, uint64_t{1} << 62, bytes).ok()) return Status::OK();
  return Bad(flag, text, "a size >= 1 such as 4096, 64K, 4M or 1G");
}

std::string EngineOptionOf(const std::string& flag) {
  if (flag.rfind("--", 0) != 0) return "";
  if (flag == "--policy") return "merge_policy";
  if (flag == "--k") return "sstable_bound";
  if (flag == "--scheduler") return "merge_scheduler";
  std::string name = flag.substr(2);
  std::replace(name.begin(), name.end(), '-', '_');
  return FindOption(name) != nullptr ? name : "";
}

Status ParseArgs(const std::vector<std::string>& args, CliOptions* o, bool* help) {
  *help = false;
  bool have_policy = false, have_flushes = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    const size_t eq = flag.find('=');
    if (flag == "--help" || flag == "-h") {
      *help = true;
      return Status::OK();
    }
    if (flag.rfind("--", 0) != 0) return Bad("argument", flag, "a --flag (see --help)");
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else {
      if (i + 1 == args.size()) return Status::InvalidArgument(flag + " needs a value");
      value = args[++i];
    }
    Status s;
    TimeModel& t = o->sim.time;
    if (const std::string option = EngineOptionOf(flag); !option.empty()) {
      s = SetOption(&o->sim.engine, option, value);
      if (!s.ok()) s = Status::InvalidArgument(flag + ": " + ErrorMessage(s));
      have_policy = have_policy || option == "merge_policy";
    } else if (flag == "--flushes") {
      s = ParseUint(flag, value, 1, 1ull << 40, &o->flushes);
      have_flushes = true;
    } else if (flag == "--flush-bytes") {
      s = ParseBytes(flag, value, &o->flush_bytes);
    } else if (flag == "--flush-jitter") {
      s = ParseDouble(flag, value, &o->flush_jitter);
      if (s.ok() && !(o->flush_jitter >= 0 && o->flush_jitter < 1)) {
        s = Bad(flag, value, "a number in [0, 1)");
      }
    } else if (flag == "--seed") {
      s = ParseUint(flag, value, 0, UINT64_MAX, &o->seed);
    } else if (flag == "--flush-file") {
      o->flush_file = value;
    } else if (flag == "--checkpoints") {
      o->checkpoints.clear();
      std::stringstream in(value);
      std::string item;
      while (std::getline(in, item, ',')) {
        uint64_t c = 0;
        s = ParseUint(flag, item, 1, 1ull << 40, &c);
        if (!s.ok()) break;
        if (!o->checkpoints.empty() && c <= o->checkpoints.back()) {
          s = Bad(flag, value, "ascending flush counts such as 1000,3000");
          break;
        }
        o->checkpoints.push_back(c);
      }
    } else if (flag == "--format") {
      if (value != "csv" && value != "jsonl") s = Bad(flag, value, "csv or jsonl");
      o->format = value;
    } else if (flag == "--obsolete") {
      s = ParseDouble(flag, value, &o->sim.obsolete_fraction);
      if (s.ok() && !(o->sim.obsolete_fraction >= 0 && o->sim.obsolete_fraction < 1)) {
        s = Bad(flag, value, "a number in [0, 1)");
      }
    } else if (flag == "--key-space") {
      uint64_t v = 0;
      s = ParseBytes(flag, value, &v);
      o->sim.key_space_bytes = static_cast<double>(v);
    } else if (flag == "--decisions") {
      o->decisions_path = value;
    } else if (flag == "--memtable-entries") {
      const size_t comma = value.find(',');
      s = comma == std::string::npos
              ? Bad(flag, value, "KEY_BYTES,VALUE_BYTES such as 16,1000")
              : ParseUint(flag, value.substr(0, comma), 0, 1 << 20, &o->key_bytes);
      if (s.ok()) s = ParseUint(flag, value.substr(comma + 1), 0, 1 << 30, &o->value_bytes);
      o->memtable_entries = true;
    } else if (flag == "--load-flushes") {
      s = ParseUint(flag, value, 0, 1ull << 40, &o->load_flushes);
    } else if (flag == "--flush-priority") {
      if (value == "strict") {
        t.flush_priority = FlushPriority::kStrict;
      } else if (value == "shared") {
        t.flush_priority = FlushPriority::kShared;
      } else if (value == "alternate") {
        t.flush_priority = FlushPriority::kAlternate;
      } else {
        s = Bad(flag, value, "strict, alternate or shared");
      }
    } else if (flag == "--flush-time") {
      if (value != "on" && value != "none") s = Bad(flag, value, "on or none");
      t.flush_time = value == "on";
    } else if (flag == "--bandwidth" || flag == "--arrival-rate" || flag == "--write-rate" ||
               flag == "--flush-rate" || flag == "--merge-rate") {
      uint64_t v = 0;
      s = ParseBytes(flag, value, &v);
      double* target = flag == "--bandwidth"      ? &t.bandwidth
                       : flag == "--arrival-rate" ? &t.arrival_rate
                       : flag == "--write-rate"   ? &t.write_rate
                       : flag == "--flush-rate"   ? &t.flush_rate
                                                  : &t.merge_rate;
      *target = static_cast<double>(v);
    } else {
      return Bad("flag", flag, "one of the flags in --help");
    }
    if (!s.ok()) return s;
  }
  if (o->memtable_entries) {
    Status s = CheckOptions(o->sim.engine);
    return s.ok() ? s : Status::InvalidArgument("engine options: " + ErrorMessage(s));
  }
  if (!have_policy) return Status::InvalidArgument("--policy is required (see --help)");
  if (!have_flushes && o->flush_file.empty()) {
    return Status::InvalidArgument("--flushes is required (or --flush-file)");
  }
  if (have_flushes && !o->checkpoints.empty() && o->checkpoints.back() > o->flushes) {
    return Status::InvalidArgument(
        "--checkpoints " + std::to_string(o->checkpoints.back()) + " exceeds --flushes " +
        std::to_string(o->flushes));
  }
  if ((o->sim.time.bandwidth > 0) != (o->sim.time.arrival_rate > 0)) {
    return Status::InvalidArgument("--bandwidth and --arrival-rate go together (timed model)");
  }
  if (o->sim.time.write_rate > 0 && o->sim.time.write_rate < o->sim.time.arrival_rate) {
    return Status::InvalidArgument("--write-rate must be >= --arrival-rate");
  }
  Status s = CheckOptions(o->sim.engine);
  return s.ok() ? s : Status::InvalidArgument("engine options: " + ErrorMessage(s));
}

Status ReadFlushSizes(const std::string& path, std::vector<uint64_t>* sizes) {
  std::ifstream in(path);
  if (!in) return Status::IOError("--flush-file " + path, "cannot open");
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    uint64_t v = 0;
    Status s = ParseBytes("--flush-file " + path + ":" + std::to_string(number), line, &v);
    if (!s.ok()) return s;
    sizes->push_back(v);
  }
  if (sizes->empty()) return Status::InvalidArgument("--flush-file " + path, "holds no sizes");
  return Status::OK();
}

std::string CsvHeader(bool timed) {
  return std::string("policy,k,flushes,write_amp,avg_sstables,sstables") +
         (timed ? ",time_s,stall_s,max_sstables" : "") + "\n";
}

std::string FormatRow(const CliOptions& o, const Checkpoint& c, bool timed) {
  const std::string policy = ToString(o.sim.engine.merge_policy);
  const std::string k = std::to_string(o.sim.engine.sstable_bound);
  std::string row;
  if (o.format == "csv") {
    row = policy + "," + k + "," + std::to_string(c.flushes) + "," + Fixed(c.write_amp) + "," +
          Fixed(c.avg_sstables) + "," + std::to_string(c.sstables);
    if (timed) {
      row += "," + Fixed(c.time_s) + "," + Fixed(c.stall_s) + "," + std::to_string(c.max_sstables);
    }
  } else {
    row = "{\"policy\":\"" + policy + "\",\"k\":" + k +
          ",\"flushes\":" + std::to_string(c.flushes) + ",\"write_amp\":" + Fixed(c.write_amp) +
          ",\"avg_sstables\":" + Fixed(c.avg_sstables) +
          ",\"sstables\":" + std::to_string(c.sstables) +
          ",\"bytes_flushed\":" + std::to_string(c.bytes_flushed) +
          ",\"bytes_written\":" + std::to_string(c.bytes_flushed + c.bytes_merged) +
          ",\"merges\":" + std::to_string(c.merges) + ",\"moves\":" + std::to_string(c.moves);
    if (timed) {
      row += ",\"time_s\":" + Fixed(c.time_s) + ",\"stall_s\":" + Fixed(c.stall_s) +
             ",\"memory_stall_s\":" + Fixed(c.memory_stall_s) +
             ",\"max_sstables\":" + std::to_string(c.max_sstables) +
             ",\"flushes_pending\":" + std::to_string(c.flushes_pending) +
             ",\"backlog_s\":" + Fixed(c.backlog_s) + ",\"max_backlog_s\":" + Fixed(c.max_backlog_s);
    }
    row += "}";
  }
  return row + "\n";
}

int RunSimulation(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.memtable_entries) {
    const size_t budget = o.sim.engine.memtable_bytes;
    out << "{\"memtable_bytes\":" << budget << ",\"key_bytes\":" << o.key_bytes
        << ",\"value_bytes\":" << o.value_bytes << ",\"entries\":"
        << MemTableCapacity(budget, o.key_bytes, o.value_bytes) << "}\n";
    return 0;
  }
  std::vector<uint64_t> sizes;
  uint64_t n = o.flushes;
  if (!o.flush_file.empty()) {
    Status s = ReadFlushSizes(o.flush_file, &sizes);
    if (!s.ok()) {
      err << "lsm-sim: " << s.ToString() << "\n";
      return 1;
    }
    if (n == 0) n = sizes.size();
    if (n > sizes.size()) {
      err << "lsm-sim: --flushes " << n << " needs " << n << " sizes; " << o.flush_file
          << " holds " << sizes.size() << "\n";
      return 1;
    }
    if (!o.checkpoints.empty() && o.checkpoints.back() > n) {
      err << "lsm-sim: --checkpoints " << o.checkpoints.back() << " exceeds the " << n
          << " flushes\n";
      return 1;
    }
  }
  std::unique_ptr<Simulator> sim;
  Status s = Simulator::Create(o.sim, &sim);
  if (!s.ok()) {
    err << "lsm-sim: " << s.ToString() << "\n";
    return s.IsInvalidArgument() ? 2 : 1;  // parameters that do not go together: bad input
  }
  std::ofstream decisions;
  if (!o.decisions_path.empty()) {
    decisions.open(o.decisions_path);
    if (!decisions) {
      err << "lsm-sim: --decisions " << o.decisions_path << ": cannot create\n";
      return 1;
    }
    sim->set_decision_observer([&](const Decision& d) {
      decisions << "{\"flush\":" << d.flush << ",\"time_s\":" << d.time_s
                << ",\"first\":" << d.first << ",\"inputs\":" << d.inputs
                << ",\"input_bytes\":" << d.input_bytes << ",\"output_bytes\":" << d.output_bytes
                << ",\"level\":" << d.level << "}\n";
    });
  }
  const bool timed = o.sim.time.bandwidth > 0;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> jitter(1 - o.flush_jitter, 1 + o.flush_jitter);
  // Rows are kept until the run succeeds: a failed run prints no table.
  std::string rows = o.format == "csv" ? CsvHeader(timed) : "";
  size_t next_checkpoint = 0;
  for (uint64_t t = 1; t <= o.load_flushes && s.ok(); ++t) s = sim->Load(o.flush_bytes);
  for (uint64_t t = 1; t <= n && s.ok(); ++t) {
    uint64_t bytes = o.flush_bytes;
    if (!sizes.empty()) {
      bytes = sizes[t - 1];
    } else if (o.flush_jitter > 0) {
      const double jittered = static_cast<double>(o.flush_bytes) * jitter(rng);
      bytes = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(jittered)));
    }
    s = sim->Flush(bytes);
    const bool checkpoint =
        next_checkpoint < o.checkpoints.size() && o.checkpoints[next_checkpoint] == t;
    if (checkpoint) ++next_checkpoint;
    if (s.ok() && (checkpoint || t == n)) rows += FormatRow(o, sim->Now(), timed);
  }
  if (!s.ok()) {
    err << "lsm-sim: " << s.ToString() << "\n";
    if (decisions.is_open()) {
      decisions.close();
      std::remove(o.decisions_path.c_str());
    }
    return 1;
  }
  out << rows;
  out.flush();
  return 0;
}

}  // namespace lsm::sim
