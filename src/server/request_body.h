// CheckRequestBody: what every request body must satisfy before any handler parses
// it, checked once in ApiHandler for every route: a media type the server decodes
// (415 otherwise, with the accepted types, as kube-apiserver answers `text/plain`)
// and a nesting depth the recursive JSON code can take (400 otherwise). The size
// limit (413) is the HTTP layer's (http_parser.h). Then, for creates and updates,
// the object the body carries, checked against the request's path.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "server/api_handler.h"
#include "server/api_status.h"
#include "server/request_target.h"

namespace muster::server {

// Deeper than any manifest (tens of levels); far below what exhausts a stack.
inline constexpr size_t kMaxBodyNestingDepth = 1000;

// The media type of a Content-Type value: "application/json; charset=utf-8" ->
// "application/json", lower-cased.
std::string MediaType(std::string_view content_type);

std::optional<ApiError> CheckRequestBody(const ApiRequest& request);

// The request's object: its JSON, or its one YAML document (400 otherwise).
Result<nlohmann::json> ParseRequestBody(const ApiRequest& r);

// Checks kind, apiVersion, namespace and name of a request's object against its path
// and fills in what is missing. Returns the object's metadata.
Result<nlohmann::json*> CheckBodyAgainstTarget(nlohmann::json& body, const RequestTarget& t);

}  // namespace muster::server
