// An Env wrapper that makes flushes and merges pay the I/O budget and force
// their output periodically (Luo & Carey Sec. 3.1: 100 MB/s, fsync every
// 16 MB). The role of the I/O is the calling thread's IoPriority.
#ifndef LSM_SRC_ENV_IO_BUDGET_ENV_H_
#define LSM_SRC_ENV_IO_BUDGET_ENV_H_

#include <cstdint>
#include <memory>

#include "env/io_budget.h"
#include "lsm/env.h"

namespace lsm {

// Appends of at most this many bytes are charged at once, so a large append
// is paced smoothly instead of being admitted as one burst.
inline constexpr size_t kIoBudgetChargeBytes = 64 * 1024;

// Returns an Env forwarding to base (not owned; must outlive the result):
// - WritableFile::Append by a kFlush or kMerge thread charges budget (if not
//   null) with the thread's priority before handing the bytes on, in pieces
//   of at most kIoBudgetChargeBytes;
// - if force_bytes > 0, a file Syncs itself after every force_bytes bytes
//   appended by kFlush/kMerge threads since its last Sync (explicit or forced);
// - with charge_reads, RandomAccessFile/SequentialFile reads by kFlush/kMerge
//   threads charge the bytes read (after the read: the size is known then).
// kUser threads (the WAL, queries) are neither charged nor forced. Everything
// else (directories, clock, locks) is forwarded unchanged.
std::unique_ptr<Env> NewIoBudgetEnv(Env* base, std::shared_ptr<IoBudget> budget,
                                    uint64_t force_bytes, bool charge_reads);

}  // namespace lsm

#endif  // LSM_SRC_ENV_IO_BUDGET_ENV_H_
