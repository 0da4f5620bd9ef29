// Settling before a phase (run.json settle_s): the tree a load or an earlier
// phase left often has a flush or a big merge still to do, and measuring
// during it gives that transient rather than the steady state. So, before the
// phase's clock starts, the driver waits until the engine has no flush or
// merge pending or running (KvAdapter::Settle), for at most settle_s.
#ifndef LSMBENCH_DRIVER_SETTLE_H_
#define LSMBENCH_DRIVER_SETTLE_H_

#include <atomic>
#include <cstdint>

#include "adapters/adapter.h"

namespace lsmbench {
namespace driver {

struct SettleOutcome {
  double limit_s = 0;
  SettleReport report;       // supported, idle, waited_s (the whole wait), detail
  bool timed_out = false;    // supported, and still not idle at the limit
  bool interrupted = false;  // the stop signal ended the wait first
  // The flushes and merges the engine told that completed during the wait:
  // taken out of the engine's events, so that the phase's first interval
  // does not show them (with times before its start).
  uint64_t flushes = 0;
  uint64_t merges = 0;
};

// Waits at most limit_s (> 0) until adapter's engine is idle. The wait goes
// in slices of a quarter second, so that a nonzero *stop_signal (SIGINT,
// SIGTERM) ends it soon. An engine error (a failed flush or merge) is
// returned.
Status SettleEngine(KvAdapter* adapter, double limit_s, const std::atomic<int>* stop_signal,
                    SettleOutcome* out);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_SETTLE_H_
