// Strategic merge patch (kubectl's default patch type, and what client-side
// `kubectl apply` sends for built-in kinds): a JSON merge patch in which the lists
// the schema declares mergeable (patch_schema.h) are merged element by element by
// their merge key instead of replaced, with the directives
//   {"$patch": "replace"} / {"$patch": "delete"} in a map or a list element,
//   "$retainKeys": [...]                    keys of the map to keep (the rest go),
//   "$deleteFromPrimitiveList/<list>": [...] values removed from a list of scalars,
//   "$setElementOrder/<list>": [...]        the merged list's order: the elements it
//                                           names in its order, the ones only the
//                                           server has kept where they were stored.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/patch_schema.h"

namespace muster::server {

// Applies `patch` (an object) to `target` (an object of the kind `schema` describes;
// nullptr: no list is merged). InvalidArgument for a malformed directive (400 as
// upstream); FailedPrecondition for a list element without its merge key or a map
// whose members are not in its `$retainKeys` (422).
Result<nlohmann::json> ApplyStrategicMergePatch(nlohmann::json target, const nlohmann::json& patch,
                                                const PatchSchema* schema);

}  // namespace muster::server
