// Open-loop arrival processes and the implicit request queue.
//
// An arrival process is a deterministic function of (spec, seed): it yields
// the intended arrival times of requests 0, 1, 2, ... in order. Every process
// is a rate profile r(t) (constant, on/off bursts, or a trace) combined with
// an inter-arrival law: "fixed" places arrival n at the time the cumulative
// rate reaches n; "exponential" at the time it reaches a sum of n+1 unit
// exponentials (a Poisson process, non-homogeneous when r varies).
//
// The queue is implicit: writers claim the next request (its sequence number
// and intended time) under a tiny lock, wait until the intended time, and
// execute it. Nothing is stored per queued request; the queue length at time
// t is (arrivals with intended time <= t) - (requests started), which the
// sampler computes with its own copy of the same process (ArrivalCounter).
#ifndef LSMBENCH_DRIVER_ARRIVAL_H_
#define LSMBENCH_DRIVER_ARRIVAL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/json_reader.h"
#include "driver/random.h"
#include "driver/trace_workload.h"

namespace lsmbench {
namespace driver {

struct TracePoint {
  double time_s;
  double rate;  // requests/s from time_s until the next point
};

struct ArrivalSpec {
  enum class Process { kConstant, kPoisson, kBursts, kTrace, kSine, kReplay };
  enum class Interarrival { kFixed, kExponential };

  bool present = false;  // an arrival section was given
  Process process = Process::kConstant;
  Interarrival interarrival = Interarrival::kFixed;
  double rate = 0;              // requests/s (within bursts for kBursts)
  double burst_s = 0;           // bursts in time: length of a burst ...
  uint64_t burst_count = 0;     // ... or bursts in count: requests per burst
  double idle_s = 0;            // idle time between bursts
  std::string trace_file;       // CSV "time_s,rate" (kTrace), resolved path
  double rate_scale = 1.0;      // multiplies the trace's rates
  std::vector<TracePoint> trace;  // loaded from trace_file
  // kSine: db_bench's sine-wave load, f(x) = sine_a * sin(sine_b * x + sine_c)
  // + sine_d requests/s at x seconds into the phase, held for
  // sine_mix_rate_interval_milliseconds at a time (db_bench recomputes its
  // rate limit that often), plus a uniform noise of +- sine_a / 2 times
  // sine_mix_rate_noise. With `rate` given the wave is scaled so that its
  // mean, sine_d, is `rate`.
  double sine_a = 1, sine_b = 1, sine_c = 0, sine_d = 1;
  double sine_interval_ms = 10000;
  double sine_noise = 0;
  double SineScale() const { return rate > 0 ? rate / sine_d : 1.0; }
  // kReplay: the workload's RocksDB trace at its own time stamps, `speed`
  // times as fast; a `rate` (requests/s) sets the speed to rate over the
  // trace's own rate. The run configuration sets `replay` from the
  // workload's trace.
  double speed = 1.0;
  std::shared_ptr<const TraceMeasure> replay;
  bool replay_repeat = false;  // the workload's rocksdb_trace_repeat
  double ReplaySpeed() const;

  // Mean rate over a long time (for reports); 0 for traces; sine_d (scaled)
  // for a sine.
  double NominalRate() const;
  Json ToJson() const;
};

const std::vector<std::string>& ArrivalFields();
const std::vector<std::string>& ProcessNames();

// Parses an "arrival" object (path names it in errors). Relative trace paths
// are resolved against each of `search_dirs` in turn. Loads the trace.
Status ParseArrival(const Json& json, const std::string& path,
                    const std::vector<std::string>& search_dirs, ArrivalSpec* out);

// Parses the text of a trace CSV.
Status ParseTrace(const std::string& text, const std::string& name, std::vector<TracePoint>* out);

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // Intended time, in seconds from the start, of the next request;
  // non-decreasing; +infinity once the profile has no more arrivals.
  virtual double Next() = 0;
};

std::unique_ptr<ArrivalProcess> NewArrivalProcess(const ArrivalSpec& spec, uint64_t seed);

// A test-and-test-and-set lock for critical sections of a few nanoseconds.
class SpinLock {
 public:
  void Lock();
  void Unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// The claim side of the implicit queue. Thread-safe.
class ArrivalQueue {
 public:
  // Arrivals at or after end_ns, and beyond max_requests, are never issued.
  ArrivalQueue(std::unique_ptr<ArrivalProcess> process, int64_t end_ns, uint64_t max_requests);

  // The next request in arrival order: false once there are none left.
  bool Claim(uint64_t* seq, int64_t* intended_ns);
  // Intended time of the first request not yet claimed; -1 if none is left.
  int64_t PeekNext();
  // Requests claimed so far.
  uint64_t claimed();
  // Ends the arrivals early, at now() (never later than the end given at
  // construction): no request intended at or after it is issued from then
  // on. now() is read under the claim lock, so a claim either comes before
  // that moment and saw the old end, or comes after it and sees the new one.
  // Returns the end.
  int64_t EndNow(const std::function<int64_t()>& now);
  // Whether a request already claimed, intended at intended_ns, is before
  // the end: decided under the claim lock, like EndNow.
  bool BeforeEnd(int64_t intended_ns);

 private:
  void Advance();  // REQUIRES: lock_ held

  SpinLock lock_;
  std::unique_ptr<ArrivalProcess> process_;
  int64_t end_ns_;  // GUARDED_BY(lock_)
  const uint64_t max_requests_;
  uint64_t next_seq_ = 0;
  int64_t next_ns_ = -1;  // -1: exhausted
};

// Counts arrivals by time with its own copy of the process (sampler only;
// not thread-safe). Times passed to CountUpTo must not decrease.
class ArrivalCounter {
 public:
  ArrivalCounter(std::unique_ptr<ArrivalProcess> process, int64_t end_ns, uint64_t max_requests);
  uint64_t CountUpTo(int64_t t_ns);
  // Intended time of the request with sequence number `seq` (>= the number
  // counted so far), advancing the copy; -1 if it never arrives.
  int64_t TimeOf(uint64_t seq);
  // Ends the arrivals early, at end_ns (as ArrivalQueue::EndNow). REQUIRES:
  // end_ns is later than every time counted so far.
  void EndAt(int64_t end_ns);

 private:
  void Step();  // consumes the pending arrival

  std::unique_ptr<ArrivalProcess> process_;
  int64_t end_ns_;
  const uint64_t max_requests_;
  uint64_t count_ = 0;     // arrivals consumed
  int64_t pending_ns_;     // time of arrival number count_, -1 if none
};

int64_t SecondsToNs(double s);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_ARRIVAL_H_
