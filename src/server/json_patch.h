// JSON patch (RFC 6902) over JSON pointers (RFC 6901): what `kubectl patch
// --type=json` sends as application/json-patch+json. The operations add, remove,
// replace, move, copy and test run in order on a copy; the first that fails stops
// the patch and nothing of it applies.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace muster::server {

// A patch of more operations than this is refused (kube-apiserver's limit; 413).
inline constexpr size_t kMaxJsonPatchOperations = 10000;

// Applies `patch` (an array of operation objects) to `document`. A patch that is not
// an array of operations with the members they need is InvalidArgument; an operation
// that does not apply (a missing path, an index out of range, a failed test) is
// FailedPrecondition, worded as kube-apiserver's JSON patch library words it
// ("testing value /spec/x failed: test failed").
Result<nlohmann::json> ApplyJsonPatch(nlohmann::json document, const nlohmann::json& patch);

// The reference tokens of an RFC 6901 pointer ("/a~1b/0" -> {"a/b", "0"}); "" is the
// whole document. InvalidArgument for a pointer that does not start with '/' or has
// a '~' not followed by '0' or '1'.
Result<std::vector<std::string>> ParseJsonPointer(const std::string& pointer);

}  // namespace muster::server
