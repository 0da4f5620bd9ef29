#include "adapters/plugin_adapter.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "adapters/settle_poll.h"
#include "lsm/option_values.h"
#include "lsmbench/engine_plugin.h"

namespace lsmbench {

namespace {

using lsm::OptionKind;

int64_t MonotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// --------------------------------------------------------------- crashes

// The call into the plugin this thread is in (nullptr: none), for the crash
// message. One store before and one after each call.
thread_local const char* t_call = nullptr;

struct CallScope {
  explicit CallScope(const char* what) { t_call = what; }
  ~CallScope() { t_call = nullptr; }
};

// Preformatted at load: a signal handler may not format.
char g_crash_prefix[512];
size_t g_crash_prefix_size = 0;

void WriteAll(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void WriteText(const char* s) { WriteAll(s, strlen(s)); }

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "a signal";
  }
}

void OnCrash(int sig) {
  WriteAll(g_crash_prefix, g_crash_prefix_size);
  WriteText(SignalName(sig));
  if (t_call != nullptr) {
    WriteText(" during its ");
    WriteText(t_call);
    WriteText("\n");
  } else {
    WriteText(" outside any call into it (one of the plugin's own threads, or the driver)\n");
  }
  // SA_RESETHAND restored the default action: the process ends by this
  // signal, as a caller expects.
  raise(sig);
}

void SetCrashPrefix(const std::string& label) {
  const int n = snprintf(g_crash_prefix, sizeof(g_crash_prefix), "lsm-driver: %s: ",
                         label.c_str());
  g_crash_prefix_size = std::min(static_cast<size_t>(std::max(n, 0)), sizeof(g_crash_prefix) - 1);
}

// Installed before dlopen, so that a runtime the plugin brings (Go's) finds
// it and forwards the faults of foreign code to it.
void InstallCrashHandlers(const std::string& label) {
  SetCrashPrefix(label);
  static std::once_flag once;
  std::call_once(once, [&] {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnCrash;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(sig, &sa, nullptr);
  });
}

// --------------------------------------------------------------- codes

struct Message;

Status FromCode(const std::string& label, const char* call, int code, Message& m);

Status FromCodeText(const std::string& label, const char* call, int code,
                    const std::string& text) {
  const std::string what = label + ": " + call;
  switch (code) {
    case LSMBENCH_OK: return Status::OK();
    case LSMBENCH_NOT_FOUND: return Status::NotFound(what, text);
    case LSMBENCH_NOT_SUPPORTED: return Status::NotSupported(what, text);
    case LSMBENCH_INVALID_ARGUMENT: return Status::InvalidArgument(what, text);
    case LSMBENCH_IO_ERROR: return Status::IOError(what, text);
    case LSMBENCH_CORRUPTION: return Status::Corruption(what, text);
    case LSMBENCH_FAILED: return Status::IOError(what, text.empty() ? "failed" : text);
    default:
      return Status::Corruption(what, "returned " + std::to_string(code) +
                                          ", not an lsmbench_code (0-6)");
  }
}

// A call's message buffer: cleared at its start only, NUL-terminated when read (a plugin
// that forgot the NUL), so that a successful call touches one byte of it.
struct Message {
  Message() { m.text[0] = '\0'; }
  lsmbench_message m;
  lsmbench_message* get() { return &m; }
  const char* text() {
    m.text[sizeof(m.text) - 1] = '\0';
    return m.text;
  }
};

Status FromCode(const std::string& label, const char* call, int code, Message& m) {
  return code == LSMBENCH_OK ? Status::OK() : FromCodeText(label, call, code, m.text());
}

std::vector<std::string> SplitChoices(const char* choices) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(choices == nullptr ? "" : choices);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

OptionKind KindOf(uint32_t kind) {
  switch (kind) {
    case LSMBENCH_OPTION_BOOL: return OptionKind::kBool;
    case LSMBENCH_OPTION_INT: return OptionKind::kInt;
    case LSMBENCH_OPTION_SIZE: return OptionKind::kSize;
    case LSMBENCH_OPTION_REAL: return OptionKind::kReal;
    default: return OptionKind::kChoice;
  }
}

// value in canonical form (engine_plugin.h), or InvalidArgument naming it.
Status CanonicalValue(const OptionDescription& o, const std::string& value, std::string* out) {
  switch (o.kind) {
    case OptionKind::kBool: {
      bool b = false;
      Status s = lsm::ParseBool(o.name, value, &b);
      if (s.ok()) *out = b ? "true" : "false";
      return s;
    }
    case OptionKind::kInt: {
      int64_t v = 0;
      Status s = lsm::ParseInt64(o.name, value, static_cast<int64_t>(o.min),
                                 static_cast<int64_t>(o.max), &v);
      if (s.ok()) *out = std::to_string(v);
      return s;
    }
    case OptionKind::kSize: {
      uint64_t v = 0;
      Status s = lsm::ParseSize(o.name, value, static_cast<uint64_t>(o.min),
                                static_cast<uint64_t>(o.max), &v);
      if (s.ok()) *out = std::to_string(v);
      return s;
    }
    case OptionKind::kReal: {
      double v = 0;
      Status s = lsm::ParseReal(o.name, value, o.min, o.max, &v);
      if (s.ok()) *out = value;
      return s;
    }
    case OptionKind::kChoice: {
      size_t i = 0;
      Status s = lsm::ParseChoice(o.name, value, o.choices, &i);
      if (s.ok()) *out = o.choices[i];
      return s;
    }
  }
  return Status::InvalidArgument(o.name, "unknown kind");
}

// The table's entries, checked: a plugin's table is its author's input.
Status ReadOptionTable(const std::string& label, const lsmbench_engine_api& api,
                       std::vector<OptionDescription>* out) {
  if (api.option_count > 0 && api.options == nullptr) {
    return Status::InvalidArgument(label, "option_count is " + std::to_string(api.option_count) +
                                              " but options is NULL");
  }
  static const std::regex kName("[a-z0-9_.]+");
  for (size_t i = 0; i < api.option_count; i++) {
    const lsmbench_option& o = api.options[i];
    const std::string at = label + ": option table entry " + std::to_string(i);
    if (o.name == nullptr || !std::regex_match(o.name, kName)) {
      return Status::InvalidArgument(at, "name must be [a-z0-9_.]+");
    }
    const std::string named = label + ": option '" + o.name + "'";
    for (const OptionDescription& seen : *out) {
      if (seen.name == o.name) return Status::InvalidArgument(named, "appears twice");
    }
    if (o.kind > LSMBENCH_OPTION_CHOICE) {
      return Status::InvalidArgument(named, "kind " + std::to_string(o.kind) +
                                                " is not an lsmbench_option_kind (0-4)");
    }
    OptionDescription d;
    d.name = o.name;
    d.kind = KindOf(o.kind);
    d.min = o.min;
    d.max = o.max;
    d.unit = o.unit != nullptr ? o.unit : "";
    d.doc = o.doc != nullptr ? o.doc : "";
    if (d.kind == OptionKind::kChoice) {
      d.choices = SplitChoices(o.choices);
      if (d.choices.empty()) return Status::InvalidArgument(named, "a choice with no choices");
    } else if (d.kind != OptionKind::kBool && !(std::isfinite(o.min) && std::isfinite(o.max) &&
                                                o.min <= o.max)) {
      return Status::InvalidArgument(named, "needs a finite range with min <= max");
    }
    const std::string def = o.default_value != nullptr ? o.default_value : "";
    if (!def.empty()) {
      Status s = CanonicalValue(d, def, &d.default_text);
      if (!s.ok()) {
        return Status::InvalidArgument(named, "its default: " + lsm::ErrorMessage(s));
      }
    }
    out->push_back(std::move(d));
  }
  return Status::OK();
}

// --------------------------------------------------------------- the adapter

struct ValueSink {
  std::string* out;
  bool called = false;
  static void Take(void* context, const char* value, size_t size) {
    auto* self = static_cast<ValueSink*>(context);
    self->out->assign(value, size);
    self->called = true;
  }
};

struct MetricSink {
  Metrics* out;
  std::string bad;  // the first bad metric
  static void Take(void* context, const char* name, double value) {
    auto* self = static_cast<MetricSink*>(context);
    if (name == nullptr || *name == '\0') {
      if (self->bad.empty()) self->bad = "a metric with no name";
    } else if (!std::isfinite(value)) {
      if (self->bad.empty()) self->bad = std::string("metric '") + name + "' is not finite";
    } else {
      (*self->out)[name] = value;
    }
  }
};

// kLookLimitS, or LSMBENCH_PLUGIN_LOOK_LIMIT_S (seconds > 0: for tests that
// hang a plugin on purpose).
double LookLimitS() {
  const char* env = getenv("LSMBENCH_PLUGIN_LOOK_LIMIT_S");
  const double v = env != nullptr ? strtod(env, nullptr) : 0.0;
  return v > 0 && std::isfinite(v) ? v : kLookLimitS;
}

// A look (metrics, take_events, background_work) that is under way: when it
// began, 0 when none is.
class LookWatch {
 public:
  explicit LookWatch(std::string label) : label_(std::move(label)) {
    thread_ = std::thread([this] { Watch(); });
  }
  ~LookWatch() {
    stop_.store(true);
    thread_.join();
  }
  // kMetrics, kEvents, kWork: one slot each, as they may overlap.
  enum Slot { kMetrics, kEvents, kWork, kSlots };
  void Begin(Slot s) { since_[s].store(MonotonicNs(), std::memory_order_relaxed); }
  void End(Slot s) { since_[s].store(0, std::memory_order_relaxed); }

