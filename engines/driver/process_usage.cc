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

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  if (!f) return "";
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The io.stat of this process's cgroup, found once: a process does not move
// between cgroups after lsmbench starts it in one.
const std::string& OwnIoStatPath() {
  static const std::string path = [] {
    const std::string dir = CgroupV2Dir(ReadAll("/proc/self/cgroup"),
                                        ReadAll("/proc/self/mountinfo"));
    return dir.empty() ? dir : dir + "/io.stat";
  }();
  return path;
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

bool ParseIoStat(const std::string& text, uint64_t* read_bytes, uint64_t* write_bytes) {
  uint64_t read = 0, write = 0;
  bool any = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, kv;
    if (!(fields >> device)) continue;
    bool have_read = false, have_write = false;
    uint64_t r = 0, w = 0;
    while (fields >> kv) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = kv.substr(0, eq);
      if (key != "rbytes" && key != "wbytes") continue;
      char* end = nullptr;
      const unsigned long long v = std::strtoull(kv.c_str() + eq + 1, &end, 10);
      if (end == kv.c_str() + eq + 1 || *end != '\0') return false;
      (key == "rbytes" ? r : w) = v;
      (key == "rbytes" ? have_read : have_write) = true;
    }
    if (have_read && have_write) {
      read += r;
      write += w;
      any = true;
    }
  }
  *read_bytes = read;
  *write_bytes = write;
  return any;
}

std::string CgroupV2Dir(const std::string& proc_cgroup, const std::string& mountinfo) {
  std::string path;
  {
    std::istringstream in(proc_cgroup);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("0::", 0) == 0) path = line.substr(3);
    }
  }
  if (path.empty() || path == "/") return "";
  // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS... - FSTYPE SOURCE SUPER"
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    if (!(after >> fstype) || fstype != "cgroup2") continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, devno, root, mount_point;
    if (!(before >> id >> parent >> devno >> root >> mount_point)) continue;
    return mount_point + path;
  }
  return "";
}

ProcessUsage ReadProcessUsage() {
  ProcessUsage u;
  if (!OwnIoStatPath().empty()) {
    u.device_known = ParseIoStat(ReadAll(OwnIoStatPath()), &u.device_read_bytes,
                                 &u.device_write_bytes);
  }
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
