// The grammar of option values given as text, and the error messages that
// name the offending option. The engine's option table and every adapter of
// lsm-driver use these, so a user sees the same wording whichever layer
// rejected a value:
//   engine option 'memtable_byts': unknown (did you mean 'memtable_bytes'? choose from: ...)
//   engine option 'wal': bad value 'sometimes' (choose from: off, async, sync)
//
// Grammar of values:
//   bool     true | false | 1 | 0
//   integer  optional '-', decimal digits; nothing else (no spaces, no '+', no hex)
//   size     decimal digits, optionally followed by one suffix K, M or G
//            meaning KiB, MiB, GiB (1K = 1024); case-insensitive
//   real     what strtod accepts as a finite number, the whole string
// Every number is range-checked after parsing.
#ifndef LSM_INCLUDE_LSM_OPTION_VALUES_H_
#define LSM_INCLUDE_LSM_OPTION_VALUES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/status.h"

namespace lsm {

// "engine option 'NAME': unknown (did you mean 'X'? choose from: a, b, c)";
// the suggestion only when a known name is a few edits away.
Status UnknownOption(std::string_view name, const std::vector<std::string>& known);

// "engine option 'NAME': bad value 'VALUE' (EXPECTED)".
Status BadOptionValue(std::string_view name, std::string_view value, std::string_view expected);

// The known name closest to `name` by edit distance when it is at most a
// third of the name's length away (at least 1), else "".
std::string ClosestName(std::string_view name, const std::vector<std::string>& known);

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

// An error's message without the code's prefix ("Invalid argument: "), for
// lists of several errors.
std::string ErrorMessage(const Status& s);

// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace lsm

#endif  // LSM_INCLUDE_LSM_OPTION_VALUES_H_