 private:
  void Watch() {
    static const char* const kNames[kSlots] = {"metrics", "take_events", "background_work"};
    const double limit_s = LookLimitS();
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t now = MonotonicNs();
      for (int s = 0; s < kSlots; s++) {
        const int64_t since = since_[s].load(std::memory_order_relaxed);
        if (since != 0 && now - since > static_cast<int64_t>(limit_s * 1e9)) {
          fprintf(stderr, "lsm-driver: %s: %s did not return within %g s (a hang); stopping\n",
                  label_.c_str(), kNames[s], limit_s);
          fflush(stderr);
          _exit(1);
        }
      }
    }
  }

  const std::string label_;
  std::atomic<int64_t> since_[kSlots] = {};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class PluginKvAdapter : public KvAdapter {
 public:
  PluginKvAdapter(const lsmbench_engine_api* api, lsmbench_engine* engine, std::string label)
      : api_(api), engine_(engine), label_(label), watch_(label) {}

  ~PluginKvAdapter() override {
    if (engine_ != nullptr) Close();
  }

  Status Put(std::string_view key, std::string_view value) override {
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    CallScope scope("put");
    const int code = api_->put(engine_, key.data(), key.size(), value.data(), value.size(),
                               m.get());
    return code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "put", code, m);
  }

  Status Delete(std::string_view key) override {
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    CallScope scope("del");
    const int code = api_->del(engine_, key.data(), key.size(), m.get());
    return code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "del", code, m);
  }

  Status Get(std::string_view key, std::string* value) override {
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    ValueSink sink{value};
    CallScope scope("get");
    const int code = api_->get(engine_, key.data(), key.size(), ValueSink::Take, &sink, m.get());
    if (code == LSMBENCH_OK && !sink.called) {
      return Fail("get returned LSMBENCH_OK without handing over a value");
    }
    return code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "get", code, m);
  }

  Status Scan(std::string_view start, size_t count, size_t* returned) override {
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    *returned = 0;
    CallScope scope("scan");
    const int code = api_->scan(engine_, start.data(), start.size(), count, returned, m.get());
    if (code == LSMBENCH_OK && *returned > count) {
      return Fail("scan read " + std::to_string(*returned) + " entries of the " +
                  std::to_string(count) + " asked for");
    }
    return code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "scan", code, m);
  }

  Status PutRecord(std::string_view key, const std::vector<uint64_t>& fields,
                   std::string_view value) override {
    if (api_->put_record == nullptr) return KvAdapter::PutRecord(key, fields, value);
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    CallScope scope("put_record");
    const int code = api_->put_record(engine_, key.data(), key.size(), fields.data(),
                                      fields.size(), value.data(), value.size(), m.get());
    return code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "put_record", code, m);
  }

  Status QuerySecondary(int field, uint64_t low, uint64_t high, size_t* returned) override {
    if (api_->query_secondary == nullptr) {
      return KvAdapter::QuerySecondary(field, low, high, returned);
    }
    if (failed_.load(std::memory_order_relaxed)) return Failure();
    Message m;
    *returned = 0;
    CallScope scope("query_secondary");
    const int code = api_->query_secondary(engine_, static_cast<uint32_t>(field), low, high,
                                           returned, m.get());
    return code == LSMBENCH_OK ? Status::OK()
                               : FromCode(label_, "query_secondary", code, m);
  }

  Metrics GetMetrics() override {
    Metrics out;
    if (api_->metrics == nullptr) return out;
    Message m;
    MetricSink sink{&out, ""};
    watch_.Begin(LookWatch::kMetrics);
    int code;
    {
      CallScope scope("metrics");
      code = api_->metrics(engine_, MetricSink::Take, &sink, m.get());
    }
    watch_.End(LookWatch::kMetrics);
    if (!sink.bad.empty()) {
      Fail("metrics: " + sink.bad);
    } else if (code != LSMBENCH_OK) {
      Latch(FromCode(label_, "metrics", code, m));
    }
    return out;
  }

  std::vector<EngineEvent> TakeEvents() override {
    std::vector<EngineEvent> out;
    if (api_->take_events == nullptr) return out;
    constexpr size_t kBatch = 256;
    lsmbench_event batch[kBatch];
    for (;;) {
      watch_.Begin(LookWatch::kEvents);
      size_t n;
      {
        CallScope scope("take_events");
        n = api_->take_events(engine_, batch, kBatch);
      }
      watch_.End(LookWatch::kEvents);
      if (n > kBatch) {
        Fail("take_events returned " + std::to_string(n) + " events into room for " +
             std::to_string(kBatch));
        return out;
      }
      const int64_t now = MonotonicNs();
      for (size_t i = 0; i < n; i++) {
        EngineEvent e;
        const std::string bad = Convert(batch[i], now, &e);
        if (!bad.empty()) {
          Fail("bad event " + std::to_string(i + 1) + " of " + std::to_string(n) + " (" +
               Describe(batch[i]) + "): " + bad);
          return out;
        }
        last_end_ns_ = e.end_ns;
        out.push_back(e);
      }
      if (n < kBatch) return out;
    }
  }

  Status Settle(double timeout_s, SettleReport* report) override {
    if (api_->background_work == nullptr) return KvAdapter::Settle(timeout_s, report);
    bool unsupported = false;
    Status s = PollUntilIdle(timeout_s, [&](BackgroundWork* w) { return Look(w, &unsupported); },
                             report);
    if (unsupported) {
      *report = SettleReport();
      report->detail = label_ + " cannot tell its pending flushes and merges";
      return Status::OK();
    }
    return s;
  }

  Status Close() override {
    if (engine_ == nullptr) return Status::OK();
    Message m;
    int code;
    {
      CallScope scope("close");
      code = api_->close(engine_, m.get());
    }
    engine_ = nullptr;
    Status s = code == LSMBENCH_OK ? Status::OK() : FromCode(label_, "close", code, m);
    return failed_.load() ? Failure() : s;
  }

 private:
  Status Look(BackgroundWork* w, bool* unsupported) {
    lsmbench_work work;
    memset(&work, 0, sizeof(work));
    Message m;
    watch_.Begin(LookWatch::kWork);
    int code;
    {
      CallScope scope("background_work");
      code = api_->background_work(engine_, &work, m.get());
    }
    watch_.End(LookWatch::kWork);
    if (code == LSMBENCH_NOT_SUPPORTED) {
      *unsupported = true;
      return Status::NotSupported("background_work");  // ends the poll
    }
    if (code != LSMBENCH_OK) return FromCode(label_, "background_work", code, m);
    w->busy = work.flushes_pending + work.flushes_running + work.merges_pending +
                  work.merges_running > 0;
    w->completed = work.completed;
    w->detail = "flushes pending " + std::to_string(work.flushes_pending) + ", running " +
                std::to_string(work.flushes_running) + "; merges pending " +
                std::to_string(work.merges_pending) + ", running " +
                std::to_string(work.merges_running);
    return Status::OK();
  }

  // "" and *out set, or what is wrong with the event.
  // An event as the plugin handed it over, for the message that refuses it.
  static std::string Describe(const lsmbench_event& in) {
    std::ostringstream d;
    d << (in.kind == LSMBENCH_EVENT_FLUSH   ? "flush"
          : in.kind == LSMBENCH_EVENT_MERGE ? "merge"
                                            : "kind " + std::to_string(in.kind))
      << ", levels " << in.deepest_input_level << " -> " << in.output_level << ", inputs "
      << in.inputs << ", start_ns " << in.start_ns << ", end_ns " << in.end_ns;
    return d.str();
  }

  std::string Convert(const lsmbench_event& in, int64_t now, EngineEvent* out) const {
    std::ostringstream why;
    const bool flush = in.kind == LSMBENCH_EVENT_FLUSH;
    if (!flush && in.kind != LSMBENCH_EVENT_MERGE) {
      why << "kind " << in.kind << " is neither LSMBENCH_EVENT_FLUSH nor _MERGE";
    } else if (in.start_ns <= 0 || in.end_ns < in.start_ns) {
      why << "start_ns " << in.start_ns << ", end_ns " << in.end_ns
          << ": needs 0 < start_ns <= end_ns";
    } else if (in.end_ns > now) {
      why << "end_ns " << in.end_ns << " is after now (" << now
          << "): times must be CLOCK_MONOTONIC nanoseconds";
    } else if (in.end_ns < last_end_ns_) {
      why << "out of completion order: end_ns " << in.end_ns << " before the previous event's "
          << last_end_ns_;
    } else if (in.output_level < 0 || in.output_level > 64 || in.deepest_input_level < 0 ||
               in.deepest_input_level > 64) {
      why << "levels " << in.deepest_input_level << " -> " << in.output_level
          << " outside [0, 64]";
    } else if (flush && (in.output_level != 0 || in.sealed_ns > in.start_ns)) {
      why << "a flush needs output_level 0 and sealed_ns <= start_ns";
    } else if (!flush && (in.inputs == 0 || in.output_level < in.deepest_input_level)) {
      why << "a merge needs inputs >= 1 and output_level >= deepest_input_level";
    }
    if (!why.str().empty()) return why.str();
    out->kind = flush ? EngineEvent::Kind::kFlush : EngineEvent::Kind::kMerge;
    out->start_ns = in.start_ns;
    out->end_ns = in.end_ns;
    out->sealed_ns = flush ? in.sealed_ns : 0;
    out->output_level = in.output_level;
    out->deepest_input_level = in.deepest_input_level;
    out->inputs = in.inputs;
    out->input_bytes = in.input_bytes;
    out->output_bytes = in.output_bytes;
    out->entries = in.entries;
    out->moved = (in.flags & LSMBENCH_EVENT_MOVED) != 0;
    return "";
  }

  // The plugin handed over garbage: every call from now on fails with it,
  // so that the phase ends with the reason.
  Status Fail(const std::string& why) {
    Latch(Status::Corruption(label_, why));
    return Failure();
  }
  void Latch(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.load()) {
      failure_ = s;
      failed_.store(true);
    }
  }
  Status Failure() {
    std::lock_guard<std::mutex> lock(mu_);
    return failure_;
  }

  const lsmbench_engine_api* api_;
  lsmbench_engine* engine_;
  const std::string label_;
  int64_t last_end_ns_ = 0;  // take_events: one caller at a time (the sampler)
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  Status failure_;
  LookWatch watch_;
};

}  // namespace

