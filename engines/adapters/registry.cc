// OpenAdapter / AdapterNames: the engines compiled into this build, and the
// engine plugins loaded. Which engines are compiled in is decided by CMake
// (LSMBENCH_HAVE_*), because RocksDB and LevelDB are optional system
// libraries.
#include "adapters/adapter.h"

#include <mutex>

#include "adapters/null_adapter.h"
#include "adapters/plugin_adapter.h"
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

namespace {

// The plugins loaded, in load order. The driver loads at most one, before
// any engine is opened; the lock is for tests that load several.
std::mutex g_plugins_mu;
std::vector<std::shared_ptr<const EnginePlugin>>& Plugins() {
  static auto* plugins = new std::vector<std::shared_ptr<const EnginePlugin>>();
  return *plugins;
}

}  // namespace

std::shared_ptr<const EnginePlugin> FindEnginePlugin(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_plugins_mu);
  for (const auto& p : Plugins()) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

std::vector<std::string> AdapterNames() {
  std::vector<std::string> names;
  for (const Engine& e : kEngines) names.emplace_back(e.name);
  std::lock_guard<std::mutex> lock(g_plugins_mu);
  for (const auto& p : Plugins()) names.push_back(p->name());
  return names;
}

Status LoadEnginePlugin(const std::string& path, std::string* name) {
  {
    std::lock_guard<std::mutex> lock(g_plugins_mu);
    for (const auto& p : Plugins()) {
      if (p->path() == path) {
        *name = p->name();
        return Status::OK();
      }
    }
  }
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = EnginePlugin::Load(path, &plugin);
  if (!s.ok()) return s;
  for (const Engine& e : kEngines) {
    if (plugin->name() == e.name) {
      return Status::InvalidArgument("engine plugin " + path, "calls itself '" + plugin->name() +
                                     "', the name of an engine compiled into lsm-driver");
    }
  }
  std::lock_guard<std::mutex> lock(g_plugins_mu);
  for (const auto& p : Plugins()) {
    if (p->name() == plugin->name()) {
      return Status::InvalidArgument("engine plugin " + path, "calls itself '" + plugin->name() +
                                     "', as does the plugin loaded from " + p->path());
    }
  }
  *name = plugin->name();
  Plugins().push_back(std::move(plugin));
  return Status::OK();
}

namespace {

// The compiled-in engine called `engine`; nullptr and OK for a plugin's name.
Status FindEngine(const std::string& engine, const Engine** found,
                  std::shared_ptr<const EnginePlugin>* plugin = nullptr) {
  *found = nullptr;
  for (const Engine& e : kEngines) {
    if (engine == e.name) {
      *found = &e;
      return Status::OK();
    }
  }
  if (auto p = FindEnginePlugin(engine)) {
    if (plugin != nullptr) *plugin = std::move(p);
    return Status::OK();
  }
  std::string names;
  for (const std::string& name : AdapterNames()) names += (names.empty() ? "" : ", ") + name;
  return Status::InvalidArgument("engine '" + engine + "': unknown (choose from: " + names + ")");
}

}  // namespace

Status OpenAdapter(const std::string& engine, const std::string& dir,
                   const AdapterOptions& options, std::unique_ptr<KvAdapter>* adapter) {
  const Engine* e = nullptr;
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = FindEngine(engine, &e, &plugin);
  if (!s.ok()) return s;
  return plugin ? plugin->Open(dir, options, 0, adapter) : e->open(dir, options, adapter);
}

Status OpenDatasetAdapter(const std::string& engine, const std::string& dir,
                          const AdapterOptions& options, int secondary_indexes,
                          std::unique_ptr<KvAdapter>* adapter) {
  const Engine* e = nullptr;
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = FindEngine(engine, &e, &plugin);
  if (!s.ok()) return s;
  if (plugin) return plugin->Open(dir, options, secondary_indexes, adapter);
  if (e->open_dataset == nullptr) {
    return Status::InvalidArgument("engine '" + engine +
                                   "' keeps no secondary indexes (only builtin does)");
  }
  return e->open_dataset(dir, options, secondary_indexes, adapter);
}

bool AdapterHasSecondaryIndexes(const std::string& engine) {
  const Engine* e = nullptr;
  std::shared_ptr<const EnginePlugin> plugin;
  if (!FindEngine(engine, &e, &plugin).ok()) return false;
  return plugin ? plugin->HasSecondaryIndexes() : e->open_dataset != nullptr;
}

Status CheckAdapterOptions(const std::string& engine, const AdapterOptions& options) {
  const Engine* e = nullptr;
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = FindEngine(engine, &e, &plugin);
  if (!s.ok()) return s;
  return plugin ? plugin->CheckOptions(options) : e->check(options);
}

Status DescribeAdapterOptions(const std::string& engine, std::vector<OptionDescription>* out) {
  const Engine* e = nullptr;
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = FindEngine(engine, &e, &plugin);
  if (!s.ok()) return s;
  if (plugin) {
    *out = plugin->Describe();
    return Status::OK();
  }
  if (e->describe == nullptr) {
    return Status::NotSupported("engine '" + engine + "'",
                                "its options are RocksDB's own; check a set of them with "
                                "--check-options");
  }
  *out = e->describe();
  return Status::OK();
}

}  // namespace lsmbench
