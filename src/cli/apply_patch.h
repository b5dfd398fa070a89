// `muster apply` as kubectl's client-side apply: the object keeps the manifest it
// was last applied from in the annotation kubectl.kubernetes.io/last-applied-
// configuration, and an update sends a JSON merge patch (RFC 7386) made three ways:
// what the new manifest sets and the stored object lacks or has otherwise is set;
// what the last manifest set and the new one no longer does is removed; everything
// else, what the server filled in (a Job's generated selector and pod labels, a
// Service's clusterIP, defaults) and what other writers set, stays as it is. Lists
// are replaced whole, as a JSON merge patch does (kubectl's strategic merge of
// built-in kinds' lists by key is not made). Pure functions, no I/O.
#pragma once

#include <nlohmann/json.hpp>

namespace muster::cli {

inline constexpr char kLastAppliedAnnotation[] = "kubectl.kubernetes.io/last-applied-configuration";

// `manifest` as it is applied: without status, with the last-applied annotation set
// to the manifest itself (as kubectl writes it: compact JSON, without the
// annotation).
nlohmann::json WithLastApplied(const nlohmann::json& manifest);

// The merge patch from `current` (the stored object) to `modified` (WithLastApplied
// of the new manifest), given `original` (the manifest last applied; null when the
// object has none). Empty object: nothing to change.
nlohmann::json ThreeWayMergePatch(const nlohmann::json& original, const nlohmann::json& modified,
                                  const nlohmann::json& current);

// The manifest last applied to `object` (null when it has none or it does not parse).
nlohmann::json LastApplied(const nlohmann::json& object);

}  // namespace muster::cli