std::string PluginLabel(const std::string& name) { return "engine plugin '" + name + "'"; }

Status EnginePlugin::Load(const std::string& path, std::shared_ptr<const EnginePlugin>* out) {
  const std::string at = "engine plugin " + path;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::InvalidArgument(at, "no such file");
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(at, "not a regular file");
  InstallCrashHandlers(at);
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return Status::InvalidArgument(at, std::string("not a loadable shared object: ") +
                                           (e != nullptr ? e : "dlopen failed"));
  }
  // Never dlclose'd: the plugin's threads and atexit handlers may outlive us.
  auto entry = reinterpret_cast<lsmbench_engine_plugin_fn>(
      dlsym(handle, LSMBENCH_ENGINE_PLUGIN_SYMBOL));
  if (entry == nullptr) {
    return Status::InvalidArgument(at, "exports no function " LSMBENCH_ENGINE_PLUGIN_SYMBOL
                                       " (see engines/plugin/include/lsmbench/engine_plugin.h)");
  }
  const lsmbench_engine_api* api = entry();
  if (api == nullptr) return Status::InvalidArgument(at, LSMBENCH_ENGINE_PLUGIN_SYMBOL "() returned NULL");
  if (api->abi_version != LSMBENCH_ENGINE_ABI_VERSION) {
    return Status::InvalidArgument(
        at, "ABI version " + std::to_string(api->abi_version) + "; this lsm-driver speaks " +
                std::to_string(LSMBENCH_ENGINE_ABI_VERSION));
  }
  std::string sizes;
  auto size_check = [&](const char* what, uint32_t got, size_t want) {
    if (got != want) {
      sizes += std::string(sizes.empty() ? "" : ", ") + what + " " + std::to_string(got) +
               " (expected " + std::to_string(want) + ")";
    }
  };
  size_check("api_size", api->api_size, sizeof(lsmbench_engine_api));
  size_check("option_size", api->option_size, sizeof(lsmbench_option));
  size_check("event_size", api->event_size, sizeof(lsmbench_event));
  size_check("work_size", api->work_size, sizeof(lsmbench_work));
  size_check("write_size", api->write_size, sizeof(lsmbench_write));
  if (!sizes.empty()) {
    return Status::InvalidArgument(at, "struct sizes " + sizes +
                                           ": built against another engine_plugin.h");
  }
  static const std::regex kName("[a-z][a-z0-9_-]*");
  if (api->name == nullptr || !std::regex_match(api->name, kName)) {
    return Status::InvalidArgument(at, "its name must be [a-z][a-z0-9_-]*");
  }
  const std::string label = PluginLabel(api->name) + " (" + path + ")";
  SetCrashPrefix(label);
  std::vector<std::string> missing;
  if (api->open == nullptr) missing.push_back("open");
  if (api->close == nullptr) missing.push_back("close");
  if (api->put == nullptr) missing.push_back("put");
  if (api->del == nullptr) missing.push_back("del");
  if (api->get == nullptr) missing.push_back("get");
  if (api->scan == nullptr) missing.push_back("scan");
  if (api->options_open != 0 && api->check_options == nullptr) {
    missing.push_back("check_options (options_open is set)");
  }
  if (!missing.empty()) {
    return Status::InvalidArgument(label, "missing required function" +
                                              std::string(missing.size() > 1 ? "s: " : ": ") +
                                              lsm::JoinNames(missing));
  }
  if ((api->put_record == nullptr) != (api->query_secondary == nullptr)) {
    return Status::InvalidArgument(label, "put_record and query_secondary: both or neither");
  }
  std::shared_ptr<EnginePlugin> plugin(new EnginePlugin());
  Status s = ReadOptionTable(label, *api, &plugin->options_);
  if (!s.ok()) return s;
  plugin->api_ = api;
  plugin->path_ = path;
  plugin->name_ = api->name;
  plugin->version_ = api->version != nullptr ? api->version : "";
  *out = std::move(plugin);
  return Status::OK();
}

