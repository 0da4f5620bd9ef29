#include "lsm/option_table.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "lsm/option_values.h"

namespace lsm {

namespace {

template <typename Names>
std::vector<std::string> ChoiceList(const Names& names) {
  return std::vector<std::string>(names.begin(), names.end());
}

template <auto Field>
using FieldType = std::remove_reference_t<decltype(std::declval<Options&>().*Field)>;

template <auto Field>
Status SetField(const OptionInfo& info, std::string_view value, Options* options) {
  using T = FieldType<Field>;
  T& field = options->*Field;
  if constexpr (std::is_same_v<T, bool>) {
    return ParseBool(info.name, value, &field);
  } else if constexpr (std::is_same_v<T, std::string> || std::is_enum_v<T>) {
    size_t index = 0;
    Status s = ParseChoice(info.name, value, info.choices, &index);
    if (!s.ok()) return s;
    if constexpr (std::is_enum_v<T>) {
      field = static_cast<T>(index);
    } else {
      field = info.choices[index];
    }
    return s;
  } else if constexpr (std::is_floating_point_v<T>) {
    return ParseReal(info.name, value, info.min, info.max, &field);
  } else {
    static_assert(std::is_integral_v<T>);
    if (info.kind == OptionKind::kSize) {
      uint64_t v = 0;
      Status s = ParseSize(info.name, value, static_cast<uint64_t>(info.min),
                           static_cast<uint64_t>(info.max), &v);
      if (s.ok()) field = static_cast<T>(v);
      return s;
    }
    int64_t v = 0;
    Status s = ParseInt64(info.name, value, static_cast<int64_t>(info.min),
                          static_cast<int64_t>(info.max), &v);
    if (s.ok()) field = static_cast<T>(v);
    return s;
  }
}

template <auto Field, typename Names>
std::string GetField(const Options& options, const Names& names) {
  using T = FieldType<Field>;
  const T& field = options.*Field;
  if constexpr (std::is_same_v<T, bool>) {
    return field ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return field;
  } else if constexpr (std::is_enum_v<T>) {
    const size_t index = static_cast<size_t>(field);
    return index < names.size() ? names[index] : "?";
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", field);
    return buf;
  } else {
    return std::to_string(field);
  }
}

// Policies whose size ratio counts components (an integer), and the least
// ratio each policy accepts (below it leveling and tiering degenerate: T = 1
// would move data down forever or merge single components forever).
double LeastSizeRatio(PolicyKind policy) {
  switch (policy) {
    case PolicyKind::kSizeTiered:
      return 1;
    case PolicyKind::kLeveling:
    case PolicyKind::kPartitioned:
    case PolicyKind::kTiering:
      return 2;
    default:
      return 0;  // bounded-depth policies ignore it
  }
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// The rules between options, appended to `errors`.
void CheckRules(const Options& o, std::vector<std::string>* errors) {
  auto rule = [errors](bool holds, const std::string& message) {
    if (!holds) errors->push_back(message);
  };
  rule(o.min_merge_components <= o.max_merge_components,
       "engine option 'min_merge_components': " + std::to_string(o.min_merge_components) +
           " exceeds max_merge_components " + std::to_string(o.max_merge_components));
  rule(o.exploring_min <= o.exploring_max,
       "engine option 'exploring_min': " + std::to_string(o.exploring_min) +
           " exceeds exploring_max " + std::to_string(o.exploring_max));
  rule(o.l0_trigger <= o.l0_stop, "engine option 'l0_stop': " + std::to_string(o.l0_stop) +
                                      " is below l0_trigger " + std::to_string(o.l0_trigger));
  const double least = LeastSizeRatio(o.merge_policy);
  if (o.size_ratio != 0 && least > 0) {
    const bool integer = o.merge_policy == PolicyKind::kTiering;
    rule(o.size_ratio >= least && (!integer || o.size_ratio == std::floor(o.size_ratio)),
         "engine option 'size_ratio': " + Number(o.size_ratio) + " for " + ToString(o.merge_policy) +
             " (expected 0, the policy's default, or " + (integer ? "an integer " : "a number ") +
             ">= " + Number(least) + ")");
  }
}

}  // namespace

const char* OptionKindName(OptionKind kind) {
  switch (kind) {
    case OptionKind::kBool: return "bool";
    case OptionKind::kInt: return "int";
    case OptionKind::kSize: return "size";
    case OptionKind::kReal: return "real";
    case OptionKind::kChoice: return "choice";
  }
  return "?";
}

const char* OptionScopeName(OptionScope scope) {
  return scope == OptionScope::kMergePolicy ? "merge-policy" : "engine";
}

const std::vector<OptionInfo>& OptionTable() {
  static const std::vector<OptionInfo> table = {
#define LSM_OPTION(Type, name, default_value, kind, min, max, choices, unit, scope, doc)        \
  {#name,                                                                                     \
   OptionKind::kind,                                                                          \
   static_cast<double>(min),                                                                  \
   static_cast<double>(max),                                                                  \
   ChoiceList(choices),                                                                       \
   unit,                                                                                      \
   OptionScope::scope,                                                                        \
   doc,                                                                                       \
   &SetField<&Options::name>,                                                                 \
   [](const Options& o) { return GetField<&Options::name>(o, choices); }},
#include "lsm/options.def"
#undef LSM_OPTION
  };
  return table;
}

const OptionInfo* FindOption(std::string_view name) {
  for (const OptionInfo& info : OptionTable()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::vector<std::string> OptionNames() {
  std::vector<std::string> names;
  for (const OptionInfo& info : OptionTable()) names.emplace_back(info.name);
  return names;
}

Status SetOption(Options* options, std::string_view name, std::string_view value) {
  const OptionInfo* info = FindOption(name);
  if (info == nullptr) return UnknownOption(name, OptionNames());
  return info->set(*info, value, options);
}

namespace {

Status Combine(const std::vector<std::string>& errors) {
  if (errors.empty()) return Status::OK();
  std::string message;
  for (const std::string& e : errors) message += (message.empty() ? "" : "; ") + e;
  return Status::InvalidArgument(message);
}

}  // namespace

Status SetOptions(Options* options, const std::map<std::string, std::string>& values) {
  std::vector<std::string> errors;
  for (const auto& [name, value] : values) {
    Status s = SetOption(options, name, value);
    if (!s.ok()) errors.push_back(ErrorMessage(s));
  }
  if (errors.empty()) return CheckOptions(*options);
  return Combine(errors);
}

Status CheckOptions(const Options& options) {
  std::vector<std::string> errors;
  // Each field through its own parser: one range check for text and for
  // fields set in the struct.
  Options scratch;
  for (const OptionInfo& info : OptionTable()) {
    const std::string text = info.get(options);
    Status s = info.set(info, text, &scratch);
    if (!s.ok()) errors.push_back(ErrorMessage(s));
  }
  CheckRules(options, &errors);
  return Combine(errors);
}

}  // namespace lsm
