// Discovery documents: what kubectl reads before anything else to map a kind or a
// short name ("cq") to a resource path and learn whether it is namespaced. Served
// in the legacy (non-aggregated) shapes, which every kubectl falls back to when the
// response is plain application/json.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace muster::server {

// GET /api: APIVersions.
nlohmann::json CoreApiVersions(const std::string& server_address);
// GET /apis: APIGroupList.
nlohmann::json ApiGroupList();
// GET /apis/<group>: APIGroup; nullopt for an unknown group.
std::optional<nlohmann::json> ApiGroupDocument(const std::string& group);
// GET /api/v1 (group "") or /apis/<group>/<version>: APIResourceList.
std::optional<nlohmann::json> ApiResourceList(const std::string& group, const std::string& version);
// GET /version.
nlohmann::json VersionInfo();

}  // namespace muster::server
