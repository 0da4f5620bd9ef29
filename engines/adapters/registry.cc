// OpenAdapter / AdapterNames: the engines compiled into this build, and the
// engine plugins loaded. The bundled engine is compiled in when its sources
// are (LSMBENCH_HAVE_BUILTIN); every other storing engine is a plugin.
#include "adapters/adapter.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <mutex>

#include "adapters/null_adapter.h"
#include "adapters/plugin_adapter.h"
#ifdef LSMBENCH_HAVE_BUILTIN
#include "adapters/builtin_adapter.h"
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
  DescribeFunction describe;
  OpenDatasetFunction open_dataset;  // nullptr: no secondary indexes
};

constexpr Engine kEngines[] = {
#ifdef LSMBENCH_HAVE_BUILTIN
    {"builtin", OpenBuiltinAdapter, CheckBuiltinOptions, DescribeBuiltinOptions,
     OpenBuiltinDatasetAdapter},
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

std::vector<std::string> EnginePluginPath() {
  std::vector<std::string> dirs;
  const char* given = getenv("LSMBENCH_PLUGIN_PATH");
  std::string rest = given != nullptr ? given : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string dir = rest.substr(0, colon);
    if (!dir.empty()) dirs.push_back(dir);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string bin(exe, static_cast<size_t>(n));
    bin = bin.substr(0, bin.rfind('/'));  // .../bin
    dirs.push_back(bin.substr(0, bin.rfind('/') + 1) + "plugins");
  }
  return dirs;
}

Status LoadEnginePluginNamed(const std::string& name) {
  for (const std::string& known : AdapterNames()) {
    if (known == name) return Status::OK();
  }
  std::string looked;
  for (const std::string& dir : EnginePluginPath()) {
    const std::string path = dir + "/lsmbench-" + name + ".so";
    if (access(path.c_str(), F_OK) == 0) {
      std::string loaded;
      Status s = LoadEnginePlugin(path, &loaded);
      if (s.ok() && loaded != name) {
        return Status::InvalidArgument("engine plugin " + path,
                                       "calls itself '" + loaded + "', not '" + name + "'");
      }
      return s;
    }
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  return Status::NotFound("engine '" + name + "'", "neither compiled in nor a plugin lsmbench-" +
                          name + ".so on the plugin path (" + looked + ")");
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
  *out = e->describe();
  return Status::OK();
}

}  // namespace lsmbench
