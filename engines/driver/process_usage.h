// The driver process's own resource use, sampled at interval boundaries: the
// engine runs inside the driver, so its flushes', merges' and clients' disk
// traffic and CPU time are this process's.
//
// Disk bytes are the block layer's (/proc/self/io `read_bytes` and
// `write_bytes`, summed over every thread): reads the page cache served and
// writes to tmpfs count nothing, writes count when their pages are dirtied.
// CPU time is getrusage(RUSAGE_SELF): every thread, the client threads of the
// driver included.
//
// Device bytes are the process's cgroup counters, summed over devices: v2's
// `io.stat` (`rbytes`, `wbytes`: writeback included, v2 charges it to the
// cgroup that dirtied the pages), else v1's `blkio.throttle.io_service_bytes`
// (`Read`, `Write`: the bytes the blkio throttle passed, direct and synced
// writes; v1 charges background writeback to the root). They are this
// process's only when it runs alone in its cgroup, as lsmbench runs it under
// a throttle; the reader of the output decides (point.json's cgroup_backend).
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
  bool device_known = false;  // false outside a cgroup v2 of its own (the root)
  uint64_t device_read_bytes = 0;
  uint64_t device_write_bytes = 0;
  double cpu_user_s = 0;
  double cpu_system_s = 0;
};

// The process's cumulative usage now.
ProcessUsage ReadProcessUsage();

// Parses the text of /proc/<pid>/io; false unless both byte counters are in it.
bool ParseProcIo(const std::string& text, uint64_t* read_bytes, uint64_t* write_bytes);

// Parses a cgroup v2 io.stat ("MAJ:MIN rbytes=.. wbytes=.. ..." per device):
// the bytes summed over its devices; false unless a line has both counters.
bool ParseIoStat(const std::string& text, uint64_t* read_bytes, uint64_t* write_bytes);

// The cgroup v2 directory of /proc/self/cgroup's "0::PATH" under the cgroup2
// mount of /proc/self/mountinfo's text; "" for the root cgroup or without v2.
std::string CgroupV2Dir(const std::string& proc_cgroup, const std::string& mountinfo);

// Parses a cgroup v1 blkio.throttle.io_service_bytes ("MAJ:MIN Read N",
// "MAJ:MIN Write N", ... per device, then "Total N"): Read and Write summed
// over the devices; false unless a device has both.
bool ParseBlkioServiceBytes(const std::string& text, uint64_t* read_bytes,
                            uint64_t* write_bytes);

// The cgroup v1 blkio directory of /proc/self/cgroup's "N:blkio:PATH" (blkio
// possibly with other controllers) under its mount; "" for the root cgroup or
// without a blkio hierarchy.
std::string CgroupV1BlkioDir(const std::string& proc_cgroup, const std::string& mountinfo);

// The CPUs this process may run on (its affinity mask; at least 1).
int UsableCpus();

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_PROCESS_USAGE_H_
