#include "server/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <string>

namespace muster::server {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 256;

json Scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (std::regex_match(s, kInt)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;  // out of range: keep the text
    }
  }
  if (std::regex_match(s, kFloat)) {
    try {
      return std::stod(s);
    } catch (...) {
      return s;
    }
  }
  return s;
}

Result<json> Convert(const YAML::Node& node, int depth) {
  if (depth > kMaxDepth) return InvalidArgument("document nested too deeply");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return Scalar(node);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) {
        auto v = Convert(item, depth + 1);
        if (!v.ok()) return v.status();
        arr.push_back(std::move(*v));
      }
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) return InvalidArgument("map keys must be scalars");
        auto v = Convert(kv.second, depth + 1);
        if (!v.ok()) return v.status();
        obj[kv.first.Scalar()] = std::move(*v);
      }
      return obj;
    }
  }
  return json(nullptr);
}

// Same guard as the api decoder: reject flow-nesting bombs before yaml-cpp's
// recursive parser sees them.
bool TooDeep(std::string_view text) {
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<std::vector<json>> ParseDocuments(std::string_view text) {
  if (TooDeep(text)) return InvalidArgument("document nested too deeply");
  std::vector<json> out;
  try {
    for (const auto& doc : YAML::LoadAll(std::string(text))) {
      auto v = Convert(doc, 0);
      if (!v.ok()) return v.status();
      if (!v->is_null()) out.push_back(std::move(*v));
    }
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("invalid YAML or JSON: ") + e.what());
  }
  return out;
}

}  // namespace muster::server
