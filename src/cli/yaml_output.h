// JSON -> YAML for `muster get -o yaml`: block style like kubectl, strings that a
// YAML reader would take for another type ("123", "true", "") quoted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace muster::cli {

std::string ToYaml(const nlohmann::json& value);

}  // namespace muster::cli
