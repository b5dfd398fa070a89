// CheckRequestBody: what every request body must satisfy before any handler parses
// it, checked once in ApiHandler for every route: a media type the server decodes
// (415 otherwise, with the accepted types, as kube-apiserver answers `text/plain`)
// and a nesting depth the recursive JSON code can take (400 otherwise). The size
// limit (413) is the HTTP layer's (http_parser.h).
#pragma once

#include <optional>
#include <string_view>

#include "server/api_handler.h"
#include "server/api_status.h"

namespace muster::server {

// Deeper than any manifest (tens of levels); far below what exhausts a stack.
inline constexpr size_t kMaxBodyNestingDepth = 1000;

// The media type of a Content-Type value: "application/json; charset=utf-8" ->
// "application/json", lower-cased.
std::string MediaType(std::string_view content_type);

std::optional<ApiError> CheckRequestBody(const ApiRequest& request);

}  // namespace muster::server
