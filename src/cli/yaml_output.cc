#include "cli/yaml_output.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace muster::cli {
namespace {

using nlohmann::json;

// Would a plain scalar with this text read back as something other than a string
// (YAML 1.2 core schema, plus the 1.1 booleans older readers still apply)?
bool NeedsQuotes(const std::string& s) {
  static const std::regex kNonString(
      R"(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N|)"
      R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o[0-7]+|)"
      R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  return s.empty() || std::regex_match(s, kNonString);
}

void Emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [k, item] : v.items()) {
        out << YAML::Key << k << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.find('\n') != std::string::npos) {
        out << YAML::Literal << s;
      } else if (NeedsQuotes(s)) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      return;
    }
    case json::value_t::null:
      out << YAML::Null;
      return;
    default:
      out << v.dump();  // numbers and booleans as JSON writes them
  }
}

}  // namespace

std::string ToYaml(const json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  Emit(out, value);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace muster::cli
