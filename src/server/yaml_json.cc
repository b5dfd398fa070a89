#include "server/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "core/utf8.h"
#include "core/yaml_documents.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 256;

size_t Digits(std::string_view s, size_t i) {
  size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i - start;
}
size_t Sign(std::string_view s, size_t i) {
  return i < s.size() && (s[i] == '-' || s[i] == '+') ? 1 : 0;
}

// [-+]?[0-9]+ (by hand: std::regex_match was a visible share of a create's CPU).
bool IsInt(std::string_view s) {
  size_t i = Sign(s, 0);
  size_t n = Digits(s, i);
  return n > 0 && i + n == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloat(std::string_view s) {
  size_t i = Sign(s, 0);
  size_t whole = Digits(s, i);
  i += whole;
  if (i < s.size() && s[i] == '.') {
    size_t fraction = Digits(s, i + 1);
    if (whole == 0 && fraction == 0) return false;
    i += 1 + fraction;
  } else if (whole == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    i += 1 + Sign(s, i + 1);
    size_t exponent = Digits(s, i);
    if (exponent == 0) return false;
    i += exponent;
  }
  return i == s.size();
}

json Scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (IsInt(s)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;  // out of range: keep the text
    }
  }
  if (IsFloat(s)) {
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
  // yaml-cpp passes any bytes through; JSON's parser refuses what this refuses.
  if (size_t at = 0; !IsValidUtf8(text, &at)) {
    return InvalidArgument("invalid YAML: not UTF-8 (an ill-formed byte sequence at offset " +
                           std::to_string(at) + ")");
  }
  std::vector<json> out;
  try {
    // One document at a time with YAML::Load: yaml-cpp's LoadAll loops for ever on a
    // body such as "," (core/yaml_documents.h).
    for (const YamlDocumentText& part : SplitYamlDocuments(text)) {
      const YAML::Node doc = YAML::Load(std::string(part.text));
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
