#include "db/filenames.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace lsm {
namespace {

std::string Numbered(const std::string& dir, uint64_t number, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/%06" PRIu64 ".%s", number, suffix);
  return dir + buf;
}

bool ParseNumber(const std::string& text, uint64_t* number) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *number = v;
  return true;
}

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

std::string TableFileName(const std::string& dir, uint64_t number) {
  return Numbered(dir, number, "sst");
}
std::string WalFileName(const std::string& dir, uint64_t number) {
  return Numbered(dir, number, "wal");
}
std::string TempFileName(const std::string& dir, uint64_t number) {
  return Numbered(dir, number, "tmp");
}
std::string ManifestFileName(const std::string& dir, uint64_t number) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/MANIFEST-%06" PRIu64, number);
  return dir + buf;
}
std::string CurrentFileName(const std::string& dir) { return dir + "/CURRENT"; }
std::string LockFileName(const std::string& dir) { return dir + "/LOCK"; }

FileType ParseFileName(const std::string& name, uint64_t* number) {
  *number = 0;
  if (name == "CURRENT") return FileType::kCurrent;
  if (name == "LOCK") return FileType::kLock;
  if (name.rfind("MANIFEST-", 0) == 0) {
    return ParseNumber(name.substr(9), number) ? FileType::kManifest : FileType::kUnknown;
  }
  struct Suffix {
    const char* text;
    FileType type;
  };
  for (const Suffix& s : {Suffix{".sst", FileType::kTable}, Suffix{".wal", FileType::kWal},
                          Suffix{".tmp", FileType::kTemp}}) {
    if (EndsWith(name, s.text)) {
      return ParseNumber(name.substr(0, name.size() - 4), number) ? s.type : FileType::kUnknown;
    }
  }
  return FileType::kUnknown;
}

}  // namespace lsm
