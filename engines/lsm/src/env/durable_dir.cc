#include "env/durable_dir.h"

namespace lsm {

std::string ParentDir(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

Status CreateDirDurably(Env* env, const std::string& dir) {
  Status s = env->CreateDir(dir);
  if (!s.ok()) return s;
  return env->SyncDir(ParentDir(dir));
}

}  // namespace lsm
