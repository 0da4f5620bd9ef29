#include "adapters/settle_poll.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace lsmbench {

Status PollUntilIdle(double timeout_s, const std::function<Status(BackgroundWork*)>& probe,
                     SettleReport* report) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kPeriod = std::chrono::milliseconds(10);
  *report = SettleReport();
  report->supported = true;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::max(0.0, timeout_s)));
  int quiet = 0;  // looks in a row that found nothing pending or running
  int looks = 0;
  uint64_t completed = 0;
  Status s;
  for (;;) {
    BackgroundWork w;
    s = probe(&w);
    if (!s.ok()) break;
    looks++;
    // A flush or merge that completed since the last look means work went
    // on in between, even if neither look saw it.
    quiet = w.busy ? 0 : (quiet > 0 && w.completed != completed) ? 1 : quiet + 1;
    completed = w.completed;
    report->detail = w.detail;
    const Clock::time_point now = Clock::now();
    if (quiet >= 2 || now >= deadline) break;
    std::this_thread::sleep_until(std::min(now + kPeriod, deadline));
  }
  report->idle = s.ok() && (quiet >= 2 || (quiet == 1 && looks == 1));
  report->waited_s = std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

}  // namespace lsmbench
