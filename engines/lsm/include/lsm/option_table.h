// The engine's options by name: one entry per field of lsm::Options, made
// from options.def, with its kind, range or choices, unit and documentation.
// Everything that reads options as text reads them through this table: the
// builtin adapter of lsm-driver, lsm-sim's flags, DB::Open's validation,
// `lsm-driver --describe-options builtin` and docs/reference/engine-options.md.
#ifndef LSM_INCLUDE_LSM_OPTION_TABLE_H_
#define LSM_INCLUDE_LSM_OPTION_TABLE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/options.h"
#include "lsm/status.h"

namespace lsm {

// How a value is written (the grammar is in option_values.h).
enum class OptionKind { kBool, kInt, kSize, kReal, kChoice };

// "bool", "int", "size", "real" or "choice".
const char* OptionKindName(OptionKind kind);

// Which part of the engine reads an option (options.def explains each).
enum class OptionScope { kMergePolicy, kEngine };

// "merge-policy" or "engine".
const char* OptionScopeName(OptionScope scope);

struct OptionInfo {
  const char* name;
  OptionKind kind;
  double min;  // kInt, kSize, kReal: the allowed range, inclusive
  double max;
  std::vector<std::string> choices;  // kChoice: the allowed names
  const char* unit;                  // "" for none
  OptionScope scope;
  const char* doc;
  // Parses `value` and stores it in the field; InvalidArgument naming the
  // option and what is allowed, the field unchanged, on a bad value.
  Status (*set)(const OptionInfo& info, std::string_view value, Options* options);
  // The field's value as text that `set` accepts (sizes in bytes).
  std::string (*get)(const Options& options);
};

// Every option, in the order of options.def.
const std::vector<OptionInfo>& OptionTable();

// nullptr when there is no option of that name.
const OptionInfo* FindOption(std::string_view name);

// The option names, in table order.
std::vector<std::string> OptionNames();

// Sets one option from text: an unknown name is an error suggesting the
// closest one.
Status SetOption(Options* options, std::string_view name, std::string_view value);

// Sets every option of `values`, then checks the rules between options; the
// error lists every problem found ("; "-separated), not just the first.
Status SetOptions(Options* options, const std::map<std::string, std::string>& values);

// Every field within its range and the rules between options (e.g. l0_stop
// >= l0_trigger, each policy's size ratio); every problem at once. DB::Open
// and the policy and scheduler factories call it, for options set directly
// in the struct as much as for those parsed from text.
Status CheckOptions(const Options& options);

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_OPTION_TABLE_H_
