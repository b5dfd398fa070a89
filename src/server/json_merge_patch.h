// JSON merge patch (RFC 7386). PATCH requests with a strategic-merge-patch body
// are applied with it too: the two agree except for lists with merge keys, which
// a merge patch replaces whole (a documented simplification).
#pragma once

#include <nlohmann/json.hpp>

namespace muster::server {

// Applies `patch` to `target` in place: objects merge recursively, null deletes a
// key, anything else replaces.
void ApplyMergePatch(nlohmann::json& target, const nlohmann::json& patch);

}  // namespace muster::server
