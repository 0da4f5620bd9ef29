// YAML workload files are read into the same JSON value the run.json parser
// reads, so one schema (and one strict validator) covers both formats.
#ifndef LSMBENCH_DRIVER_YAML_JSON_H_
#define LSMBENCH_DRIVER_YAML_JSON_H_

#include <string>

#include "driver/json_reader.h"

namespace lsmbench {
namespace driver {

// Plain scalars become numbers, booleans (true/false) or null (~, null) when
// they read as such; quoted scalars always stay strings.
Status YamlToJson(const std::string& text, Json* out);

// Reads `path` as JSON when it ends in ".json", as YAML otherwise.
Status ReadConfigFile(const std::string& path, Json* out);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_YAML_JSON_H_
