#include "control/json_fields.h"

namespace muster::control {

const nlohmann::json& ObjectField(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace muster::control
