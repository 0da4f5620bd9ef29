#include "lsm/option_values.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lsm {

namespace {

std::string Prefix(std::string_view name) {
  std::string s = "engine option '";
  s += name;
  s += "'";
  return s;
}

// Accumulates decimal digits; false on no digits, a non-digit or overflow.
bool ParseDigits(std::string_view digits, uint64_t* out) {
  if (digits.empty()) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

std::string RangeText(const char* what, const std::string& min, const std::string& max) {
  return std::string(what) + " in [" + min + ", " + max + "]";
}

}  // namespace

std::string ErrorMessage(const Status& s) {
  const std::string text = s.ToString();
  const size_t colon = text.find(": ");
  return s.ok() || colon == std::string::npos ? text : text.substr(colon + 2);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& name : names) {
    if (!s.empty()) s += ", ";
    s += name;
  }
  return s;
}

std::string ClosestName(std::string_view name, const std::vector<std::string>& known) {
  // Levenshtein distance, one row at a time: names are short.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : known) {
    const size_t d = distance(name, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

Status UnknownOption(std::string_view name, const std::vector<std::string>& known) {
  const std::string closest = ClosestName(name, known);
  const std::string hint = closest.empty() ? "" : "did you mean '" + closest + "'? ";
  return Status::InvalidArgument(Prefix(name) + ": unknown (" + hint +
                                 "choose from: " + JoinNames(known) + ")");
}

Status BadOptionValue(std::string_view name, std::string_view value, std::string_view expected) {
  std::string msg = Prefix(name) + ": bad value '";
  msg += value;
  msg += "' (";
  msg += expected;
  msg += ")";
  return Status::InvalidArgument(msg);
}

Status ParseBool(std::string_view name, std::string_view value, bool* out) {
  if (value == "true" || value == "1") {
    *out = true;
  } else if (value == "false" || value == "0") {
    *out = false;
  } else {
    return BadOptionValue(name, value, "choose from: true, false, 1, 0");
  }
  return Status::OK();
}

Status ParseInt64(std::string_view name, std::string_view value, int64_t min, int64_t max,
                  int64_t* out) {
  const std::string expected =
      RangeText("expected an integer", std::to_string(min), std::to_string(max));
  const bool negative = !value.empty() && value[0] == '-';
  uint64_t magnitude = 0;
  if (!ParseDigits(negative ? value.substr(1) : value, &magnitude)) {
    return BadOptionValue(name, value, expected);
  }
  int64_t v = 0;
  if (negative) {
    // -(INT64_MIN) does not fit in int64_t, so compare magnitudes unsigned.
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) {
      return BadOptionValue(name, value, expected);
    }
    v = magnitude == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN
                                                          : -static_cast<int64_t>(magnitude);
  } else {
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return BadOptionValue(name, value, expected);
    v = static_cast<int64_t>(magnitude);
  }
  if (v < min || v > max) return BadOptionValue(name, value, expected);
  *out = v;
  return Status::OK();
}

Status ParseSize(std::string_view name, std::string_view value, uint64_t min, uint64_t max,
                 uint64_t* out) {
  const std::string expected =
      RangeText("expected a byte count, optional suffix K/M/G = KiB/MiB/GiB,",
                std::to_string(min), std::to_string(max));
  std::string_view digits = value;
  int shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  uint64_t v = 0;
  if (!ParseDigits(digits, &v) || v > (UINT64_MAX >> shift)) {
    return BadOptionValue(name, value, expected);
  }
  v <<= shift;
  if (v < min || v > max) return BadOptionValue(name, value, expected);
  *out = v;
  return Status::OK();
}

Status ParseReal(std::string_view name, std::string_view value, double min, double max,
                 double* out) {
  char buf[32];
  auto fmt = [&buf](double d) {
    std::snprintf(buf, sizeof(buf), "%g", d);
    return std::string(buf);
  };
  const std::string expected = RangeText("expected a number", fmt(min), fmt(max));
  // strtod skips leading spaces and needs a terminator; reject spaces
  // ourselves so " 1" is as bad as "1 ".
  if (value.empty() || value.size() > 64 || std::isspace(static_cast<unsigned char>(value[0]))) {
    return BadOptionValue(name, value, expected);
  }
  const std::string copy(value);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE || !std::isfinite(v) || v < min ||
      v > max) {
    return BadOptionValue(name, value, expected);
  }
  *out = v;
  return Status::OK();
}

Status ParseChoice(std::string_view name, std::string_view value,
                   const std::vector<std::string>& choices, size_t* index) {
  for (size_t i = 0; i < choices.size(); ++i) {
    if (value == choices[i]) {
      *index = i;
      return Status::OK();
    }
  }
  return BadOptionValue(name, value, "choose from: " + JoinNames(choices));
}

}  // namespace lsm