std::vector<std::string> EnginePlugin::CannotTell() const {
  std::vector<std::string> out;
  if (api_->take_events == nullptr) out.push_back("events");
  if (api_->background_work == nullptr) out.push_back("settle");
  if (api_->metrics == nullptr) out.push_back("metrics");
  return out;
}

uint32_t EnginePlugin::abi_version() const { return api_->abi_version; }

bool EnginePlugin::options_open() const { return api_->options_open != 0; }

bool EnginePlugin::HasSecondaryIndexes() const { return api_->put_record != nullptr; }

std::vector<OptionDescription> EnginePlugin::Describe() const { return options_; }

void EnginePlugin::Canonical(const AdapterOptions& options, std::vector<std::string>* names,
                             std::vector<std::string>* values,
                             std::vector<std::string>* problems) const {
  std::vector<std::string> known;
  for (const OptionDescription& o : options_) known.push_back(o.name);
  for (const auto& [name, value] : options) {
    auto it = std::find_if(options_.begin(), options_.end(),
                           [&](const OptionDescription& o) { return o.name == name; });
    std::string canonical = value;  // an open table's unlisted option: as written
    Status s = it != options_.end() ? CanonicalValue(*it, value, &canonical)
               : api_->options_open != 0 ? Status::OK()
                                         : lsm::UnknownOption(name, known);
    if (!s.ok()) {
      problems->push_back(lsm::ErrorMessage(s));
      continue;
    }
    names->push_back(name);
    values->push_back(canonical);
  }
}

