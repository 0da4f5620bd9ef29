#include "driver/settle.h"

#include <algorithm>

#include "driver/runner.h"

namespace lsmbench {
namespace driver {

Status SettleEngine(KvAdapter* adapter, double limit_s, const std::atomic<int>* stop_signal,
                    SettleOutcome* out) {
  constexpr double kSliceS = 0.25;
  *out = SettleOutcome();
  out->limit_s = limit_s;
  const int64_t start = NowNs();
  Status s;
  for (;;) {
    const double remaining = limit_s - static_cast<double>(NowNs() - start) * 1e-9;
    s = adapter->Settle(std::clamp(remaining, 0.0, kSliceS), &out->report);
    if (!s.ok() || !out->report.supported || out->report.idle || remaining <= kSliceS) break;
    if (stop_signal != nullptr && stop_signal->load() != 0) {
      out->interrupted = true;
      break;
    }
  }
  if (out->report.supported) {
    out->report.waited_s = static_cast<double>(NowNs() - start) * 1e-9;
  }
  out->timed_out = s.ok() && out->report.supported && !out->report.idle && !out->interrupted;
  for (const EngineEvent& e : adapter->TakeEvents()) {
    (e.kind == EngineEvent::Kind::kFlush ? out->flushes : out->merges)++;
  }
  return s;
}

}  // namespace driver
}  // namespace lsmbench
