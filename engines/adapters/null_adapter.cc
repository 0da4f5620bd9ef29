#include "adapters/null_adapter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "adapters/option_parser.h"

namespace lsmbench {

namespace {

using Clock = std::chrono::steady_clock;
using Nanos = std::chrono::nanoseconds;

struct NullConfig {
  double service_time_us = 0;
  double pause_every_ms = 0;
  double pause_at_ms = -1;  // < 0: no one-shot pause
  double pause_ms = 0;
  bool get_hits = false;
  uint64_t value_bytes = 100;
};

// A day: long enough for any run, short enough that nanosecond arithmetic
// never overflows.
constexpr int64_t kMaxMs = 24 * 3600 * 1000;

const std::vector<OptionSpec<NullConfig>>& NullOptionTable() {
  using C = NullConfig;
  static const std::vector<OptionSpec<C>> table = {
      Bool<&C::get_hits>("get_hits", "Every Get finds its key (else NotFound)."),
      Real<0, kMaxMs, &C::pause_at_ms>("pause_at_ms", "ms",
                                        "One pause of pause_ms this long after the open (default: none)."),
      Real<0, kMaxMs, &C::pause_every_ms>("pause_every_ms", "ms",
                                           "A pause of pause_ms every this long after the open; 0: none."),
      Real<0, kMaxMs, &C::pause_ms>("pause_ms", "ms",
                                     "Length of a pause, during which every operation waits."),
      Real<0, kMaxMs * 1000, &C::service_time_us>(
          "service_time_us", "us", "Time each operation takes (busy-waiting, one at a time)."),
      Size<0, 64 << 20, &C::value_bytes>("value_bytes", "bytes", "Size of the value Get returns."),
  };
  return table;
}

Status Validate(const NullConfig& c) {
  if (c.pause_every_ms > 0 && !(c.pause_ms > 0 && c.pause_ms < c.pause_every_ms)) {
    return Status::InvalidArgument(
        "engine option 'pause_every_ms': needs 0 < pause_ms < pause_every_ms");
  }
  if (c.pause_at_ms >= 0 && !(c.pause_ms > 0)) {
    return Status::InvalidArgument("engine option 'pause_at_ms': needs pause_ms > 0");
  }
  if (c.pause_ms > 0 && c.pause_every_ms == 0 && c.pause_at_ms < 0) {
    return Status::InvalidArgument(
        "engine option 'pause_ms': needs pause_every_ms or pause_at_ms");
  }
  return Status::OK();
}

int64_t MsToNanos(double ms) { return static_cast<int64_t>(ms * 1e6 + 0.5); }

// Waits until deadline. Sleeping is coarse (the scheduler adds tens to
// hundreds of microseconds), so long waits sleep until shortly before the
// deadline and every wait ends in a spin on the steady clock.
void WaitUntil(Clock::time_point deadline) {
  constexpr auto kSpinMargin = std::chrono::microseconds(200);
  if (deadline - Clock::now() > 5 * kSpinMargin) {
    std::this_thread::sleep_until(deadline - kSpinMargin);
  }
  while (Clock::now() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

// Thread-safe: the configuration is immutable after open, the counters are
// atomic.
class NullAdapter final : public KvAdapter {
 public:
  explicit NullAdapter(const NullConfig& c)
      : open_(Clock::now()),
        service_(Nanos(static_cast<int64_t>(c.service_time_us * 1e3 + 0.5))),
        every_ns_(MsToNanos(c.pause_every_ms)),
        at_ns_(c.pause_at_ms < 0 ? -1 : MsToNanos(c.pause_at_ms)),
        pause_ns_(MsToNanos(c.pause_ms)),
        get_hits_(c.get_hits),
        value_(c.value_bytes, 'v') {}

  Status Put(std::string_view, std::string_view) override {
    Serve();
    return Status::OK();
  }
  Status Delete(std::string_view) override {
    Serve();
    return Status::OK();
  }
  Status Get(std::string_view, std::string* value) override {
    Serve();
    if (!get_hits_) return Status::NotFound("null engine");  // short: no allocation
    value->assign(value_);
    return Status::OK();
  }
  Status Scan(std::string_view, size_t count, size_t* returned) override {
    Serve();
    *returned = count;
    return Status::OK();
  }

  Metrics GetMetrics() override {
    const int64_t t = (Clock::now() - open_).count();
    uint64_t pauses = 0;
    int64_t pause_ns = 0;
    if (every_ns_ > 0) {
      const int64_t k = t / every_ns_;  // pauses begun
      if (k >= 1) {
        pauses += static_cast<uint64_t>(k);
        pause_ns += (k - 1) * pause_ns_ + std::min(pause_ns_, t - k * every_ns_);
      }
    }
    if (at_ns_ >= 0 && t >= at_ns_) {
      pauses += 1;
      pause_ns += std::min(pause_ns_, t - at_ns_);
    }
    return Metrics{
        {"ops", static_cast<double>(ops_.load(std::memory_order_relaxed))},
        {"paused_ops", static_cast<double>(paused_ops_.load(std::memory_order_relaxed))},
        {"pauses", static_cast<double>(pauses)},
        {"pause_micros", static_cast<double>(pause_ns) / 1e3},
    };
  }

  // Nothing is stored, so nothing is ever flushed or merged.
  Status Settle(double /*timeout_s*/, SettleReport* report) override {
    *report = SettleReport();
    report->supported = true;
    report->idle = true;
    report->detail = "the null engine stores nothing: no flushes or merges";
    return Status::OK();
  }

  Status Close() override { return Status::OK(); }

 private:
  // The end (ns since open) of the pause containing t, or -1.
  int64_t PauseEnd(int64_t t) const {
    int64_t end = -1;
    if (every_ns_ > 0 && t >= every_ns_) {
      const int64_t start = t / every_ns_ * every_ns_;
      if (t - start < pause_ns_) end = start + pause_ns_;
    }
    if (at_ns_ >= 0 && t >= at_ns_ && t - at_ns_ < pause_ns_) {
      end = std::max(end, at_ns_ + pause_ns_);
    }
    return end;
  }

  // One operation: wait out a pause the arrival falls into, then the service
  // time. Deadlines are computed from the schedule, not from when this thread
  // woke up, so a late wake-up does not lengthen the modelled service.
  void Serve() {
    const Clock::time_point arrival = Clock::now();
    Clock::time_point start = arrival;
    if (pause_ns_ > 0) {
      int64_t t = (arrival - open_).count();
      bool paused = false;
      // Loop: one pause may end inside the other schedule's pause.
      for (int64_t end; (end = PauseEnd(t)) >= 0;) {
        t = end;
        paused = true;
      }
      if (paused) {
        paused_ops_.fetch_add(1, std::memory_order_relaxed);
        start = open_ + Nanos(t);
      }
    }
    if (start != arrival || service_.count() > 0) WaitUntil(start + service_);
    ops_.fetch_add(1, std::memory_order_relaxed);
  }

  const Clock::time_point open_;
  const Nanos service_;
  const int64_t every_ns_;  // 0: no periodic pauses
  const int64_t at_ns_;     // < 0: no one-shot pause
  const int64_t pause_ns_;
  const bool get_hits_;
  const std::string value_;
  std::atomic<uint64_t> ops_{0};
  std::atomic<uint64_t> paused_ops_{0};
};

}  // namespace

Status OpenNullAdapter(const std::string& /*dir*/, const AdapterOptions& options,
                       std::unique_ptr<KvAdapter>* adapter) {
  NullConfig config;
  Status s = ApplyOptions(NullOptionTable(), options, &config);
  if (s.ok()) s = Validate(config);
  if (!s.ok()) return s;
  *adapter = std::make_unique<NullAdapter>(config);
  return Status::OK();
}

std::vector<OptionDescription> DescribeNullOptions() {
  return Describe(NullOptionTable(), NullConfig());
}

Status CheckNullOptions(const AdapterOptions& options) {
  NullConfig config;
  Status s = ApplyOptions(NullOptionTable(), options, &config);
  return s.ok() ? Validate(config) : s;
}

}  // namespace lsmbench
