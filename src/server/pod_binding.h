// POST /api/v1/namespaces/{ns}/pods/{name}/binding: the v1 Binding subresource a
// scheduler uses to place a pod, with the Kubernetes API server's semantics (what
// muster kube sends to a real cluster, and what its tests send to the fake one).
#pragma once

#include <optional>
#include <string>

#include "server/api_handler.h"
#include "server/object_store.h"
#include "server/pod_paths.h"

namespace muster::server {

using PodBindingTarget = PodName;

// The pod a ".../namespaces/{ns}/pods/{name}/binding" path names; nullopt otherwise.
std::optional<PodBindingTarget> MatchPodBindingPath(const std::string& path);

// Body: {"apiVersion":"v1","kind":"Binding","metadata":{"name":..,"uid":..},
// "target":{"kind":"Node","name":..}}. Sets spec.nodeName, copies the Binding's
// annotations and sets the PodScheduled condition; answers 201 with a Success Status.
// 404 when the pod is missing; 409 Conflict when it already has a node (any node, as
// upstream: a retried bind must check where the pod went) or metadata.uid names
// another pod; 400 for a malformed Binding; 405 for other methods.
ApiResult HandlePodBinding(ObjectStore& store, const PodBindingTarget& target,
                           const ApiRequest& request);

}  // namespace muster::server
