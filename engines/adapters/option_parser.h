// Strict parsing of adapter options given as name=value strings, and the
// error messages that name the offending option. Every adapter uses these, so
// a user sees the same wording whichever engine rejected the option:
//   engine option 'memtable_byts': unknown (choose from: block_bytes, ...)
//   engine option 'wal': bad value 'sometimes' (choose from: off, async, sync)
//
// Grammar of values:
//   bool     true | false | 1 | 0
//   integer  optional '-', decimal digits; nothing else (no spaces, no '+', no hex)
//   size     decimal digits, optionally followed by one suffix K, M or G
//            meaning KiB, MiB, GiB (1K = 1024); case-insensitive
//   real     what strtod accepts as a finite number, the whole string
// Every number is range-checked after parsing.
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

namespace lsmbench {

// "engine option 'NAME': unknown (choose from: a, b, c)".
Status UnknownOption(std::string_view name, const std::vector<std::string>& known);

// "engine option 'NAME': bad value 'VALUE' (EXPECTED)".
Status BadOptionValue(std::string_view name, std::string_view value, std::string_view expected);

Status ParseBool(std::string_view name, std::string_view value, bool* out);

// Whole-string parse of a signed 64-bit decimal integer in [min, max].
Status ParseInt64(std::string_view name, std::string_view value, int64_t min, int64_t max,
                  int64_t* out);

// Whole-string parse of a byte count with an optional K/M/G (binary) suffix,
// in [min, max].
Status ParseSize(std::string_view name, std::string_view value, uint64_t min, uint64_t max,
                 uint64_t* out);

// Whole-string parse of a finite real number in [min, max].
Status ParseReal(std::string_view name, std::string_view value, double min, double max,
                 double* out);

// *index = position of value in choices (exact, case-sensitive match).
Status ParseChoice(std::string_view name, std::string_view value,
                   const std::vector<std::string>& choices, size_t* index);

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
// struct). Keeping the table in one place makes a new option one line.
template <typename Target>
struct OptionSpec {
  const char* name;
  Status (*set)(std::string_view name, std::string_view value, Target* target);
};

template <typename Target>
std::vector<std::string> OptionNames(const std::vector<OptionSpec<Target>>& table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const auto& spec : table) names.emplace_back(spec.name);
  return names;
}

// Applies every option of `options` through the table, in name order. The
// first unknown name or bad value is the result; target may then be partly
// updated.
template <typename Target>
Status ApplyOptions(const std::vector<OptionSpec<Target>>& table, const AdapterOptions& options,
                    Target* target) {
  for (const auto& [name, value] : options) {
    const OptionSpec<Target>* found = nullptr;
    for (const auto& spec : table) {
      if (name == spec.name) {
        found = &spec;
        break;
      }
    }
    if (found == nullptr) return UnknownOption(name, OptionNames(table));
    Status s = found->set(name, value, target);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_OPTION_PARSER_H_
