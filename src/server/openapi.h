// The OpenAPI v3 surface kubectl reads: per group-version, each kind's PATCH operation
// with the `fieldValidation` query parameter (so kubectl apply/create leave validation
// to the server instead of insisting on a schema of their own) and the kinds' schemas
// (openapi_schemas.h), which `kubectl explain` renders. The PATCH operations declare
// no request body media types, so kubectl never takes a strategic merge patch from
// them: it keeps its compiled-in choice (strategic for built-in kinds, JSON merge for
// custom resources). /openapi/v2 404s.
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
