// The driver process's own resource use, sampled at interval boundaries: the
// engine runs inside the driver, so its flushes', merges' and clients' disk
// traffic and CPU time are this process's.
//
// Disk bytes are the block layer's (/proc/self/io `read_bytes` and
// `write_bytes`, summed over every thread): reads the page cache served and
// writes to tmpfs count nothing, writes count when their pages are dirtied.
// CPU time is getrusage(RUSAGE_SELF): every thread, the client threads of the
// driver included.
#ifndef LSMBENCH_DRIVER_PROCESS_USAGE_H_
#define LSMBENCH_DRIVER_PROCESS_USAGE_H_

#include <cstdint>
#include <string>

namespace lsmbench {
namespace driver {

struct ProcessUsage {
  bool disk_known = false;  // false where the kernel keeps no I/O accounting
  uint64_t disk_read_bytes = 0;
  uint64_t disk_write_bytes = 0;
  double cpu_user_s = 0;
  double cpu_system_s = 0;
};

// The process's cumulative usage now.
ProcessUsage ReadProcessUsage();

// Parses the text of /proc/<pid>/io; false unless both byte counters are in it.
bool ParseProcIo(const std::string& text, uint64_t* read_bytes, uint64_t* write_bytes);

// The CPUs this process may run on (its affinity mask; at least 1).
int UsableCpus();

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_PROCESS_USAGE_H_
