// Settling by looking (KvAdapter::Settle): the wait that the adapters whose
// engine can tell its background work share.
#ifndef LSMBENCH_ADAPTERS_SETTLE_POLL_H_
#define LSMBENCH_ADAPTERS_SETTLE_POLL_H_

#include <cstdint>
#include <functional>
#include <string>

#include "adapters/adapter.h"

namespace lsmbench {

// One look at an engine's background work.
struct BackgroundWork {
  bool busy = false;       // a flush or merge pending or running
  uint64_t completed = 0;  // flushes and merges completed so far
  std::string detail;      // what was seen, in words
};

// Looks (probe) every 10 ms until the engine is idle or timeout_s has
// passed. Idle takes two looks in a row that find nothing pending or
// running and no flush or merge completed in between: an engine may show
// nothing for a moment between installing a flush and creating the merge it
// calls for (the builtin engine's stats are not taken under its mutex, so
// they can show that moment). Any limit > 0 leaves time for two looks (the
// second at the limit if need be); with a limit of 0 the one look decides.
// A probe's error ends the wait and is returned.
Status PollUntilIdle(double timeout_s, const std::function<Status(BackgroundWork*)>& probe,
                     SettleReport* report);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_SETTLE_POLL_H_
