// lsm-driver --config run.json --out DIR
// lsm-driver --describe-options [ENGINE | PLUGIN.so]
// lsm-driver --check-options ENGINE|PLUGIN.so [--option NAME=VALUE]...
// lsm-driver --check-config run.json
//
// Exit codes: 0 success; 1 engine failure (open, the settle before the
// phase, an operation, close) or an output file that could not be written;
// 2 bad input (usage, configuration, engine options, output directory);
// 128+N interrupted by signal N (the outputs are written, marked
// "interrupted").
//
// SIGUSR1 is not an interruption: it ends the phase now, as if its duration
// had elapsed (the orchestrator's stopping rule has decided); exit 0.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "adapters/adapter.h"
#include "lsm/option_values.h"
#include "driver/generate_ops.h"
#include "driver/options_cli.h"
#include "driver/report.h"
#include "driver/run_config.h"
#include "driver/runner.h"
#include "driver/settle.h"
#include "driver/trace_commands.h"

namespace {

using namespace lsmbench;
using namespace lsmbench::driver;

std::atomic<int> g_signal{0};

void OnSignal(int signo) {
  // A second signal means "now": leave without writing anything more.
  if (g_signal.exchange(signo) != 0) _exit(128 + signo);
}

std::atomic<int> g_end_signal{0};

void OnEndSignal(int signo) { g_end_signal.store(signo); }

const char kUsage[] =
    "usage: lsm-driver --config run.json --out DIR [--quiet]\n"
    "       lsm-driver --describe-options [ENGINE | PLUGIN] [--markdown]\n"
    "       lsm-driver --describe-workload [run.json]\n"
    "       lsm-driver --check-options ENGINE|PLUGIN [--option NAME=VALUE]...\n"
    "       lsm-driver --check-config run.json\n"
    "       lsm-driver --generate-ops run.json [--count N] [--trace-out FILE]\n"
    "       lsm-driver --trace-ops TRACE [--out FILE]\n"
    "       lsm-driver --trace-summary TRACE [--distinct-keys-limit N]\n"
    "Runs one phase (load, testing or running) of a workload against an engine\n"
    "and writes timeseries.jsonl, summary.json and histograms.json to DIR.\n"
    "--describe-workload prints a workload's defaults (every field run.json's\n"
    "workload may leave out) as JSON; with run.json, its workload as the driver\n"
    "reads it, and the mean value size its inserts and updates write.\n"
    "--describe-options prints the options ENGINE (default builtin) accepts as\n"
    "JSON; --check-options parses a set of options as a run would and prints\n"
    "{\"ok\", \"errors\"} (exit 0 when ok, 1 when not), opening nothing.\n"
    "PLUGIN: the path of an engine plugin (a name with a '/'), loaded first.\n"
    "--check-config parses run.json as a run would (every field but the engine\n"
    "options) and prints {\"ok\", \"errors\": [{\"path\", \"message\"}]} the same way.\n"
    "--generate-ops prints the first N (default 100000) operations run.json's\n"
    "phase would send, as an op stream (CSV), without opening the engine;\n"
    "with --trace-out, as a RocksDB query trace in FILE instead.\n"
    "--trace-ops and --trace-summary read a RocksDB query trace (db_bench\n"
    "--trace_file): its ops as an op stream CSV, or a JSON summary.\n"
    "Schemas: engines/driver/README.md\n";

int Fail(int code, const std::string& message) {
  fprintf(stderr, "lsm-driver: %s\n", message.c_str());
  return code;
}

std::string UtcNow() {
  const time_t t = time(nullptr);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// An engine argument with a '/' is an engine plugin's path: loaded, and
// *engine becomes its name. Any other name not compiled in is looked for on
// the plugin path. False (and the message printed) when it fails.
bool ResolveEngine(std::string* engine) {
  if (engine->find('/') == std::string::npos) {
    Status s = LoadEnginePluginNamed(*engine);
    if (!s.ok()) Fail(2, ErrorText(s));
    return s.ok();
  }
  std::string name;
  Status s = LoadEnginePlugin(*engine, &name);
  if (!s.ok()) {
    Fail(2, ErrorText(s));
    return false;
  }
  *engine = name;
  return true;
}

// --describe-options / --check-options; argv[1] is one of them.
int OptionsCommand(int argc, char** argv) {
  const std::string command = argv[1];
  if (command == "--describe-options") {
    std::string engine = "builtin";
    bool markdown = false, have_engine = false;
    for (int i = 2; i < argc; i++) {
      const std::string arg = argv[i];
      if (arg == "--markdown") {
        markdown = true;
      } else if (!have_engine && arg.rfind("--", 0) != 0) {
        engine = arg;
        have_engine = true;
      } else {
        return Fail(2, "--describe-options: unexpected '" + arg + "'\n" + kUsage);
      }
    }
    if (!ResolveEngine(&engine)) return 2;
    std::string text;
    Status s = markdown ? DescribeOptionsMarkdown(engine, &text) : DescribeOptionsJson(engine, &text);
    if (!s.ok()) return Fail(2, ErrorText(s));
    fputs(text.c_str(), stdout);
    return 0;
  }
  if (argc < 3) return Fail(2, "--check-options needs an engine\n" + std::string(kUsage));
  std::string engine = argv[2];
  if (!ResolveEngine(&engine)) return 2;
  AdapterOptions options;
  for (int i = 3; i < argc; i++) {
    const std::string arg = argv[i];
    const std::string pair = arg == "--option" && i + 1 < argc ? argv[++i]
                             : arg.rfind("--option=", 0) == 0 ? arg.substr(9)
                                                              : "";
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(2, "--check-options: expected --option NAME=VALUE, got '" + arg + "'");
    }
    options[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  const std::vector<std::string> engines = AdapterNames();
  if (std::find(engines.begin(), engines.end(), engine) == engines.end()) {
    return Fail(2, "engine '" + engine + "': not in this build (choose from: " +
                       lsm::JoinNames(engines) + ")");
  }
  bool ok = false;
  const std::string json = CheckOptionsJson(engine, options, &ok);
  fputs(json.c_str(), stdout);
  return ok ? 0 : 1;
}

// --check-config FILE: the configuration's first error, split into its JSON
// path and what is wrong there.
int CheckConfigCommand(int argc, char** argv) {
  if (argc != 3) return Fail(2, "--check-config needs one run.json\n" + std::string(kUsage));
  RunConfig config;
  const Status s = LoadRunConfig(argv[2], AdapterNames(), &config);
  Json reply = {{"ok", s.ok()}, {"errors", Json::array()}};
  if (!s.ok()) {
    const std::string text = ErrorText(s);
    const size_t colon = text.find(": ");
    const bool has_path = colon != std::string::npos && colon > 0 &&
                          text.find_first_of(" '\"") > colon;
    reply["errors"].push_back({{"path", has_path ? text.substr(0, colon) : ""},
                               {"message", has_path ? text.substr(colon + 2) : text}});
  }
  fputs((reply.dump() + "\n").c_str(), stdout);
  return s.ok() ? 0 : 1;
}

// --generate-ops run.json [--count N]
int GenerateOpsCommand(int argc, char** argv) {
  std::string config_path, trace_out;
  uint64_t count = 100000;
  for (int i = 2; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg == "--trace-out" && i + 1 < argc) {
      trace_out = argv[++i];
    } else if (arg == "--count" && i + 1 < argc) {
      char* end = nullptr;
      const std::string text = argv[++i];
      errno = 0;
      count = strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-') {
        return Fail(2, "--count: expected a number of operations, got '" + text + "'");
      }
    } else if (config_path.empty() && arg.rfind("--", 0) != 0) {
      config_path = arg;
    } else {
      return Fail(2, "--generate-ops: unexpected '" + arg + "'\n" + kUsage);
    }
  }
  if (config_path.empty()) return Fail(2, "--generate-ops needs run.json\n" + std::string(kUsage));
  RunConfig config;
  Status s = LoadRunConfig(config_path, AdapterNames(), &config);
  if (!s.ok()) return Fail(2, config_path + ": " + ErrorText(s));
  if (!trace_out.empty()) {
    s = WriteGeneratedTrace(config, count, trace_out);
    if (!s.ok()) {
      unlink(trace_out.c_str());  // no half-written trace that looks complete
      return Fail(s.IsInvalidArgument() ? 2 : 1, ErrorText(s));
    }
    return 0;
  }
  s = WriteGeneratedOps(config, count, stdout);
  if (!s.ok()) return Fail(1, ErrorText(s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && (std::string(argv[1]) == "--describe-options" ||
                    std::string(argv[1]) == "--check-options")) {
    return OptionsCommand(argc, argv);
  }
  if (argc >= 2 && std::string(argv[1]) == "--check-config") return CheckConfigCommand(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--generate-ops") return GenerateOpsCommand(argc, argv);
  // RocksDB query traces: --trace-ops, --trace-summary (trace_commands.h).
  if (argc >= 2 && IsTraceCommand(argv[1])) return RunTraceCommand(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--describe-workload") {
    if (argc > 3) return Fail(2, "--describe-workload takes at most run.json\n" + std::string(kUsage));
    if (argc == 2) {
      fputs(WorkloadDefaultsJson().c_str(), stdout);
      return 0;
    }
    RunConfig config;
    Status s = LoadRunConfig(argv[2], AdapterNames(), &config);
    if (!s.ok()) return Fail(2, std::string(argv[2]) + ": " + ErrorText(s));
    Json j = config.workload.ToJson();
    j["mean_value_size"] = config.workload.MeanValueSize();
    if (const auto& t = config.workload.trace) {
      // What a replay of the trace sends (trace_workload.h).
      Json ops = Json::object();
      for (int type = 0; type < kNumOpTypes; type++) {
        if (t->ops_by_type[type] > 0) ops[OpTypeName(type)] = t->ops_by_type[type];
      }
      j["trace"] = {{"ops", t->ops}, {"ops_by_type", ops}, {"not_replayed_ops", t->skipped_ops},
                    {"span_s", t->span_us / 1e6}, {"native_rate", t->NativeRate()},
                    {"load_keys", config.workload.record_count},
                    {"end_record_seen", t->end_record_seen}};
    }
    fputs((j.dump(1) + "\n").c_str(), stdout);
    return 0;
  }
  std::string config_path, out_dir;
  bool quiet = false;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (arg == "--config") {
      if (!value(&config_path)) return Fail(2, "--config needs a file\n" + std::string(kUsage));
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else if (arg == "--out") {
      if (!value(&out_dir)) return Fail(2, "--out needs a directory\n" + std::string(kUsage));
    } else if (arg.rfind("--out=", 0) == 0) {
      out_dir = arg.substr(6);
    } else if (arg == "--quiet") {
      quiet = true;
    } else if (arg == "--help" || arg == "-h") {
      fputs(kUsage, stdout);
      return 0;
    } else {
      return Fail(2, "unknown argument '" + arg + "'\n" + kUsage);
    }
  }
  if (config_path.empty() || out_dir.empty()) {
    return Fail(2, std::string("--config and --out are required\n") + kUsage);
  }

  RunConfig config;
  Status s = LoadRunConfig(config_path, AdapterNames(), &config);
  if (!s.ok()) return Fail(2, config_path + ": " + ErrorText(s));
  s = PrepareOutputDir(out_dir);
  if (!s.ok()) return Fail(2, ErrorText(s));
  // Outputs of an earlier run in the same directory must not be mistaken
  // for this run's.
  for (const char* name : {"summary.json", "histograms.json", "timeseries.jsonl",
                           "timeseries.jsonl.partial"}) {
    unlink((out_dir + "/" + name).c_str());
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // The run goes on after SIGUSR1: system calls it lands in restart.
  struct sigaction end_sa;
  memset(&end_sa, 0, sizeof(end_sa));
  end_sa.sa_handler = OnEndSignal;
  end_sa.sa_flags = SA_RESTART;
  sigemptyset(&end_sa.sa_mask);
  sigaction(SIGUSR1, &end_sa, nullptr);

  std::unique_ptr<KvAdapter> adapter;
  const int secondary_indexes = static_cast<int>(config.workload.secondary_fields);
  s = secondary_indexes > 0 ? OpenDatasetAdapter(config.engine, config.dir, config.engine_options,
                                                 secondary_indexes, &adapter)
                            : OpenAdapter(config.engine, config.dir, config.engine_options,
                                          &adapter);
  if (!s.ok()) {
    // Bad options are the user's input; anything else is the engine's.
    if (s.IsInvalidArgument()) return Fail(2, "engine_options: " + ErrorText(s));
    return Fail(1, "engine " + config.engine + " failed to open " + config.dir + ": " +
                       s.ToString());
  }

  RunInfo info;
  // A load settles after its writes (its job is the tree the next phases start
  // from); a testing or running phase before its clock starts.
  const bool settle_after = config.phase == Phase::kLoad;
  auto settle = [&]() -> Status {
    if (!quiet) {
      fprintf(stderr, "[lsm-driver] settling: up to %g s for the engine's flushes and merges\n",
              config.settle_s);
    }
    Status st = SettleEngine(adapter.get(), config.settle_s, &g_signal, &info.settle);
    if (st.ok() && !quiet) {
      const SettleOutcome& o = info.settle;
      fprintf(stderr, "[lsm-driver] settle: %s after %.1f s (%s)\n",
              !o.report.supported ? "not supported"
              : o.report.idle     ? "idle"
              : o.timed_out       ? "still busy at the limit"
                                  : "interrupted",
              o.report.waited_s, o.report.detail.c_str());
    }
    return st;
  };
  if (config.settle_s > 0 && !settle_after) {
    s = settle();
    if (!s.ok()) {
      adapter->Close();
      return Fail(1, "engine " + config.engine + " failed while settling: " + s.ToString());
    }
  }

  TimeseriesWriter timeseries;
  s = timeseries.Open(out_dir);
  if (!s.ok()) return Fail(1, s.ToString());

  info.start_time_utc = UtcNow();
  info.hostname = Hostname();
  RunHooks hooks;
  hooks.stop_signal = &g_signal;
  hooks.end_signal = &g_end_signal;
  hooks.on_interval = [&](const IntervalStats& st) { timeseries.Append(IntervalJson(config, st)); };
  if (!quiet) {
    hooks.on_progress = [](const std::string& line) { fprintf(stderr, "%s\n", line.c_str()); };
  }
  auto result = std::make_unique<RunResult>();
  RunPhase(config, adapter.get(), hooks, result.get());
  if (config.settle_s > 0 && settle_after && result->error.ok() && !result->interrupted) {
    s = settle();
    if (!s.ok()) result->error = s;
  }

  Status close_status = adapter->Close();
  if (!close_status.ok() && result->error.ok()) result->error = close_status;

  int code = 0;
  if (!result->error.ok()) {
    code = 1;
  } else if (result->interrupted) {
    info.signal = g_signal.load();
    code = 128 + info.signal;
  }
  info.exit_code = code;

  Status out_status = timeseries.Finish();
  if (out_status.ok()) {
    out_status = WriteFileAtomic(out_dir + "/histograms.json",
                                 HistogramsJson(config, *result).dump() + "\n");
  }
  if (out_status.ok()) {
    out_status = WriteFileAtomic(out_dir + "/summary.json",
                                 SummaryJson(config, *result, info).dump(2) + "\n");
  }
  if (!out_status.ok()) return Fail(1, "writing outputs: " + out_status.ToString());
  if (!result->error.ok()) return Fail(1, "engine error: " + result->error.ToString());
  if (result->interrupted) {
    fprintf(stderr, "lsm-driver: interrupted by signal %d; partial results written to %s\n",
            info.signal, out_dir.c_str());
  }
  return code;
}
