#include "driver/arrival.h"

#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace lsmbench {
namespace driver {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<std::string>& InterarrivalNames() {
  static const std::vector<std::string> names = {"fixed", "exponential"};
  return names;
}

// Time at which the cumulative rate reaches x ("arrival mass" x).
class RateProfile {
 public:
  virtual ~RateProfile() = default;
  // Called with non-decreasing x.
  virtual double Inverse(double x) = 0;
};

class ConstantProfile : public RateProfile {
 public:
  explicit ConstantProfile(double rate) : rate_(rate) {}
  double Inverse(double x) override { return x / rate_; }

 private:
  const double rate_;
};

class BurstProfile : public RateProfile {
 public:
  BurstProfile(double rate, double per_burst, double idle_s)
      : rate_(rate), per_burst_(per_burst), period_(per_burst / rate + idle_s) {}
  double Inverse(double x) override {
    const double k = std::floor(x / per_burst_);
    return k * period_ + (x - k * per_burst_) / rate_;
  }

 private:
  const double rate_;
  const double per_burst_;
  const double period_;
};

class TraceProfile : public RateProfile {
 public:
  TraceProfile(const std::vector<TracePoint>& points, double scale) {
    double mass = 0;
    for (size_t i = 0; i < points.size(); i++) {
      if (i > 0) mass += rates_.back() * (points[i].time_s - points[i - 1].time_s);
      times_.push_back(points[i].time_s);
      rates_.push_back(points[i].rate * scale);
      mass_.push_back(mass);
    }
  }
  double Inverse(double x) override {
    while (i_ + 1 < times_.size() && mass_[i_ + 1] <= x) i_++;
    if (rates_[i_] <= 0) return kInf;
    return times_[i_] + (x - mass_[i_]) / rates_[i_];
  }

 private:
  std::vector<double> times_, rates_, mass_;
  size_t i_ = 0;
};

// Piecewise constant: f at the start of each interval, clipped at 0, held for
// the interval.
class SineProfile : public RateProfile {
 public:
  SineProfile(const ArrivalSpec& spec, uint64_t seed)
      : spec_(spec), scale_(spec.SineScale()), step_s_(spec.sine_interval_ms / 1000),
        band_(spec.sine_a >= 1 ? static_cast<uint64_t>(spec.sine_a) : 0),
        rng_(Hash64(seed, 0x73696e65)) {
    rate_ = StepRate();
  }
  double Inverse(double x) override {
    // Sampled once per interval, a wave can be at or below 0 at every sample
    // (sine_b * interval a multiple of 2 pi): then no request ever arrives.
    constexpr uint64_t kMaxIdleSteps = 1 << 20;
    uint64_t idle = 0;
    while (x >= mass_ + rate_ * step_s_) {
      if (rate_ <= 0 && ++idle > kMaxIdleSteps) return kInf;
      mass_ += rate_ * step_s_;
      step_++;
      rate_ = StepRate();
    }
    return step_ * step_s_ + (x - mass_) / rate_;
  }

 private:
  double StepRate() {
    const double t = step_ * step_s_;
    double f = spec_.sine_a * std::sin(spec_.sine_b * t + spec_.sine_c) + spec_.sine_d;
    if (band_ > 0 && spec_.sine_noise > 0) {
      f += (static_cast<double>(rng_.Uniform(band_)) - static_cast<double>(band_ / 2)) *
           spec_.sine_noise;
    }
    return std::max(f, 0.0) * scale_;
  }

  const ArrivalSpec spec_;
  const double scale_;
  const double step_s_;
  const uint64_t band_;  // db_bench's noise band: sine_a as an integer
  Rng rng_;
  double mass_ = 0;  // arrivals before this step
  double rate_ = 0;
  uint64_t step_ = 0;
};

// The trace's own time stamps, from its first replayed op, over the speed.
class ReplayProcess : public ArrivalProcess {
 public:
  explicit ReplayProcess(const ArrivalSpec& spec)
      : spec_(spec), first_us_(spec.replay ? spec.replay->first_us : 0),
        speed_(spec.ReplaySpeed()) {
    ok_ = spec.replay && Reopen();
    if (ok_) {
      // A repeat starts one mean gap after the last op of the pass before.
      const TraceMeasure& m = *spec.replay;
      pass_us_ = static_cast<double>(m.span_us) +
                 (m.ops > 1 ? static_cast<double>(m.span_us) / static_cast<double>(m.ops - 1) : 1);
    }
  }
  double Next() override {
    TraceOp op;
    int type = 0;
    while (ok_) {
      while (reader_->Next(&op)) {
        if (!ReplayType(op.kind, &type)) continue;
        const double us = op.timestamp_us > first_us_ ? double(op.timestamp_us - first_us_) : 0;
        return (passes_ * pass_us_ + us) / 1e6 / speed_;
      }
      ok_ = spec_.replay_repeat && reader_->status().ok() && Reopen();
      passes_++;
    }
    return kInf;
  }

