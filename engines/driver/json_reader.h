// Strict reading of JSON configuration objects: every field that is not in
// the allowed list is an error naming its full path ("arrival.rat: unknown
// field (allowed: ...)"), and every bad value is an error naming the field
// and what was expected. Absent optional fields leave the output untouched,
// so callers initialise outputs with their defaults.
#ifndef LSMBENCH_DRIVER_JSON_READER_H_
#define LSMBENCH_DRIVER_JSON_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsm/status.h"

namespace lsmbench {
namespace driver {

using lsm::Status;
using Json = nlohmann::json;

// The message of a Status without its "Invalid argument: " code prefix.
std::string ErrorText(const Status& s);

class JsonObject {
 public:
  // Fails unless `json` is an object whose keys are all in `allowed`.
  // `path` names the object ("" for the top level, "arrival", ...).
  static Status Open(const Json& json, const std::string& path,
                     const std::vector<std::string>& allowed, JsonObject* out);

  JsonObject() = default;

  bool Has(const std::string& name) const;
  const Json& Raw(const std::string& name) const { return (*json_)[name]; }
  // "path.name" (or "name" at the top level).
  std::string PathOf(const std::string& name) const;

  Status Required(const std::string& name) const;
  Status GetString(const std::string& name, std::string* out) const;
  Status GetBool(const std::string& name, bool* out) const;
  // A finite number in [min, max].
  Status GetDouble(const std::string& name, double min, double max, double* out) const;
  // A non-negative integer in [min, max] (JSON numbers with no fraction).
  Status GetUint(const std::string& name, uint64_t min, uint64_t max, uint64_t* out) const;
  // One of `choices`; *index is its position.
  Status GetChoice(const std::string& name, const std::vector<std::string>& choices,
                   size_t* index) const;
  // An object of string (or number/bool, converted to its JSON text) values.
  Status GetStringMap(const std::string& name, std::map<std::string, std::string>* out) const;
  // An object of non-negative numbers whose keys are all in `allowed`.
  Status GetNumberMap(const std::string& name, const std::vector<std::string>& allowed,
                      std::map<std::string, double>* out) const;
  // Opens a nested object field.
  Status GetObject(const std::string& name, const std::vector<std::string>& allowed,
                   JsonObject* out) const;

  Status Error(const std::string& name, const std::string& what) const;

 private:
  const Json* json_ = nullptr;
  std::string path_;
};

// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_JSON_READER_H_
