#include "driver/yaml_json.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace lsmbench {
namespace driver {

namespace {

bool ParseInteger(const std::string& s, Json* out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); k++) {
    if (s[k] < '0' || s[k] > '9') return false;
  }
  errno = 0;
  if (s[0] == '-') {
    const long long v = strtoll(s.c_str(), nullptr, 10);
    if (errno != 0) return false;
    *out = static_cast<int64_t>(v);
  } else {
    const unsigned long long v = strtoull(s.c_str() + i, nullptr, 10);
    if (errno != 0) return false;
    *out = static_cast<uint64_t>(v);
  }
  return true;
}

bool ParseReal(const std::string& s, Json* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double d = strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  // strtod also accepts "inf", "nan" and hex floats; YAML plain numbers
  // never need them, and a config value of "nan" is better left a string
  // that the schema then rejects.
  for (char c : s) {
    if (!(std::strchr("0123456789+-.eE", c))) return false;
  }
  *out = d;
  return true;
}

Status Convert(const YAML::Node& node, const std::string& path, Json* out) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      *out = nullptr;
      return Status::OK();
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") {  // quoted: a string, whatever it looks like
        *out = s;
        return Status::OK();
      }
      if (s == "true" || s == "True" || s == "TRUE") {
        *out = true;
      } else if (s == "false" || s == "False" || s == "FALSE") {
        *out = false;
      } else if (s == "~" || s == "null" || s == "Null" || s == "NULL") {
        *out = nullptr;
      } else if (!ParseInteger(s, out) && !ParseReal(s, out)) {
        *out = s;
      }
      return Status::OK();
    }
    case YAML::NodeType::Sequence: {
      *out = Json::array();
      size_t i = 0;
      for (const auto& item : node) {
        Json j;
        Status st = Convert(item, path + "[" + std::to_string(i++) + "]", &j);
        if (!st.ok()) return st;
        out->push_back(std::move(j));
      }
      return Status::OK();
    }
    case YAML::NodeType::Map: {
      *out = Json::object();
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (!it->first.IsScalar()) {
          return Status::InvalidArgument(path + ": map keys must be plain strings");
        }
        const std::string key = it->first.Scalar();
        if (out->contains(key)) {
          return Status::InvalidArgument((path.empty() ? key : path + "." + key) +
                                         ": duplicate field");
        }
        Json j;
        Status st = Convert(it->second, path.empty() ? key : path + "." + key, &j);
        if (!st.ok()) return st;
        (*out)[key] = std::move(j);
      }
      return Status::OK();
    }
  }
  return Status::InvalidArgument(path + ": unsupported YAML node");
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Status YamlToJson(const std::string& text, Json* out) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                                   ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return Convert(root, "", out);
}

Status ReadConfigFile(const std::string& path, Json* out) {
  std::ifstream in(path);
  if (!in) {
    return Status::InvalidArgument(path + ": cannot read (" + std::strerror(errno) + ")");
  }
  std::stringstream buf;
  buf << in.rdbuf();
  if (EndsWith(path, ".json")) {
    try {
      *out = Json::parse(buf.str());
    } catch (const Json::parse_error& e) {
      return Status::InvalidArgument(path + ": JSON syntax error: " + e.what());
    }
    return Status::OK();
  }
  Status s = YamlToJson(buf.str(), out);
  if (!s.ok()) return Status::InvalidArgument(path + ": " + ErrorText(s));
  return Status::OK();
}

}  // namespace driver
}  // namespace lsmbench