 private:
  bool Reopen() {
    reader_ = std::make_unique<RocksDbTraceReader>();
    return reader_->Open(spec_.replay->path).ok();
  }

  const ArrivalSpec spec_;
  std::unique_ptr<RocksDbTraceReader> reader_;
  const uint64_t first_us_;
  const double speed_;
  double pass_us_ = 0;
  double passes_ = 0;
  bool ok_ = false;
};

class ProfileProcess : public ArrivalProcess {
 public:
  ProfileProcess(std::unique_ptr<RateProfile> profile, bool exponential, uint64_t seed)
      : profile_(std::move(profile)), exponential_(exponential), rng_(Hash64(seed, 0xa771)) {}
  double Next() override {
    double x;
    if (exponential_) {
      mass_ += -std::log1p(-rng_.UniformDouble());
      x = mass_;
    } else {
      x = static_cast<double>(n_++);
    }
    return profile_->Inverse(x);
  }

 private:
  std::unique_ptr<RateProfile> profile_;
  const bool exponential_;
  Rng rng_;
  double mass_ = 0;
  uint64_t n_ = 0;
};

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && isspace(static_cast<unsigned char>(s[b]))) b++;
  while (e > b && isspace(static_cast<unsigned char>(s[e - 1]))) e--;
  return s.substr(b, e - b);
}

bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *out = strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(*out);
}

bool FileExists(const std::string& path) {
  std::ifstream f(path);
  return f.good();
}

}  // namespace

const std::vector<std::string>& ArrivalFields() {
  static const std::vector<std::string> names = {
      "process", "rate", "interarrival", "burst_s", "burst_count", "idle_s", "trace_file",
      "rate_scale", "sine_a", "sine_b", "sine_c", "sine_d",
      "sine_mix_rate_interval_milliseconds", "sine_mix_rate_noise", "speed"};
  return names;
}

const std::vector<std::string>& ProcessNames() {
  static const std::vector<std::string> names = {"constant", "poisson", "bursts", "trace",
                                                 "sine", "replay"};
  return names;
}

int64_t SecondsToNs(double s) {
  const double ns = s * 1e9;
  if (!(ns < 9.2e18)) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::llround(ns));
}

double ArrivalSpec::NominalRate() const {
  switch (process) {
    case Process::kConstant:
    case Process::kPoisson:
      return rate;
    case Process::kBursts: {
      const double per_burst = burst_count > 0 ? static_cast<double>(burst_count) : rate * burst_s;
      return per_burst / (per_burst / rate + idle_s);
    }
    case Process::kTrace:
      return 0;
    case Process::kSine:
      return sine_d * SineScale();
    case Process::kReplay:
      return replay ? replay->NativeRate() * ReplaySpeed() : 0;
  }
  return 0;
}

double ArrivalSpec::ReplaySpeed() const {
  if (rate > 0 && replay && replay->NativeRate() > 0) return rate / replay->NativeRate();
  return speed;
}

Json ArrivalSpec::ToJson() const {
  Json j;
  j["process"] = ProcessNames()[static_cast<int>(process)];
  j["interarrival"] = InterarrivalNames()[static_cast<int>(interarrival)];
  if (process == Process::kTrace) {
    j["trace_file"] = trace_file;
    j["rate_scale"] = rate_scale;
    j["trace_points"] = trace.size();
  } else if ((process != Process::kSine && process != Process::kReplay) || rate > 0) {
    j["rate"] = rate;
  }
  if (process == Process::kReplay && rate <= 0) j["speed"] = speed;
  if (process == Process::kSine) {
    j["sine_a"] = sine_a;
    j["sine_b"] = sine_b;
    j["sine_c"] = sine_c;
    j["sine_d"] = sine_d;
    j["sine_mix_rate_interval_milliseconds"] = sine_interval_ms;
    j["sine_mix_rate_noise"] = sine_noise;
  }
  if (process == Process::kBursts) {
    if (burst_count > 0) {
      j["burst_count"] = burst_count;
    } else {
      j["burst_s"] = burst_s;
    }
    j["idle_s"] = idle_s;
  }
  return j;
}

