#include "driver/report.h"

#include "driver/options_cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace lsmbench {
namespace driver {

namespace {

constexpr const char* kSummarySchema = "lsm-driver/summary/1";
constexpr const char* kIntervalSchema = "lsm-driver/interval/1";
constexpr const char* kHistogramsSchema = "lsm-driver/histograms/1";

double Us(uint64_t ns) { return static_cast<double>(ns) * 1e-3; }

// Keeps the JSON readable: microsecond figures to 0.001 us.
double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

Json MetricsJson(const Metrics& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) {
    if (std::isfinite(v)) {
      j[k] = v;
    } else {
      j[k] = nullptr;
    }
  }
  return j;
}

double Rate(uint64_t ops, double secs) { return secs > 0 ? static_cast<double>(ops) / secs : 0.0; }

// Read and written bytes between two snapshots as `<prefix>_read_bytes`,
// `<prefix>_write_bytes` and their per-second rates. Counters only grow; a
// difference below 0 would be a snapshot taken out of order, reported as
// nothing rather than as 2^64.
void AddBytes(const std::string& prefix, uint64_t read_start, uint64_t read_end,
              uint64_t write_start, uint64_t write_end, double secs, Json* j) {
  auto delta = [](uint64_t a, uint64_t b) { return b >= a ? b - a : uint64_t{0}; };
  const uint64_t read = delta(read_start, read_end);
  const uint64_t write = delta(write_start, write_end);
  (*j)[prefix + "_read_bytes"] = read;
  (*j)[prefix + "_write_bytes"] = write;
  (*j)[prefix + "_read_bytes_per_s"] = Rate(read, secs);
  (*j)[prefix + "_write_bytes_per_s"] = Rate(write, secs);
}

// The process's usage between two snapshots `secs` apart: disk bytes (when
// the kernel counts them at both), device bytes (its own cgroup's, when it
// has one), CPU seconds, and the busy CPUs as a count and as a share of the
// CPUs it may use.
Json ProcessJson(const ProcessUsage& start, const ProcessUsage& end, double secs, int cpus) {
  Json j = Json::object();
  if (start.disk_known && end.disk_known) {
    AddBytes("disk", start.disk_read_bytes, end.disk_read_bytes, start.disk_write_bytes,
             end.disk_write_bytes, secs, &j);
  }
  if (start.device_known && end.device_known) {
    AddBytes("device", start.device_read_bytes, end.device_read_bytes, start.device_write_bytes,
             end.device_write_bytes, secs, &j);
  }
  const double user = std::max(end.cpu_user_s - start.cpu_user_s, 0.0);
  const double system = std::max(end.cpu_system_s - start.cpu_system_s, 0.0);
  j["cpu_user_s"] = user;
  j["cpu_system_s"] = system;
  const double cores = secs > 0 ? (user + system) / secs : 0.0;
  j["cpu_cores"] = cores;
  j["cpu_utilization"] = cores / static_cast<double>(std::max(cpus, 1));
  j["usable_cpus"] = cpus;
  return j;
}

Json MeanAndCv(const std::vector<double>& xs) {
  if (xs.empty()) {
    return Json{{"mean", nullptr}, {"cv", nullptr}, {"min", nullptr}, {"max", nullptr}};
  }
  double sum = 0, mn = xs[0], mx = xs[0];
  for (double x : xs) {
    sum += x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  const double mean = sum / static_cast<double>(xs.size());
  double var = 0;
  for (double x : xs) var += (x - mean) * (x - mean);
  var /= static_cast<double>(xs.size());
  Json cv = mean > 0 ? Json(std::sqrt(var) / mean) : Json(nullptr);
  return Json{{"mean", mean}, {"cv", cv}, {"min", mn}, {"max", mx}};
}

bool InMix(const RunConfig& c, int type) {
  return c.phase == Phase::kLoad ? type == kInsert : c.workload.mix[type] > 0;
}

Json OpsJson(const RunConfig& c, const uint64_t* ops) {
  Json j = Json::object();
  uint64_t total = 0, writes = 0;
  for (int t = 0; t < kNumOpTypes; t++) {
    if (InMix(c, t) || ops[t] > 0) j[OpTypeName(t)] = ops[t];
    total += ops[t];
    if (IsWrite(t)) writes += ops[t];
  }
  j["total"] = total;
  j["writes"] = writes;
  return j;
}

Json MetricDelta(const Metrics& start, const Metrics& end, const char* name) {
  auto e = end.find(name);
  if (e == end.end()) return nullptr;
  auto s = start.find(name);
  return e->second - (s == start.end() ? 0.0 : s->second);
}

std::string PhaseName(const RunConfig& c) { return PhaseNames()[static_cast<int>(c.phase)]; }

}  // namespace

Json LatencySummary(const Histogram& h) {
  Json j;
  j["count"] = h.count();
  if (h.count() == 0) {
    for (const char* k : {"mean", "p50", "p90", "p99", "p999", "max"}) j[k] = nullptr;
    return j;
  }
  j["mean"] = Round3(h.Mean() * 1e-3);
  j["p50"] = Round3(Us(h.Percentile(0.50)));
  j["p90"] = Round3(Us(h.Percentile(0.90)));
  j["p99"] = Round3(Us(h.Percentile(0.99)));
  j["p999"] = Round3(Us(h.Percentile(0.999)));
  j["max"] = Round3(Us(h.max()));
  return j;
}

Json HistogramJson(const Histogram& h) {
  Json buckets = Json::array();
  for (size_t i = 0; i < Histogram::kNumBuckets; i++) {
    const uint64_t c = h.bucket_count(i);
    if (c == 0) continue;
    buckets.push_back(Json::array({Histogram::BucketLow(i), Histogram::BucketHigh(i), c}));
  }
  return Json{{"count", h.count()},
              {"sum", h.sum()},
              {"min", h.min()},
              {"max", h.max()},
              {"buckets", std::move(buckets)}};
}

Json IntervalJson(const RunConfig& config, const IntervalStats& s) {
  Json j;
  j["schema"] = kIntervalSchema;
  j["phase"] = PhaseName(config);
  j["interval"] = s.index;
  j["t_start_s"] = s.t_start_s;
  j["t_end_s"] = s.t_end_s;
  j["measured"] = s.measured;
  if (s.open_loop) j["drain"] = s.drain;
  uint64_t ops[kNumOpTypes];
  for (int t = 0; t < kNumOpTypes; t++) ops[t] = s.Ops(t);
  j["ops"] = OpsJson(config, ops);
  const double secs = s.duration_s();
  Json tput = Json::object();
  for (auto it = j["ops"].begin(); it != j["ops"].end(); ++it) {
    tput[it.key()] = Rate(it.value().get<uint64_t>(), secs);
  }
  j["throughput"] = tput;
  Histogram h;
  s.WriteLatency(&h, false);
  j["write_latency_us"] = LatencySummary(h);
  s.WriteLatency(&h, true);
  j["write_processing_latency_us"] = LatencySummary(h);
  Json by_type = Json::object();
  for (int t = 0; t < kNumOpTypes; t++) {
    if (InMix(config, t) || s.Ops(t) > 0) by_type[OpTypeName(t)] = LatencySummary(s.latency[t]);
  }
  j["latency_us"] = by_type;
  if (!s.events.empty()) {
    Json events = Json::array();
    for (const EngineEvent& e : s.events) {
      const bool flush = e.kind == EngineEvent::Kind::kFlush;
      Json ev = {{"kind", flush ? "flush" : "merge"},
                 {"start_s", static_cast<double>(e.start_ns) * 1e-9},
                 {"end_s", static_cast<double>(e.end_ns) * 1e-9},
                 {"output_level", e.output_level},
                 {"output_bytes", e.output_bytes},
                 {"entries", e.entries}};
      if (flush && e.sealed_ns != 0) ev["sealed_s"] = static_cast<double>(e.sealed_ns) * 1e-9;
      if (!flush) {
        ev["deepest_input_level"] = e.deepest_input_level;
        ev["inputs"] = e.inputs;
        ev["input_bytes"] = e.input_bytes;
        ev["moved"] = e.moved;
      }
      events.push_back(std::move(ev));
    }
    j["events"] = std::move(events);
  }
  if (s.open_loop) {
    Json proc = Json::object();
    for (int t = 0; t < kNumOpTypes; t++) {
      if (InMix(config, t) || s.Ops(t) > 0) {
        proc[OpTypeName(t)] = LatencySummary(s.processing[t]);
      }
    }
    j["processing_latency_us"] = proc;
    j["queue"] = {{"length", s.queue_length},
                  {"max", s.queue_max},
                  {"arrivals", s.arrivals},
                  {"intended_rate", Rate(s.arrivals, secs)}};
  }
  if (config.queries.threads > 0) {
    Json q = Json::object();
    for (int t = 0; t < kNumQueryTypes; t++) {
      if (!QueryReported(config.queries, t)) continue;
      q[QueryTypeName(t)] = {{"ops", s.query[t].count()},
                             {"throughput", Rate(s.query[t].count(), secs)},
                             {"latency_us", LatencySummary(s.query[t])}};
    }
    j["queries"] = q;
  }
  j["errors"] = s.errors;
  j["engine"] = MetricsJson(s.engine);
  j["process"] = ProcessJson(s.process_start, s.process_end, secs, s.usable_cpus);
  return j;
}

Json SummaryJson(const RunConfig& config, const RunResult& r, const RunInfo& info) {
  Json j;
  j["schema"] = kSummarySchema;
  std::string status = "ok";
  if (!r.error.ok()) {
    status = "engine_error";
  } else if (r.interrupted) {
    status = "interrupted";
  }
  j["status"] = status;
  j["interrupted"] = r.interrupted;
  j["error"] = r.error.ok() ? Json(nullptr) : Json(r.error.ToString());
  j["exit_code"] = info.exit_code;
  j["phase"] = PhaseName(config);
  j["engine"] = config.engine;
  if (auto plugin = FindEnginePlugin(config.engine)) j["engine_plugin"] = PluginJson(*plugin);
  j["start_time_utc"] = info.start_time_utc;
  j["hostname"] = info.hostname;
  j["config"] = config.ToJson();
  if (config.settle_s > 0) {
    const SettleOutcome& o = info.settle;
    j["settle"] = {{"limit_s", o.limit_s},
                   {"supported", o.report.supported},
                   {"idle", o.report.idle},
                   {"waited_s", o.report.waited_s},
                   {"timed_out", o.timed_out},
                   {"flushes", o.flushes},
                   {"merges", o.merges},
                   {"detail", o.report.detail}};
  }
  j["elapsed_s"] = r.elapsed_s;
  // Ended early on request (SIGUSR1): a complete run, only shorter.
  j["ended_early"] = r.ended_early ? Json{{"at_s", r.ended_at_s}, {"duration_s", config.duration_s}}
                                   : Json(nullptr);
  j["interval_s"] = config.interval_ms / 1000.0;
  j["intervals"] = r.intervals;
  const double window_s = r.window_end_s - r.window_start_s;
  j["window"] = {{"start_s", r.window_start_s},
                 {"end_s", r.window_end_s},
                 {"duration_s", window_s},
                 {"intervals", r.window_intervals},
                 {"warmup_s", config.warmup_s}};

  const uint64_t* ops = r.window_ops;
  uint64_t total = 0, writes = 0;
  for (int t = 0; t < kNumOpTypes; t++) {
    total += ops[t];
    if (IsWrite(t)) writes += ops[t];
  }
  j["ops"] = OpsJson(config, ops);
  j["ops_total"] = OpsJson(config, r.total_ops);

  Json tput;
  tput["mean"] = Rate(total, window_s);
  tput["writes_mean"] = Rate(writes, window_s);
  Json by_type = Json::object();
  for (int t = 0; t < kNumOpTypes; t++) {
    if (InMix(config, t) || ops[t] > 0) by_type[OpTypeName(t)] = Rate(ops[t], window_s);
  }
  tput["by_type"] = by_type;
  const Json per_interval = MeanAndCv(r.interval_throughput);
  const Json per_interval_w = MeanAndCv(r.interval_write_throughput);
  tput["cv"] = per_interval["cv"];
  tput["writes_cv"] = per_interval_w["cv"];
  tput["interval_min"] = per_interval["min"];
  tput["interval_max"] = per_interval["max"];
  j["throughput"] = tput;
  if (config.phase == Phase::kTesting) {
    // The paper's maximum write throughput: the closed loop's mean write
    // rate over the window after the warm-up.
    j["max_write_throughput"] = Rate(writes, window_s);
  }

  Histogram write, write_proc;
  for (int t = 0; t < kNumOpTypes; t++) {
    if (!IsWrite(t)) continue;
    write.Merge(r.latency[t]);
    write_proc.Merge(r.processing[t]);
  }
  j["write_latency_us"] = LatencySummary(write);
  if (r.open_loop) {
    // How many of those latencies are lower bounds: writes that arrived but
    // had not completed when the phase ended (see RunResult::censored_ops).
    uint64_t censored_writes = 0;
    for (int t = 0; t < kNumOpTypes; t++) {
      if (IsWrite(t)) censored_writes += r.censored_ops[t];
    }
    j["write_latency_us"]["censored"] = censored_writes;
  }
  j["write_processing_latency_us"] = LatencySummary(write_proc);
  Json lat = Json::object(), proc = Json::object();
  for (int t = 0; t < kNumOpTypes; t++) {
    if (!(InMix(config, t) || ops[t] > 0)) continue;
    lat[OpTypeName(t)] = LatencySummary(r.latency[t]);
    proc[OpTypeName(t)] = LatencySummary(r.processing[t]);
  }
  j["latency_us"] = lat;
  j["processing_latency_us"] = proc;

  if (config.queries.threads > 0) {
    Json q;
    q["threads"] = config.queries.threads;
    for (int t = 0; t < kNumQueryTypes; t++) {
      if (!QueryReported(config.queries, t)) continue;
      q[QueryTypeName(t)] = {{"ops", r.window_query_ops[t]},
                             {"throughput", Rate(r.window_query_ops[t], window_s)},
                             {"latency_us", LatencySummary(r.query[t])}};
    }
    j["queries"] = q;
  }

  if (r.open_loop) {
    Json o;
    o["arrival"] = config.arrival.ToJson();
    o["nominal_rate"] = config.arrival.NominalRate();
    // Rates over the exact window in intended time: the arrivals in it and
    // how many of those were completed (in the window or the drain).
    o["window_s"] = r.exact_window_s;
    o["intended_arrivals"] = r.window_arrivals;
    o["intended_rate"] = Rate(r.window_arrivals, r.exact_window_s);
    o["completed_arrivals"] = r.window_arrivals_completed;
    o["achieved_rate"] = Rate(r.window_arrivals_completed, r.exact_window_s);
    o["drain"] = {{"limit_s", config.drain_s}, {"ops", r.drain_ops}, {"duration_s", r.drain_s}};
    o["total_arrivals"] = r.total_arrivals;
    o["max_queue_length"] = r.max_queue_length;
    o["window_max_queue_length"] = r.window_max_queue_length;
    o["final_queue_length"] = r.final_queue_length;
    o["final_backlog"] = r.final_backlog;
    o["oldest_queued_age_s"] = r.oldest_queued_age_s;
    Json censored = Json::object();
    for (int t = 0; t < kNumOpTypes; t++) {
      if (r.censored_ops[t] > 0) censored[OpTypeName(t)] = r.censored_ops[t];
    }
    o["censored_ops"] = censored;
    j["open_loop"] = o;
  }

  const uint64_t slow_ns = static_cast<uint64_t>(config.slow_ms * 1e6);
  // The window's engine figures end where its last measured interval does (a drain's
  // stalls and writes are not the window's); a run that measured no interval has the end.
  const Metrics& window_end = r.metrics_window_end.empty() ? r.metrics_end : r.metrics_window_end;
  j["stalls"] = {{"slow_ms", config.slow_ms},
                 {"slow_writes", write_proc.CountAtLeast(slow_ns)},
                 {"slow_write_latencies", write.CountAtLeast(slow_ns)},
                 {"zero_write_intervals", r.zero_write_intervals},
                 {"engine_stall_count", MetricDelta(r.metrics_window_start, window_end,
                                                    "stall_count")},
                 {"engine_stall_micros", MetricDelta(r.metrics_window_start, window_end,
                                                     "stall_micros")}};
  j["process"] = ProcessJson(r.process_window_start, r.process_window_end, window_s,
                             r.usable_cpus);
  j["engine_metrics"] = {{"window_start", MetricsJson(r.metrics_window_start)},
                         {"window_end", MetricsJson(window_end)},
                         {"end", MetricsJson(r.metrics_end)}};
  j["next_insert_id"] = r.next_insert_id;
  j["errors"] = r.errors;
  return j;
}

Json HistogramsJson(const RunConfig& config, const RunResult& r) {
  Json j;
  j["schema"] = kHistogramsSchema;
  j["phase"] = PhaseName(config);
  j["unit"] = "ns";
  j["bucketing"] = {{"scheme", "log-linear"},
                    {"exact_below", Histogram::kSubBuckets},
                    {"buckets_per_power_of_two", Histogram::kSubBuckets},
                    {"max_relative_error", Histogram::kMaxRelativeError}};
  j["window"] = {{"start_s", r.window_start_s}, {"end_s", r.window_end_s}};
  Json hs = Json::object();
  Histogram write, write_proc;
  for (int t = 0; t < kNumOpTypes; t++) {
    if (!IsWrite(t)) continue;
    write.Merge(r.latency[t]);
    write_proc.Merge(r.processing[t]);
  }
  hs["write_latency"] = HistogramJson(write);
  hs["write_processing_latency"] = HistogramJson(write_proc);
  for (int t = 0; t < kNumOpTypes; t++) {
    if (!(InMix(config, t) || r.latency[t].count() > 0)) continue;
    hs[std::string(OpTypeName(t)) + "_latency"] = HistogramJson(r.latency[t]);
    hs[std::string(OpTypeName(t)) + "_processing_latency"] = HistogramJson(r.processing[t]);
  }
  if (config.queries.threads > 0) {
    for (int t = 0; t < kNumQueryTypes; t++) {
      if (!QueryReported(config.queries, t)) continue;
      hs[std::string("query_") + QueryTypeName(t) + "_latency"] = HistogramJson(r.query[t]);
    }
  }
  j["histograms"] = hs;
  return j;
}

Status PrepareOutputDir(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("--out: empty output directory");
  // mkdir -p
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::InvalidArgument("--out " + dir + ": cannot create " + partial + ": " +
                                     std::strerror(errno));
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("--out " + dir + ": not a directory");
  }
  const std::string probe = dir + "/.lsm-driver-write-test";
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    return Status::InvalidArgument("--out " + dir + ": not writable: " + std::strerror(errno));
  }
  close(fd);
  unlink(probe.c_str());
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Status::IOError(tmp, std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const Status s = Status::IOError(tmp, std::strerror(errno));
      close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) return Status::IOError(tmp, std::strerror(errno));
  if (rename(tmp.c_str(), path.c_str()) != 0) return Status::IOError(path, std::strerror(errno));
  return Status::OK();
}

