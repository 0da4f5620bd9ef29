// Engine plugins: shared objects built against the public C ABI
// (engines/plugin/include/lsmbench/engine_plugin.h), loaded at run time and
// measured through the same KvAdapter as the engines compiled in.
//
// Everything a plugin hands over is checked before it is believed: the ABI
// version and struct sizes at load, the option table, every return code,
// every event (kinds, levels, times on the driver's clock, completion
// order). A plugin that crashes is named on stderr with the call it was in;
// one whose metrics, events or background-work look does not return within
// kLookLimitS ends the process with a message (the point fails; the
// campaign goes on).
#ifndef LSMBENCH_ADAPTERS_PLUGIN_ADAPTER_H_
#define LSMBENCH_ADAPTERS_PLUGIN_ADAPTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/adapter.h"

struct lsmbench_engine_api;

namespace lsmbench {

// The longest a look (metrics, take_events, background_work) may take.
constexpr double kLookLimitS = 60.0;

class EnginePlugin {
 public:
  // Loads and checks the plugin at path. InvalidArgument naming the path and
  // the problem: no such file, not a shared object, no entry point, another
  // ABI version or struct sizes, missing required functions (all named), a
  // bad option table.
  static Status Load(const std::string& path, std::shared_ptr<const EnginePlugin>* out);

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }
  uint32_t abi_version() const;
  // The table lists some options; check_options checks the others.
  bool options_open() const;
  // What the plugin cannot tell ("events", "settle", "metrics"), for the
  // run's metadata.
  std::vector<std::string> CannotTell() const;
  bool HasSecondaryIndexes() const;

  std::vector<OptionDescription> Describe() const;
  // Checks names, kinds and ranges against the plugin's table (every problem
  // at once, with the closest name for a typo), then the plugin's own
  // check_options. InvalidArgument naming the plugin and each option.
  Status CheckOptions(const AdapterOptions& options) const;
  Status Open(const std::string& dir, const AdapterOptions& options, int secondary_indexes,
              std::unique_ptr<KvAdapter>* adapter) const;

 private:
  EnginePlugin() = default;
  // Canonical values (see engine_plugin.h) of options, in the table's order:
  // those that passed the table, and each problem of the others.
  void Canonical(const AdapterOptions& options, std::vector<std::string>* names,
                 std::vector<std::string>* values, std::vector<std::string>* problems) const;
  Status Canonical(const AdapterOptions& options, std::vector<std::string>* names,
                   std::vector<std::string>* values) const;

  const lsmbench_engine_api* api_ = nullptr;
  std::string path_, name_, version_;
  std::vector<OptionDescription> options_;
};

// The plugin loaded (LoadEnginePlugin) under that name; nullptr if none.
std::shared_ptr<const EnginePlugin> FindEnginePlugin(const std::string& name);

// "engine plugin 'memkv'": how messages name a plugin.
std::string PluginLabel(const std::string& name);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_PLUGIN_ADAPTER_H_
