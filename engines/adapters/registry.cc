// OpenAdapter / AdapterNames: the engines compiled into this build. Which
// ones that is, is decided by CMake (LSMBENCH_HAVE_*), because RocksDB and
// LevelDB are optional system libraries.
#include "adapters/adapter.h"
#include "adapters/null_adapter.h"
#ifdef LSMBENCH_HAVE_BUILTIN
#include "adapters/builtin_adapter.h"
#endif
#ifdef LSMBENCH_HAVE_ROCKSDB
#include "adapters/rocksdb_adapter.h"
#endif
#ifdef LSMBENCH_HAVE_LEVELDB
#include "adapters/leveldb_adapter.h"
#endif

namespace lsmbench {

namespace {

using OpenFunction = Status (*)(const std::string& dir, const AdapterOptions& options,
                                std::unique_ptr<KvAdapter>* adapter);

struct Engine {
  const char* name;
  OpenFunction open;
};

constexpr Engine kEngines[] = {
#ifdef LSMBENCH_HAVE_BUILTIN
    {"builtin", OpenBuiltinAdapter},
#endif
#ifdef LSMBENCH_HAVE_ROCKSDB
    {"rocksdb", OpenRocksDbAdapter},
#endif
#ifdef LSMBENCH_HAVE_LEVELDB
    {"leveldb", OpenLevelDbAdapter},
#endif
    {"null", OpenNullAdapter},
};

}  // namespace

std::vector<std::string> AdapterNames() {
  std::vector<std::string> names;
  for (const Engine& e : kEngines) names.emplace_back(e.name);
  return names;
}

Status OpenAdapter(const std::string& engine, const std::string& dir,
                   const AdapterOptions& options, std::unique_ptr<KvAdapter>* adapter) {
  for (const Engine& e : kEngines) {
    if (engine == e.name) return e.open(dir, options, adapter);
  }
  std::string names;
  for (const std::string& name : AdapterNames()) names += (names.empty() ? "" : ", ") + name;
  return Status::InvalidArgument("engine '" + engine + "': unknown (choose from: " + names + ")");
}

}  // namespace lsmbench
