// Option tables of the adapters: each adapter's options by name, set from
// name=value strings into its configuration struct, with what
// `lsm-driver --describe-options ENGINE` prints about each. The grammar of
// values and the error wording are the engine's (lsm/option_values.h), so a
// user sees the same message whichever engine rejected an option.
#ifndef LSMBENCH_ADAPTERS_OPTION_PARSER_H_
#define LSMBENCH_ADAPTERS_OPTION_PARSER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "adapters/adapter.h"
#include "lsm/option_table.h"
#include "lsm/option_values.h"

namespace lsmbench {

using lsm::BadOptionValue;
using lsm::OptionKind;
using lsm::ParseBool;
using lsm::ParseChoice;
using lsm::ParseInt64;
using lsm::ParseReal;
using lsm::ParseSize;
using lsm::UnknownOption;

// Typed front ends that write straight into an options field of any integer
// type; the range defaults to what the field can hold.
template <typename Int>
Status ParseInteger(std::string_view name, std::string_view value, Int* out,
                    Int min = std::numeric_limits<Int>::min(),
                    Int max = std::numeric_limits<Int>::max()) {
  static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>);
  static_assert(sizeof(Int) < sizeof(int64_t) || std::is_signed_v<Int>,
                "use ParseSize for 64-bit unsigned fields");
  int64_t v = 0;
  Status s = ParseInt64(name, value, static_cast<int64_t>(min), static_cast<int64_t>(max), &v);
  if (s.ok()) *out = static_cast<Int>(v);
  return s;
}

template <typename Unsigned>
Status ParseSizeInto(std::string_view name, std::string_view value, Unsigned* out,
                     uint64_t min = 0, uint64_t max = std::numeric_limits<Unsigned>::max()) {
  static_assert(std::is_integral_v<Unsigned> && std::is_unsigned_v<Unsigned>);
  uint64_t v = 0;
  Status s = ParseSize(name, value, min, max, &v);
  if (s.ok()) *out = static_cast<Unsigned>(v);
  return s;
}

// Setters generated from the path to an options field: one or more member
// pointers, the first of the table's target type, e.g.
//   {"verify_checksums", BoolField<&Options::verify_checksums>},
//   {"block_bytes", SizeField<256, 256 << 20, &Options::block_bytes>},
//   {"block_size", SizeField<1024, 4 << 20, &Config::options, &leveldb::Options::block_size>},
// Each is a plain function usable as OptionSpec::set.
namespace option_internal {
template <typename M>
struct Member;
template <typename C, typename T>
struct Member<T C::*> {
  using Class = C;
};
template <auto First, auto... Rest>
struct RootOf {
  using type = typename Member<decltype(First)>::Class;
};
// A struct in between: an alias template cannot expand a pack into a
// non-pack parameter.
template <auto... Path>
using Root = typename RootOf<Path...>::type;

template <typename T, typename M>
auto& At(T* t, M m) {
  return t->*m;
}
template <typename T, typename M, typename... Ms>
auto& At(T* t, M m, Ms... ms) {
  return At(&(t->*m), ms...);
}
template <auto... Path>
using Leaf = std::remove_reference_t<decltype(At(static_cast<Root<Path...>*>(nullptr), Path...))>;
}  // namespace option_internal

template <auto... Path>
Status BoolField(std::string_view name, std::string_view value,
                 option_internal::Root<Path...>* target) {
  return ParseBool(name, value, &option_internal::At(target, Path...));
}

template <int64_t Min, int64_t Max, auto... Path>
Status IntField(std::string_view name, std::string_view value,
                option_internal::Root<Path...>* target) {
  using T = option_internal::Leaf<Path...>;
  // Clamped to what T holds, so the cast cannot wrap.
  constexpr int64_t kMin = std::max<int64_t>(Min, std::numeric_limits<T>::min());
  constexpr int64_t kMax = std::min<int64_t>(Max, std::numeric_limits<T>::max());
  return ParseInteger<T>(name, value, &option_internal::At(target, Path...), static_cast<T>(kMin),
                         static_cast<T>(kMax));
}

template <uint64_t Min, uint64_t Max, auto... Path>
Status SizeField(std::string_view name, std::string_view value,
                 option_internal::Root<Path...>* target) {
  using T = option_internal::Leaf<Path...>;
  constexpr uint64_t kMax = std::min<uint64_t>(Max, std::numeric_limits<T>::max());
  return ParseSizeInto(name, value, &option_internal::At(target, Path...), Min, kMax);
}

