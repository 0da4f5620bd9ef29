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

// Where this process's cgroup counts its device bytes, found once: a process
// does not move between cgroups after lsmbench starts it in one.
struct DeviceCounters {
  std::string path;  // "" when the process is in no cgroup of its own
  bool v2 = false;
};

const DeviceCounters& OwnDeviceCounters() {
  static const DeviceCounters counters = [] {
    const std::string cgroup = ReadAll("/proc/self/cgroup");
    const std::string mounts = ReadAll("/proc/self/mountinfo");
    DeviceCounters c;
    const std::string v2 = CgroupV2Dir(cgroup, mounts);
    if (!v2.empty()) {
      c.path = v2 + "/io.stat";
      c.v2 = true;
      return c;
    }
    const std::string v1 = CgroupV1BlkioDir(cgroup, mounts);
    if (!v1.empty()) c.path = v1 + "/blkio.throttle.io_service_bytes";
    return c;
  }();
  return counters;
}

// A mountinfo line's mount root, mount point and, after " - ", its file
// system type and super options; false for a line that has none.
bool ParseMountLine(const std::string& line, std::string* root, std::string* mount_point,
                    std::string* fstype, std::string* options) {
  const size_t dash = line.find(" - ");
  if (dash == std::string::npos) return false;
  std::istringstream before(line.substr(0, dash));
  std::string id, parent, devno;
  if (!(before >> id >> parent >> devno >> *root >> *mount_point)) return false;
  std::istringstream after(line.substr(dash + 3));
  std::string source;
  if (!(after >> *fstype)) return false;
  after >> source >> *options;
  return true;
}

// PATH under a mount of ROOT (a cgroup namespace may mount a subtree).
std::string UnderMount(const std::string& mount_point, const std::string& root,
                       const std::string& path) {
  if (root == "/" || root.empty()) return mount_point + path;
  if (path.rfind(root, 0) == 0) return mount_point + path.substr(root.size());
  return "";
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
  std::string line, root, mount_point, fstype, options;
  while (std::getline(in, line)) {
    if (ParseMountLine(line, &root, &mount_point, &fstype, &options) && fstype == "cgroup2") {
      return UnderMount(mount_point, root, path);
    }
  }
  return "";
}

std::string CgroupV1BlkioDir(const std::string& proc_cgroup, const std::string& mountinfo) {
  auto has_blkio = [](const std::string& list) {
    std::istringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
      if (item == "blkio") return true;
    }
    return false;
  };
  std::string path;
  {
    std::istringstream in(proc_cgroup);
    std::string line;
    while (std::getline(in, line)) {
      const size_t a = line.find(':');
      const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      if (has_blkio(line.substr(a + 1, b - a - 1))) path = line.substr(b + 1);
    }
  }
  if (path.empty() || path == "/") return "";
  std::istringstream in(mountinfo);
  std::string line, root, mount_point, fstype, options;
  while (std::getline(in, line)) {
    if (ParseMountLine(line, &root, &mount_point, &fstype, &options) && fstype == "cgroup" &&
        has_blkio(options)) {
      return UnderMount(mount_point, root, path);
    }
  }
  return "";
}

bool ParseBlkioServiceBytes(const std::string& text, uint64_t* read_bytes,
                            uint64_t* write_bytes) {
  uint64_t read = 0, write = 0;
  bool have_read = false, have_write = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, op, value;
    if (!(fields >> device >> op >> value)) continue;  // "Total N": two fields
    if (op != "Read" && op != "Write") continue;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (end == value.c_str() || *end != '\0') return false;
    (op == "Read" ? read : write) += v;
    (op == "Read" ? have_read : have_write) = true;
  }
  *read_bytes = read;
  *write_bytes = write;
  return have_read && have_write;
}

ProcessUsage ReadProcessUsage() {
  ProcessUsage u;
  const DeviceCounters& device = OwnDeviceCounters();
  if (!device.path.empty()) {
    const std::string text = ReadAll(device.path);
    u.device_known = device.v2 ? ParseIoStat(text, &u.device_read_bytes, &u.device_write_bytes)
                               : ParseBlkioServiceBytes(text, &u.device_read_bytes,
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