namespace {

Status OptionProblems(const std::string& label, const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::OK();
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  return Status::InvalidArgument(label, text);
}

}  // namespace

Status EnginePlugin::Canonical(const AdapterOptions& options, std::vector<std::string>* names,
                               std::vector<std::string>* values) const {
  std::vector<std::string> problems;
  Canonical(options, names, values, &problems);
  return OptionProblems(PluginLabel(name_), problems);
}

namespace {

std::vector<const char*> Pointers(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

}  // namespace

Status EnginePlugin::CheckOptions(const AdapterOptions& options) const {
  std::vector<std::string> names, values, problems;
  Canonical(options, &names, &values, &problems);
  // The options the table passed go to the plugin's own check even when others failed it,
  // so that one answer names the problems of both.
  if (api_->check_options == nullptr || names.empty()) {
    return OptionProblems(PluginLabel(name_), problems);
  }
  Message m;
  const auto n = Pointers(names), v = Pointers(values);
  int code;
  {
    CallScope scope("check_options");
    code = api_->check_options(n.data(), v.data(), n.size(), m.get());
  }
  // Whatever the code, a refusal here is about the options: the user's input.
  if (code != LSMBENCH_OK) {
    problems.push_back(std::string(m.text()).empty() ? "check_options refused the options"
                                                     : m.text());
  }
  return OptionProblems(PluginLabel(name_), problems);
}

Status EnginePlugin::Open(const std::string& dir, const AdapterOptions& options,
                          int secondary_indexes, std::unique_ptr<KvAdapter>* adapter) const {
  if (secondary_indexes > 0 && !HasSecondaryIndexes()) {
    return Status::InvalidArgument(PluginLabel(name_), "keeps no secondary indexes");
  }
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  std::vector<std::string> names, values;
  Canonical(options, &names, &values);
  const auto n = Pointers(names), v = Pointers(values);
  Message m;
  lsmbench_engine* engine = nullptr;
  int code;
  {
    CallScope scope("open");
    code = api_->open(dir.c_str(), n.data(), v.data(), n.size(),
                      static_cast<uint32_t>(secondary_indexes), &engine, m.get());
  }
  const std::string label = PluginLabel(name_);
  if (code != LSMBENCH_OK) return FromCode(label, "open", code, m);
  if (engine == nullptr) return Status::Corruption(label, "open returned OK and no engine");
  adapter->reset(new PluginKvAdapter(api_, engine, label));
  return Status::OK();
}

}  // namespace lsmbench