// The range is integral because C++17 has no floating-point template
// arguments.
template <int64_t Min, int64_t Max, auto... Path>
Status RealField(std::string_view name, std::string_view value,
                 option_internal::Root<Path...>* target) {
  return ParseReal(name, value, static_cast<double>(Min), static_cast<double>(Max),
                   &option_internal::At(target, Path...));
}

// A table of the options an adapter accepts: one entry per name, each with a
// setter that parses the value into a Target (an adapter's configuration
// struct) and what --describe-options prints about it. Keeping the table in
// one place makes a new option one line; the Bool/Int/Size/Real makers below
// take the kind and range from the same template arguments as the setter.
template <typename Target>
struct OptionSpec {
  const char* name;
  Status (*set)(std::string_view name, std::string_view value, Target* target);
  OptionKind kind = OptionKind::kChoice;
  double min = 0;
  double max = 0;
  std::vector<std::string> choices;
  const char* unit = "";
  const char* doc = "";
  // The value in a Target as text that `set` accepts (its default when
  // applied to a default-constructed Target); nullptr: not described.
  std::string (*get)(const Target& target) = nullptr;
};

namespace option_internal {

template <auto... Path>
std::string FieldText(const Root<Path...>& target) {
  const auto& v = At(const_cast<Root<Path...>*>(&target), Path...);
  using T = std::remove_cv_t<std::remove_reference_t<decltype(v)>>;
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else {
    return std::to_string(v);
  }
}

}  // namespace option_internal

template <auto... Path>
OptionSpec<option_internal::Root<Path...>> Bool(const char* name, const char* doc) {
  return {name, BoolField<Path...>, OptionKind::kBool, 0, 0, {}, "", doc,
          option_internal::FieldText<Path...>};
}

template <int64_t Min, int64_t Max, auto... Path>
OptionSpec<option_internal::Root<Path...>> Int(const char* name, const char* unit,
                                               const char* doc) {
  return {name, IntField<Min, Max, Path...>, OptionKind::kInt, static_cast<double>(Min),
          static_cast<double>(Max), {}, unit, doc, option_internal::FieldText<Path...>};
}

template <uint64_t Min, uint64_t Max, auto... Path>
OptionSpec<option_internal::Root<Path...>> Size(const char* name, const char* unit,
                                                const char* doc) {
  return {name, SizeField<Min, Max, Path...>, OptionKind::kSize, static_cast<double>(Min),
          static_cast<double>(Max), {}, unit, doc, option_internal::FieldText<Path...>};
}

template <int64_t Min, int64_t Max, auto... Path>
OptionSpec<option_internal::Root<Path...>> Real(const char* name, const char* unit,
                                                const char* doc) {
  return {name, RealField<Min, Max, Path...>, OptionKind::kReal, static_cast<double>(Min),
          static_cast<double>(Max), {}, unit, doc, option_internal::FieldText<Path...>};
}

template <typename Target>
std::vector<OptionDescription> Describe(const std::vector<OptionSpec<Target>>& table,
                                        const Target& defaults) {
  std::vector<OptionDescription> out;
  for (const auto& spec : table) {
    out.push_back({spec.name, spec.kind, spec.min, spec.max, spec.choices, spec.unit, spec.doc,
                   spec.get ? spec.get(defaults) : ""});
  }
  return out;
}

template <typename Target>
std::vector<std::string> OptionNames(const std::vector<OptionSpec<Target>>& table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const auto& spec : table) names.emplace_back(spec.name);
  return names;
}

// Applies every option of `options` through the table, in name order. Every
// unknown name and bad value is reported ("; "-separated), not just the
// first; target may then be partly updated.
template <typename Target>
Status ApplyOptions(const std::vector<OptionSpec<Target>>& table, const AdapterOptions& options,
                    Target* target) {
  std::string errors;
  for (const auto& [name, value] : options) {
    const OptionSpec<Target>* found = nullptr;
    for (const auto& spec : table) {
      if (name == spec.name) {
        found = &spec;
        break;
      }
    }
    Status s = found == nullptr ? UnknownOption(name, OptionNames(table))
                                : found->set(name, value, target);
    if (!s.ok()) errors += (errors.empty() ? "" : "; ") + lsm::ErrorMessage(s);
  }
  return errors.empty() ? Status::OK() : Status::InvalidArgument(errors);
}

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_OPTION_PARSER_H_
