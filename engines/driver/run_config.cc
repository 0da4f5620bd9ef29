#include "driver/run_config.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "adapters/adapter.h"
#include "driver/yaml_json.h"

namespace lsmbench {
namespace driver {

namespace {

const std::vector<std::string>& RunFields() {
  static const std::vector<std::string> names = {
      "engine",    "engine_plugin", "engine_options", "dir",         "label",   "workload",  "workload_file",
      "phase",     "duration_s",     "warmup_s",    "threads", "interval_ms", "arrival",
      "queries",   "seed",           "max_ops",     "insert_start", "progress_s", "spin_us",
      "slow_ms",   "drain_s",        "settle_s"};
  return names;
}

const std::vector<std::string>& QueryFields() {
  static const std::vector<std::string> names = {"threads",     "operations", "scan_length",
                                                 "distribution", "field",     "selectivity"};
  return names;
}

bool Readable(const std::string& path) {
  std::ifstream f(path);
  return f.good();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Resolves a relative path: as given (current directory), then under dir.
std::string Resolve(const std::string& path, const std::string& dir) {
  if (path.empty() || path[0] == '/' || Readable(path)) return path;
  const std::string candidate = dir + "/" + path;
  return Readable(candidate) ? candidate : path;
}

// A load keeps the trace's distinct keys in memory; beyond this many it
// refuses (record_count: 0 replays without a load).
constexpr uint64_t kMaxTraceLoadKeys = 20'000'000;

// Finds the workload's trace (as given, then in each of dirs) and measures it.
Status MeasureWorkloadTrace(const std::vector<std::string>& dirs, WorkloadSpec* w) {
  std::string resolved = w->rocksdb_trace;
  if (resolved[0] != '/') {
    for (const std::string& dir : dirs) {
      const std::string candidate = dir.empty() ? resolved : dir + "/" + resolved;
      if (Readable(candidate)) {
        resolved = candidate;
        break;
      }
    }
  }
  auto measure = std::make_shared<TraceMeasure>();
  Status s = MeasureTrace(resolved, kMaxTraceLoadKeys, measure.get());
  if (!s.ok()) return Status::InvalidArgument("workload.rocksdb_trace: " + ErrorText(s));
  w->rocksdb_trace = resolved;
  return ApplyTraceMeasure(measure, "workload", w);
}

Status ParseQueries(const JsonObject& top, const WorkloadSpec& workload, QuerySpec* out) {
  JsonObject obj;
  Status s = top.GetObject("queries", QueryFields(), &obj);
  if (!s.ok()) return s;
  QuerySpec q;
  // A fixed scan length is the workload's; a varying one leaves the default.
  if (workload.scan_length_min == workload.scan_length_max && workload.scan_length_min > 0) {
    q.scan_length = workload.scan_length_min;
  }
  q.distribution = workload.distribution;
  uint64_t threads = 0;
  s = obj.GetUint("threads", 0, 1024, &threads);
  q.threads = static_cast<uint32_t>(threads);
  if (s.ok() && obj.Has("operations")) {
    std::map<std::string, double> ops;
    s = obj.GetNumberMap("operations", {"get", "scan", "secondary"}, &ops);
    if (s.ok()) {
      q.get = ops.count("get") ? ops["get"] : 0.0;
      q.scan = ops.count("scan") ? ops["scan"] : 0.0;
      q.secondary = ops.count("secondary") ? ops["secondary"] : 0.0;
      if (std::abs(q.get + q.scan + q.secondary - 1.0) > 1e-6) {
        s = obj.Error("operations", "proportions of get, scan and secondary must sum to 1");
      }
    }
  }
  uint64_t field = 0;
  if (s.ok()) s = obj.GetUint("field", 0, kMaxSecondaryFields, &field);
  q.field = static_cast<uint32_t>(field);
  if (s.ok()) s = obj.GetUint("selectivity", 1, UINT64_MAX, &q.selectivity);
  if (s.ok() && (q.secondary > 0 || obj.Has("field") || obj.Has("selectivity"))) {
    // Secondary queries need a field the workload defines, and a range no
    // wider than the values it takes.
    if (workload.secondary_fields == 0) {
      s = obj.Error(obj.Has("field") ? "field" : q.secondary > 0 ? "operations" : "selectivity",
                    "secondary queries need records with secondary fields, and the workload "
                    "defines none (workload.secondary_fields is 0)");
    } else if (q.field >= workload.secondary_fields) {
      s = obj.Error("field", "the workload defines " + std::to_string(workload.secondary_fields) +
                                 " secondary fields (0.." +
                                 std::to_string(workload.secondary_fields - 1) + "), not " +
                                 std::to_string(q.field));
    } else if (q.selectivity > workload.SecondaryValues()) {
      s = obj.Error("selectivity",
                    "a range of " + std::to_string(q.selectivity) + " values is wider than the " +
                        std::to_string(workload.SecondaryValues()) +
                        " a secondary field takes (workload.secondary_values, by default "
                        "record_count)");
    }
  }
  uint64_t scan_length = q.scan_length;
  if (s.ok()) s = obj.GetUint("scan_length", 1, 1 << 24, &scan_length);
  q.scan_length = static_cast<uint32_t>(scan_length);
  size_t dist = static_cast<size_t>(q.distribution);
  if (s.ok()) s = obj.GetChoice("distribution", DistributionNames(), &dist);
  q.distribution = static_cast<Distribution>(dist);
  if (!s.ok()) return s;
  *out = q;
  return Status::OK();
}

}  // namespace

const std::vector<std::string>& PhaseNames() {
  static const std::vector<std::string> names = {"load", "testing", "running"};
  return names;
}

Json QuerySpec::ToJson() const {
  Json j{{"threads", threads},
         {"operations", {{"get", get}, {"scan", scan}}},
         {"scan_length", scan_length},
         {"distribution", DistributionNames()[static_cast<int>(distribution)]}};
  if (secondary > 0) {
    j["operations"]["secondary"] = secondary;
    j["field"] = field;
    j["selectivity"] = selectivity;
  }
  return j;
}

Json RunConfig::ToJson() const {
  Json j;
  j["engine"] = engine;
  if (!engine_plugin.empty()) j["engine_plugin"] = engine_plugin;
  j["engine_options"] = engine_options;
  j["dir"] = dir;
  if (!label.empty()) j["label"] = label;
  j["workload"] = workload.ToJson();
  if (!workload_file.empty()) j["workload_file"] = workload_file;
  j["phase"] = PhaseNames()[static_cast<int>(phase)];
  j["duration_s"] = duration_s;
  j["warmup_s"] = warmup_s;
  j["threads"] = threads;
  j["interval_ms"] = interval_ms;
  if (phase == Phase::kRunning) j["arrival"] = arrival.ToJson();
  if (queries.threads > 0) j["queries"] = queries.ToJson();
  j["seed"] = seed;
  j["max_ops"] = max_ops;
  j["insert_start"] = insert_start;
  j["progress_s"] = progress_s;
  j["spin_us"] = spin_us;
  j["slow_ms"] = slow_ms;
  if (phase == Phase::kRunning) j["drain_s"] = drain_s;
  if (settle_s > 0) j["settle_s"] = settle_s;
  return j;
}

Status ParseRunConfig(const Json& json, const std::string& config_dir,
                      const std::vector<std::string>& engines, RunConfig* out) {
  JsonObject obj;
  Status s = JsonObject::Open(json, "", RunFields(), &obj);
  if (!s.ok()) return s;
  RunConfig c;

  s = obj.Required("engine");
  if (s.ok()) s = obj.GetString("engine", &c.engine);
  if (s.ok()) s = obj.GetString("engine_plugin", &c.engine_plugin);
  if (!s.ok()) return s;
  std::vector<std::string> known_engines = engines;
  if (!c.engine_plugin.empty()) {
    std::string name;
    s = LoadEnginePlugin(c.engine_plugin, &name);
    if (!s.ok()) return obj.Error("engine_plugin", ErrorText(s));
    if (name != c.engine) {
      return obj.Error("engine", "'" + c.engine + "' is not the engine plugin at " +
                                     c.engine_plugin + ", which calls itself '" + name + "'");
    }
    known_engines.push_back(name);
  }
  bool known = false;
  for (const auto& e : known_engines) known = known || e == c.engine;
  if (!known && c.engine_plugin.empty()) {
    // A plugin by its name alone: lsmbench-NAME.so on the plugin path.
    s = LoadEnginePluginNamed(c.engine);
    if (s.ok()) {
      known = true;
    } else if (!s.IsNotFound()) {
      return obj.Error("engine", ErrorText(s));
    }
  }
  if (!known) {
    std::string looked;
    for (const std::string& dir : EnginePluginPath()) looked += (looked.empty() ? "" : ", ") + dir;
    return obj.Error("engine", "unknown engine '" + c.engine + "' (available: " +
                                   JoinNames(known_engines) + "; no plugin lsmbench-" +
                                   c.engine + ".so on the plugin path: " + looked + ")");
  }
  s = obj.GetStringMap("engine_options", &c.engine_options);
  if (s.ok()) s = obj.GetString("dir", &c.dir);
  if (s.ok() && c.dir.empty() && c.engine != "null") {
    s = obj.Error("dir", "required: the engine's data directory");
  }
  if (s.ok()) s = obj.GetString("label", &c.label);
  if (!s.ok()) return s;

  // The workload: a file, an inline object, or both (inline fields override
  // the file's, whole values at a time).
  if (!obj.Has("workload") && !obj.Has("workload_file")) {
    return Status::InvalidArgument("workload: give \"workload\" (an object) or \"workload_file\"");
  }
  Json workload_json = Json::object();
  std::vector<std::string> search_dirs = {"", config_dir};
  if (obj.Has("workload_file")) {
    std::string file;
    s = obj.GetString("workload_file", &file);
    if (!s.ok()) return s;
    c.workload_file = Resolve(file, config_dir);
    s = ReadConfigFile(c.workload_file, &workload_json);
    if (!s.ok()) return obj.Error("workload_file", ErrorText(s));
    if (!workload_json.is_object()) {
      return obj.Error("workload_file", c.workload_file + ": expected a mapping of fields");
    }
    search_dirs.push_back(DirName(c.workload_file));
  }
  if (obj.Has("workload")) {
    const Json& inline_json = obj.Raw("workload");
    if (!inline_json.is_object()) return obj.Error("workload", "expected an object");
    for (auto it = inline_json.begin(); it != inline_json.end(); ++it) {
      workload_json[it.key()] = it.value();
    }
  }
  s = ParseWorkload(workload_json, "workload", &c.workload);
  if (s.ok() && !c.workload.rocksdb_trace.empty()) s = MeasureWorkloadTrace(search_dirs, &c.workload);
  if (!s.ok()) {
    if (c.workload_file.empty()) return s;
    return Status::InvalidArgument(ErrorText(s) + " [workload_file " + c.workload_file + "]");
  }

  size_t phase = 0;
  s = obj.Required("phase");
  if (s.ok()) s = obj.GetChoice("phase", PhaseNames(), &phase);
  if (!s.ok()) return s;
  c.phase = static_cast<Phase>(phase);

  if (c.phase != Phase::kLoad) s = obj.Required("duration_s");
  if (s.ok()) s = obj.GetDouble("duration_s", 0, 1e9, &c.duration_s);
  if (s.ok() && c.phase != Phase::kLoad && !(c.duration_s > 0)) {
    s = obj.Error("duration_s", "must be > 0 seconds");
  }
  if (s.ok()) s = obj.GetDouble("warmup_s", 0, 1e9, &c.warmup_s);
  if (s.ok() && c.warmup_s > 0 && c.duration_s > 0 && c.warmup_s >= c.duration_s) {
    s = obj.Error("warmup_s", "must be shorter than duration_s");
  }
  uint64_t threads = c.threads, interval = c.interval_ms;
  if (s.ok()) s = obj.GetUint("threads", 1, 1024, &threads);
  if (s.ok()) s = obj.GetUint("interval_ms", 10, 3600 * 1000, &interval);
  c.threads = static_cast<uint32_t>(threads);
  c.interval_ms = static_cast<uint32_t>(interval);
  if (s.ok() && c.warmup_s > 0 && c.duration_s > 0) {
    // The warm-up ends on an interval boundary (see the runner).
    const double rounded =
        std::ceil(c.warmup_s * 1000.0 / c.interval_ms - 1e-9) * c.interval_ms / 1000.0;
    if (rounded >= c.duration_s) {
      s = obj.Error("warmup_s", "rounded up to whole intervals (" + std::to_string(rounded) +
                                    " s) leaves no measured window before duration_s");
    }
  }
  c.seed = c.workload.seed;
  if (s.ok()) s = obj.GetUint("seed", 0, UINT64_MAX, &c.seed);
  if (s.ok()) s = obj.GetUint("max_ops", 0, UINT64_MAX, &c.max_ops);
  c.insert_start = c.workload.record_count;
  if (s.ok()) s = obj.GetUint("insert_start", 0, UINT64_MAX, &c.insert_start);
  if (s.ok()) s = obj.GetDouble("progress_s", 0, 1e9, &c.progress_s);
  if (s.ok()) s = obj.GetDouble("spin_us", 0, 1e6, &c.spin_us);
  if (s.ok()) s = obj.GetDouble("slow_ms", 0, 1e9, &c.slow_ms);
  if (s.ok()) s = obj.GetDouble("drain_s", 0, 1e9, &c.drain_s);
  if (s.ok() && c.drain_s > 0 && c.phase != Phase::kRunning) {
    s = obj.Error("drain_s", "only used by phase running");
  }
  if (s.ok()) s = obj.GetDouble("settle_s", 0, 86400, &c.settle_s);
  if (!s.ok()) return s;

  // Arrival: the running phase only. The workload's arrival section gives
  // defaults that run.json overrides field by field; a different process in
  // run.json replaces it entirely.
  if (c.phase == Phase::kRunning) {
    Json arrival = c.workload.arrival.is_null() ? Json::object() : c.workload.arrival;
    if (obj.Has("arrival")) {
      const Json& given = obj.Raw("arrival");
      if (!given.is_object()) return obj.Error("arrival", "expected an object");
      if (given.contains("process") && arrival.contains("process") &&
          given["process"] != arrival["process"]) {
        arrival = Json::object();
      }
      for (auto it = given.begin(); it != given.end(); ++it) arrival[it.key()] = it.value();
    }
    if (arrival.empty()) {
      return Status::InvalidArgument(
          "arrival: required for phase running (e.g. {\"process\": \"constant\", \"rate\": "
          "10000})");
    }
    s = ParseArrival(arrival, "arrival", search_dirs, &c.arrival);
    if (!s.ok()) return s;
    if (c.arrival.process == ArrivalSpec::Process::kReplay) {
      if (!c.workload.trace) {
        return Status::InvalidArgument("arrival.process: replay needs a workload with "
                                       "rocksdb_trace (it replays the trace's time stamps)");
      }
      c.arrival.replay = c.workload.trace;
      c.arrival.replay_repeat = c.workload.rocksdb_trace_repeat;
    }
  } else if (obj.Has("arrival")) {
    return obj.Error("arrival", "only used by phase running (this is phase " +
                                    PhaseNames()[phase] + ")");
  }

  if (obj.Has("queries")) {
    s = ParseQueries(obj, c.workload, &c.queries);
    if (!s.ok()) return s;
  }
  if (c.workload.secondary_fields > 0 && !AdapterHasSecondaryIndexes(c.engine)) {
    return Status::InvalidArgument(
        "workload.secondary_fields: engine '" + c.engine +
        "' keeps no secondary indexes, so it cannot run a workload of records with secondary "
        "fields (only builtin can)");
  }
  // A dataset is read by key or by secondary query; its adapter scans nothing.
  if (c.workload.secondary_fields > 0 && (c.workload.mix[kScan] > 0 || c.queries.scan > 0)) {
    return Status::InvalidArgument(
        std::string(c.workload.mix[kScan] > 0 ? "workload.operations" : "queries.operations") +
        ": scans of a dataset's primary index are not supported; use secondary queries "
        "(queries.operations.secondary) or point reads");
  }
  *out = std::move(c);
  return Status::OK();
}

Status LoadRunConfig(const std::string& path, const std::vector<std::string>& engines,
                     RunConfig* out) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(path + ": cannot read the configuration file");
  std::stringstream buf;
  buf << in.rdbuf();
  Json json;
  try {
    json = Json::parse(buf.str());
  } catch (const Json::parse_error& e) {
    return Status::InvalidArgument(path + ": JSON syntax error: " + e.what());
  }
  return ParseRunConfig(json, DirName(path), engines, out);
}

}  // namespace driver
}  // namespace lsmbench
