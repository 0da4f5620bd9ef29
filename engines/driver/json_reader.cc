#include "driver/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace lsmbench {
namespace driver {

namespace {

const char* TypeName(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string Num(double d) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.15g", d);
  return buf;
}

// Names the violated bound.
std::string RangeText(double v, double min, double max) {
  return v < min ? "must be >= " + Num(min) : "must be <= " + Num(max);
}

std::string Quoted(const Json& j) {
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

std::string ErrorText(const Status& s) {
  std::string text = s.ToString();
  constexpr std::string_view kPrefix = "Invalid argument: ";
  if (text.compare(0, kPrefix.size(), kPrefix) == 0) text.erase(0, kPrefix.size());
  return text;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

Status JsonObject::Open(const Json& json, const std::string& path,
                        const std::vector<std::string>& allowed, JsonObject* out) {
  if (!json.is_object()) {
    return Status::InvalidArgument((path.empty() ? std::string("configuration") : path) +
                                   ": expected an object, got " + TypeName(json));
  }
  std::vector<std::string> sorted = allowed;
  std::sort(sorted.begin(), sorted.end());
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!std::binary_search(sorted.begin(), sorted.end(), it.key())) {
      const std::string full = path.empty() ? it.key() : path + "." + it.key();
      return Status::InvalidArgument(full + ": unknown field (allowed: " + JoinNames(sorted) + ")");
    }
  }
  out->json_ = &json;
  out->path_ = path;
  return Status::OK();
}

bool JsonObject::Has(const std::string& name) const {
  return json_ != nullptr && json_->contains(name);
}

std::string JsonObject::PathOf(const std::string& name) const {
  return path_.empty() ? name : path_ + "." + name;
}

Status JsonObject::Error(const std::string& name, const std::string& what) const {
  return Status::InvalidArgument(PathOf(name) + ": " + what);
}

Status JsonObject::Required(const std::string& name) const {
  if (!Has(name)) return Error(name, "required field is missing");
  return Status::OK();
}

Status JsonObject::GetString(const std::string& name, std::string* out) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (!v.is_string()) return Error(name, std::string("expected a string, got ") + TypeName(v));
  *out = v.get<std::string>();
  return Status::OK();
}

Status JsonObject::GetBool(const std::string& name, bool* out) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (!v.is_boolean()) {
    return Error(name, std::string("expected true or false, got ") + TypeName(v));
  }
  *out = v.get<bool>();
  return Status::OK();
}

Status JsonObject::GetDouble(const std::string& name, double min, double max, double* out) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (!v.is_number()) return Error(name, std::string("expected a number, got ") + TypeName(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    return Error(name, (std::isfinite(d) ? RangeText(d, min, max) : std::string("must be finite")) +
                           " (got " + Quoted(v) + ")");
  }
  *out = d;
  return Status::OK();
}

Status JsonObject::GetUint(const std::string& name, uint64_t min, uint64_t max,
                           uint64_t* out) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (!v.is_number()) return Error(name, std::string("expected an integer, got ") + TypeName(v));
  uint64_t u = 0;
  if (v.is_number_unsigned()) {
    u = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) {
      return Error(name, "must be a non-negative integer (got " + Quoted(v) + ")");
    }
    u = static_cast<uint64_t>(v.get<int64_t>());
  } else {
    const double d = v.get<double>();
    if (!(d >= 0) || d != std::floor(d) || d >= 1.8e19) {
      return Error(name, "must be a non-negative integer (got " + Quoted(v) + ")");
    }
    u = static_cast<uint64_t>(d);
  }
  if (u < min || u > max) {
    const std::string range =
        u < min ? "must be >= " + std::to_string(min) : "must be <= " + std::to_string(max);
    return Error(name, range + " (got " + Quoted(v) + ")");
  }
  *out = u;
  return Status::OK();
}

Status JsonObject::GetChoice(const std::string& name, const std::vector<std::string>& choices,
                             size_t* index) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    for (size_t i = 0; i < choices.size(); i++) {
      if (choices[i] == s) {
        *index = i;
        return Status::OK();
      }
    }
  }
  return Error(name, "unknown value " + Quoted(v) + " (choose from: " + JoinNames(choices) + ")");
}

Status JsonObject::GetStringMap(const std::string& name,
                                std::map<std::string, std::string>* out) const {
  if (!Has(name)) return Status::OK();
  const Json& v = Raw(name);
  if (!v.is_object()) return Error(name, std::string("expected an object, got ") + TypeName(v));
  for (auto it = v.begin(); it != v.end(); ++it) {
    const Json& e = it.value();
    if (e.is_string()) {
      (*out)[it.key()] = e.get<std::string>();
    } else if (e.is_number() || e.is_boolean()) {
      (*out)[it.key()] = e.dump();
    } else {
      return Status::InvalidArgument(PathOf(name) + "." + it.key() +
                                     ": expected a string, number or boolean, got " +
                                     TypeName(e));
    }
  }
  return Status::OK();
}

Status JsonObject::GetNumberMap(const std::string& name, const std::vector<std::string>& allowed,
                                std::map<std::string, double>* out) const {
  if (!Has(name)) return Status::OK();
  JsonObject sub;
  Status s = GetObject(name, allowed, &sub);
  if (!s.ok()) return s;
  out->clear();
  for (const auto& key : allowed) {
    if (!sub.Has(key)) continue;
    double d = 0;
    s = sub.GetDouble(key, 0.0, 1e300, &d);
    if (!s.ok()) return s;
    (*out)[key] = d;
  }
  return Status::OK();
}

Status JsonObject::GetObject(const std::string& name, const std::vector<std::string>& allowed,
                             JsonObject* out) const {
  if (!Has(name)) return Error(name, "required field is missing");
  return Open(Raw(name), PathOf(name), allowed, out);
}

}  // namespace driver
}  // namespace lsmbench
