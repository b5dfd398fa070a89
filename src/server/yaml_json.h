// YAML -> JSON for request bodies sent as application/yaml and for the manifests
// `muster serve -f` loads. Plain scalars follow the YAML 1.2 core schema (null,
// booleans, integers, floats); quoted scalars stay strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace muster::server {

// Every document of a YAML stream (or one JSON text). Empty documents are skipped.
// kInvalidArgument for malformed input, never an exception.
Result<std::vector<nlohmann::json>> ParseDocuments(std::string_view text);

}  // namespace muster::server
