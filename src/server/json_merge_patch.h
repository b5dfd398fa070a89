// JSON merge patch (RFC 7386): application/merge-patch+json, kubectl's
// `--type=merge` and what client-side `kubectl apply` sends for custom resources.
// Strategic merge patches have their own code (strategic_merge_patch.h).
#pragma once

#include <nlohmann/json.hpp>

namespace muster::server {

// Applies `patch` to `target` in place: objects merge recursively, null deletes a
// key, anything else replaces.
void ApplyMergePatch(nlohmann::json& target, const nlohmann::json& patch);

}  // namespace muster::server