TimeseriesWriter::~TimeseriesWriter() {
  if (file_ != nullptr) fclose(file_);
}

Status TimeseriesWriter::Open(const std::string& dir) {
  dir_ = dir;
  const std::string path = dir + "/timeseries.jsonl.partial";
  file_ = fopen(path.c_str(), "w");
  if (file_ == nullptr) return Status::IOError(path, std::strerror(errno));
  return Status::OK();
}

Status TimeseriesWriter::Append(const Json& line) {
  if (file_ == nullptr || !error_.ok()) return error_;
  const std::string text = line.dump() + "\n";
  // One write per line, flushed: a live reader sees whole lines only.
  if (fwrite(text.data(), 1, text.size(), file_) != text.size() || fflush(file_) != 0) {
    error_ = Status::IOError(dir_ + "/timeseries.jsonl.partial", std::strerror(errno));
  }
  return error_;
}

Status TimeseriesWriter::Finish() {
  if (file_ == nullptr) return Status::IOError(dir_ + "/timeseries.jsonl.partial", "not open");
  if (fflush(file_) != 0 || fsync(fileno(file_)) != 0) {
    error_ = Status::IOError(dir_ + "/timeseries.jsonl.partial", std::strerror(errno));
  }
  fclose(file_);
  file_ = nullptr;
  if (!error_.ok()) return error_;
  const std::string from = dir_ + "/timeseries.jsonl.partial";
  const std::string to = dir_ + "/timeseries.jsonl";
  if (rename(from.c_str(), to.c_str()) != 0) return Status::IOError(to, std::strerror(errno));
  return Status::OK();
}

}  // namespace driver
}  // namespace lsmbench