Status ParseTrace(const std::string& text, const std::string& name,
                  std::vector<TracePoint>* out) {
  out->clear();
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  bool seen_data = false;
  while (std::getline(in, line)) {
    line_no++;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = Trim(line);
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const std::string where = name + " line " + std::to_string(line_no) + ": ";
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) {
      return Status::InvalidArgument(where + "expected two columns: time_s,rate");
    }
    double t = 0, r = 0;
    const bool ok = ParseNumber(Trim(line.substr(0, comma)), &t) &&
                    ParseNumber(Trim(line.substr(comma + 1)), &r);
    if (!ok) {
      if (!seen_data && out->empty()) {  // a header line
        seen_data = true;
        continue;
      }
      return Status::InvalidArgument(where + "not a pair of numbers: '" + line + "'");
    }
    seen_data = true;
    if (t < 0 || r < 0) {
      return Status::InvalidArgument(where + "time and rate must be >= 0");
    }
    if (!out->empty() && t <= out->back().time_s) {
      return Status::InvalidArgument(where + "times must increase");
    }
    out->push_back({t, r});
  }
  if (out->empty()) return Status::InvalidArgument(name + ": no data rows (time_s,rate)");
  return Status::OK();
}

namespace {

const char* const kSineFields[] = {"sine_a", "sine_b", "sine_c", "sine_d",
                                   "sine_mix_rate_interval_milliseconds",
                                   "sine_mix_rate_noise"};

Status ParseSine(const JsonObject& obj, const std::string& pname, ArrivalSpec* spec) {
  if (spec->process != ArrivalSpec::Process::kSine) {
    for (const char* f : kSineFields) {
      if (obj.Has(f)) return obj.Error(f, "not allowed with process " + pname + " (only with sine)");
    }
    return Status::OK();
  }
  Status s = obj.GetDouble("sine_a", -1e300, 1e300, &spec->sine_a);
  if (s.ok()) s = obj.GetDouble("sine_b", -1e300, 1e300, &spec->sine_b);
  if (s.ok()) s = obj.GetDouble("sine_c", -1e300, 1e300, &spec->sine_c);
  if (s.ok()) s = obj.GetDouble("sine_d", -1e300, 1e300, &spec->sine_d);
  if (s.ok()) {
    s = obj.GetDouble("sine_mix_rate_interval_milliseconds", 1, 86400e3, &spec->sine_interval_ms);
  }
  if (s.ok()) s = obj.GetDouble("sine_mix_rate_noise", 0, 1, &spec->sine_noise);
  if (!s.ok()) return s;
  const double peak = spec->sine_b == 0 ? spec->sine_a * std::sin(spec->sine_c) + spec->sine_d
                                        : spec->sine_d + std::fabs(spec->sine_a);
  if (!(peak > 0)) {
    return obj.Error("sine_d", "with sine_a..c, the rate sine_a*sin(sine_b*x + sine_c) + sine_d "
                               "is never above 0: no request would arrive");
  }
  if (spec->rate > 0 && !(spec->sine_d > 0)) {
    return obj.Error("sine_d", "must be > 0 with a rate: the rate sets the wave's mean, sine_d");
  }
  return Status::OK();
}

}  // namespace

