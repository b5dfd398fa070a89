// A minimal OpenAPI v3 surface: only what kubectl reads to learn that the server
// validates fields itself (the `fieldValidation` query parameter on each kind's PATCH
// operation). Without it kubectl apply/create insist on downloading a full schema
// for client-side validation and fail. Schemas are not published; /openapi/v2 404s.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace muster::server {

// GET /openapi/v3: the index of group-version documents.
nlohmann::json OpenApiV3Index();
// GET /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; nullopt if not served.
std::optional<nlohmann::json> OpenApiV3Document(const std::string& group,
                                                const std::string& version);

}  // namespace muster::server
