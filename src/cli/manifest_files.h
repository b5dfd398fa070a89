// The objects of `-f PATH...` for the client commands: files, directories (read
// recursively in name order, *.yaml, *.yml, *.json) or "-" for stdin; multi-document
// YAML or JSON, with `kind: List` expanded into its items.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::cli {

struct ManifestObject {
  std::string source;  // the file it came from ("<stdin>" for -)
  nlohmann::json object;
};

Result<std::vector<ManifestObject>> ReadManifestObjects(const std::vector<std::string>& paths);

}  // namespace muster::cli
