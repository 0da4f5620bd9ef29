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

using OpenDatasetFunction = Status (*)(const std::string& dir, const AdapterOptions& options,
                                       int secondary_indexes,
                                       std::unique_ptr<KvAdapter>* adapter);
using CheckFunction = Status (*)(const AdapterOptions& options);
using DescribeFunction = std::vector<OptionDescription> (*)();

struct Engine {
  const char* name;
  OpenFunction open;
  CheckFunction check;
  DescribeFunction describe;  // nullptr: the engine's own parser only (rocksdb)
  OpenDatasetFunction open_dataset;  // nullptr: no secondary indexes
};

constexpr Engine kEngines[] = {
#ifdef LSMBENCH_HAVE_BUILTIN
    {"builtin", OpenBuiltinAdapter, CheckBuiltinOptions, DescribeBuiltinOptions,
     OpenBuiltinDatasetAdapter},
#endif
#ifdef LSMBENCH_HAVE_ROCKSDB
    {"rocksdb", OpenRocksDbAdapter, CheckRocksDbOptions, nullptr, nullptr},
#endif
#ifdef LSMBENCH_HAVE_LEVELDB
    {"leveldb", OpenLevelDbAdapter, CheckLevelDbOptions, DescribeLevelDbOptions, nullptr},
#endif
    {"null", OpenNullAdapter, CheckNullOptions, DescribeNullOptions, nullptr},
};

}  // namespace

std::vector<std::string> AdapterNames() {
  std::vector<std::string> names;
  for (const Engine& e : kEngines) names.emplace_back(e.name);
  return names;
}

namespace {

Status FindEngine(const std::string& engine, const Engine** found) {
  for (const Engine& e : kEngines) {
    if (engine == e.name) {
      *found = &e;
      return Status::OK();
    }
  }
  std::string names;
  for (const std::string& name : AdapterNames()) names += (names.empty() ? "" : ", ") + name;
  return Status::InvalidArgument("engine '" + engine + "': unknown (choose from: " + names + ")");
}

}  // namespace

Status OpenAdapter(const std::string& engine, const std::string& dir,
                   const AdapterOptions& options, std::unique_ptr<KvAdapter>* adapter) {
  const Engine* e = nullptr;
  Status s = FindEngine(engine, &e);
  return s.ok() ? e->open(dir, options, adapter) : s;
}

Status OpenDatasetAdapter(const std::string& engine, const std::string& dir,
                          const AdapterOptions& options, int secondary_indexes,
                          std::unique_ptr<KvAdapter>* adapter) {
  const Engine* e = nullptr;
  Status s = FindEngine(engine, &e);
  if (!s.ok()) return s;
  if (e->open_dataset == nullptr) {
    return Status::InvalidArgument("engine '" + engine +
                                   "' keeps no secondary indexes (only builtin does)");
  }
  return e->open_dataset(dir, options, secondary_indexes, adapter);
}

bool AdapterHasSecondaryIndexes(const std::string& engine) {
  const Engine* e = nullptr;
  return FindEngine(engine, &e).ok() && e->open_dataset != nullptr;
}

Status CheckAdapterOptions(const std::string& engine, const AdapterOptions& options) {
  const Engine* e = nullptr;
  Status s = FindEngine(engine, &e);
  return s.ok() ? e->check(options) : s;
}

Status DescribeAdapterOptions(const std::string& engine, std::vector<OptionDescription>* out) {
  const Engine* e = nullptr;
  Status s = FindEngine(engine, &e);
  if (!s.ok()) return s;
  if (e->describe == nullptr) {
    return Status::NotSupported("engine '" + engine + "'",
                                "its options are RocksDB's own; check a set of them with "
                                "--check-options");
  }
  *out = e->describe();
  return Status::OK();
}

}  // namespace lsmbench
