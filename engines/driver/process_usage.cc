#include "driver/process_usage.h"

#include <sched.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lsmbench {
namespace driver {

namespace {

double Seconds(const struct timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

bool ParseProcIo(const std::string& text, uint64_t* read_bytes, uint64_t* write_bytes) {
  bool have_read = false, have_write = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon);
    uint64_t* target = name == "read_bytes"    ? read_bytes
                       : name == "write_bytes" ? write_bytes
                                               : nullptr;
    if (target == nullptr) continue;
    const char* begin = line.c_str() + colon + 1;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(begin, &end, 10);
    if (end == begin) return false;
    *target = v;
    (name == "read_bytes" ? have_read : have_write) = true;
  }
  return have_read && have_write;
}

ProcessUsage ReadProcessUsage() {
  ProcessUsage u;
  std::ifstream io("/proc/self/io");
  if (io) {
    std::stringstream text;
    text << io.rdbuf();
    u.disk_known = ParseProcIo(text.str(), &u.disk_read_bytes, &u.disk_write_bytes);
    if (!u.disk_known) u.disk_read_bytes = u.disk_write_bytes = 0;
  }
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    u.cpu_user_s = Seconds(ru.ru_utime);
    u.cpu_system_s = Seconds(ru.ru_stime);
  }
  return u;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

}  // namespace driver
}  // namespace lsmbench