Status ParseArrival(const Json& json, const std::string& path,
                    const std::vector<std::string>& search_dirs, ArrivalSpec* out) {
  JsonObject obj;
  Status s = JsonObject::Open(json, path, ArrivalFields(), &obj);
  if (!s.ok()) return s;
  ArrivalSpec spec;
  spec.present = true;
  s = obj.Required("process");
  if (!s.ok()) return s;
  size_t process = 0;
  s = obj.GetChoice("process", ProcessNames(), &process);
  if (!s.ok()) return s;
  spec.process = static_cast<ArrivalSpec::Process>(process);
  const std::string& pname = ProcessNames()[process];

  auto only_for = [&](const std::string& field, const std::string& which) -> Status {
    if (obj.Has(field)) {
      return obj.Error(field, "not allowed with process " + pname + " (only with " + which + ")");
    }
    return Status::OK();
  };

  // Rate: required except for traces (and optional for a sine and a replay).
  const bool rate_optional = spec.process == ArrivalSpec::Process::kSine ||
                             spec.process == ArrivalSpec::Process::kReplay;
  if (spec.process == ArrivalSpec::Process::kTrace) {
    s = only_for("rate", "constant, poisson, bursts, sine, replay");
  } else if (!rate_optional || obj.Has("rate")) {
    s = obj.Required("rate");
    if (s.ok()) s = obj.GetDouble("rate", -1e300, 1e300, &spec.rate);
    if (s.ok() && !(spec.rate > 0)) {
      s = obj.Error("rate", "must be > 0 requests/s (got " + obj.Raw("rate").dump() + ")");
    }
    if (s.ok() && spec.rate > 1e9) s = obj.Error("rate", "must be <= 1e9 requests/s");
  }
  if (!s.ok()) return s;

  spec.interarrival = spec.process == ArrivalSpec::Process::kPoisson
                          ? ArrivalSpec::Interarrival::kExponential
                          : ArrivalSpec::Interarrival::kFixed;
  size_t ia = static_cast<size_t>(spec.interarrival);
  s = obj.GetChoice("interarrival", InterarrivalNames(), &ia);
  if (!s.ok()) return s;
  spec.interarrival = static_cast<ArrivalSpec::Interarrival>(ia);
  if (spec.process == ArrivalSpec::Process::kPoisson &&
      spec.interarrival != ArrivalSpec::Interarrival::kExponential) {
    return obj.Error("interarrival", "a poisson process has exponential inter-arrival times");
  }

  if (spec.process == ArrivalSpec::Process::kBursts) {
    if (obj.Has("burst_s") == obj.Has("burst_count")) {
      return Status::InvalidArgument(obj.PathOf("burst_s") + " / " + obj.PathOf("burst_count") +
                                     ": give exactly one (bursts in time or in count)");
    }
    s = obj.GetDouble("burst_s", -1e300, 1e300, &spec.burst_s);
    if (s.ok() && obj.Has("burst_s") && !(spec.burst_s > 0)) {
      s = obj.Error("burst_s", "must be > 0 seconds");
    }
    if (s.ok()) s = obj.GetUint("burst_count", 1, UINT64_MAX, &spec.burst_count);
    if (s.ok()) s = obj.Required("idle_s");
    if (s.ok()) s = obj.GetDouble("idle_s", 0, 1e300, &spec.idle_s);
    if (!s.ok()) return s;
  } else {
    for (const char* f : {"burst_s", "burst_count", "idle_s"}) {
      s = only_for(f, "bursts");
      if (!s.ok()) return s;
    }
  }

  if (spec.process == ArrivalSpec::Process::kTrace) {
    s = obj.Required("trace_file");
    if (s.ok()) s = obj.GetString("trace_file", &spec.trace_file);
    if (s.ok()) s = obj.GetDouble("rate_scale", -1e300, 1e300, &spec.rate_scale);
    if (s.ok() && !(spec.rate_scale > 0)) s = obj.Error("rate_scale", "must be > 0");
    if (!s.ok()) return s;
    std::string resolved = spec.trace_file;
    if (!resolved.empty() && resolved[0] != '/') {
      for (const auto& dir : search_dirs) {
        const std::string candidate = dir.empty() ? resolved : dir + "/" + resolved;
        if (FileExists(candidate)) {
          resolved = candidate;
          break;
        }
      }
    }
    std::ifstream in(resolved);
    if (!in) {
      return obj.Error("trace_file", "cannot read '" + spec.trace_file + "' (" +
                                         std::strerror(errno) + ")");
    }
    std::stringstream buf;
    buf << in.rdbuf();
    s = ParseTrace(buf.str(), spec.trace_file, &spec.trace);
    if (!s.ok()) return obj.Error("trace_file", ErrorText(s));
    spec.trace_file = resolved;
  } else {
    for (const char* f : {"trace_file", "rate_scale"}) {
      s = only_for(f, "trace");
      if (!s.ok()) return s;
    }
  }
  s = ParseSine(obj, pname, &spec);
  if (!s.ok()) return s;
  if (spec.process == ArrivalSpec::Process::kReplay) {
    if (obj.Has("rate") && obj.Has("speed")) {
      return obj.Error("speed", "give a speed or a rate, not both (a rate sets the speed)");
    }
    if (obj.Has("interarrival")) {
      return obj.Error("interarrival", "not with replay, which arrives at the trace's own time "
                                       "stamps");
    }
    s = obj.GetDouble("speed", -1e300, 1e300, &spec.speed);
    if (s.ok() && !(spec.speed > 0)) s = obj.Error("speed", "must be > 0");
    if (!s.ok()) return s;
  } else {
    s = only_for("speed", "replay");
    if (!s.ok()) return s;
  }
  *out = std::move(spec);
  return Status::OK();
}

