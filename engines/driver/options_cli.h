// lsm-driver's option commands, which need no run.json and open nothing:
//   --describe-options [ENGINE]   the options ENGINE (default builtin) accepts, as JSON
//   --check-options ENGINE [--option NAME=VALUE]...
//                                 parses the options as a run would, prints JSON
// The orchestrator's `lsmbench validate` reads both (pipelines/lsmbench).
#ifndef LSMBENCH_DRIVER_OPTIONS_CLI_H_
#define LSMBENCH_DRIVER_OPTIONS_CLI_H_

#include <string>

#include "adapters/adapter.h"
#include "adapters/plugin_adapter.h"
#include "nlohmann/json.hpp"

namespace lsmbench::driver {

// {"engine": E, "options": [{"name", "type", "default", "min", "max",
// "choices", "unit", "doc"}, ...]} with "type" one of bool|int|size|real|
// choice; "default" typed (sizes in bytes); keys that do not apply are left
// out; for an engine plugin also "plugin": PluginJson. *out is the JSON
// text; a non-OK status for an unknown engine.
Status DescribeOptionsJson(const std::string& engine, std::string* out);

// {"path", "version", "abi_version", "options_open", "cannot_tell": ["events", "settle",
// "metrics"] (what it leaves out), "secondary_indexes": bool}: what a run's
// summary and --describe-options say of a plugin.
nlohmann::json PluginJson(const EnginePlugin& plugin);

// The same as Markdown: docs/reference/engine-options.md is this output for builtin.
Status DescribeOptionsMarkdown(const std::string& engine, std::string* out);

// {"ok": bool, "errors": [{"name": NAME or "", "message": M}, ...]}: every
// problem the engine's parser reports for this set of options; *ok as "ok".
std::string CheckOptionsJson(const std::string& engine, const AdapterOptions& options, bool* ok);

}  // namespace lsmbench::driver

#endif  // LSMBENCH_DRIVER_OPTIONS_CLI_H_