std::unique_ptr<ArrivalProcess> NewArrivalProcess(const ArrivalSpec& spec, uint64_t seed) {
  if (spec.process == ArrivalSpec::Process::kReplay) return std::make_unique<ReplayProcess>(spec);
  std::unique_ptr<RateProfile> profile;
  switch (spec.process) {
    case ArrivalSpec::Process::kConstant:
    case ArrivalSpec::Process::kPoisson:
      profile = std::make_unique<ConstantProfile>(spec.rate);
      break;
    case ArrivalSpec::Process::kBursts: {
      const double per_burst =
          spec.burst_count > 0 ? static_cast<double>(spec.burst_count) : spec.rate * spec.burst_s;
      profile = std::make_unique<BurstProfile>(spec.rate, per_burst, spec.idle_s);
      break;
    }
    case ArrivalSpec::Process::kTrace:
      profile = std::make_unique<TraceProfile>(spec.trace, spec.rate_scale);
      break;
    case ArrivalSpec::Process::kSine:
      profile = std::make_unique<SineProfile>(spec, seed);
      break;
    case ArrivalSpec::Process::kReplay:
      break;  // above
  }
  return std::make_unique<ProfileProcess>(
      std::move(profile), spec.interarrival == ArrivalSpec::Interarrival::kExponential, seed);
}

void SpinLock::Lock() {
  for (int spins = 0;; spins++) {
    if (!locked_.load(std::memory_order_relaxed) &&
        !locked_.exchange(true, std::memory_order_acquire)) {
      return;
    }
    // A holder that lost its CPU would keep us spinning for a whole time
    // slice on a machine with few cores: yield after a short spin.
    if (spins < 64) {
      _mm_pause();
    } else {
      std::this_thread::yield();
    }
  }
}

ArrivalQueue::ArrivalQueue(std::unique_ptr<ArrivalProcess> process, int64_t end_ns,
                           uint64_t max_requests)
    : process_(std::move(process)), end_ns_(end_ns), max_requests_(max_requests) {
  Advance();
}

void ArrivalQueue::Advance() {
  if (next_seq_ >= max_requests_) {
    next_ns_ = -1;
    return;
  }
  const double t = process_->Next();
  const int64_t ns = t < kInf ? SecondsToNs(t) : -1;
  next_ns_ = (ns < 0 || ns >= end_ns_) ? -1 : ns;
}

bool ArrivalQueue::Claim(uint64_t* seq, int64_t* intended_ns) {
  lock_.Lock();
  if (next_ns_ < 0) {
    lock_.Unlock();
    return false;
  }
  *seq = next_seq_++;
  *intended_ns = next_ns_;
  Advance();
  lock_.Unlock();
  return true;
}

uint64_t ArrivalQueue::claimed() {
  lock_.Lock();
  const uint64_t n = next_seq_;
  lock_.Unlock();
  return n;
}

int64_t ArrivalQueue::PeekNext() {
  lock_.Lock();
  const int64_t t = next_ns_;
  lock_.Unlock();
  return t;
}

int64_t ArrivalQueue::EndNow(const std::function<int64_t()>& now) {
  lock_.Lock();
  end_ns_ = std::min(end_ns_, now());
  if (next_ns_ >= end_ns_) next_ns_ = -1;
  const int64_t end = end_ns_;
  lock_.Unlock();
  return end;
}

bool ArrivalQueue::BeforeEnd(int64_t intended_ns) {
  lock_.Lock();
  const bool before = intended_ns < end_ns_;
  lock_.Unlock();
  return before;
}

ArrivalCounter::ArrivalCounter(std::unique_ptr<ArrivalProcess> process, int64_t end_ns,
                               uint64_t max_requests)
    : process_(std::move(process)), end_ns_(end_ns), max_requests_(max_requests) {
  const double t = max_requests_ > 0 ? process_->Next() : kInf;
  pending_ns_ = t < kInf ? SecondsToNs(t) : -1;
  if (pending_ns_ >= end_ns_) pending_ns_ = -1;
}

void ArrivalCounter::Step() {
  count_++;
  if (count_ >= max_requests_) {
    pending_ns_ = -1;
    return;
  }
  const double t = process_->Next();
  pending_ns_ = t < kInf ? SecondsToNs(t) : -1;
  if (pending_ns_ >= end_ns_) pending_ns_ = -1;
}

uint64_t ArrivalCounter::CountUpTo(int64_t t_ns) {
  while (pending_ns_ >= 0 && pending_ns_ <= t_ns) Step();
  return count_;
}

int64_t ArrivalCounter::TimeOf(uint64_t seq) {
  while (count_ < seq && pending_ns_ >= 0) Step();
  return count_ == seq ? pending_ns_ : -1;
}

void ArrivalCounter::EndAt(int64_t end_ns) {
  end_ns_ = std::min(end_ns_, end_ns);
  if (pending_ns_ >= end_ns_) pending_ns_ = -1;
}

}  // namespace driver
}  // namespace lsmbench
