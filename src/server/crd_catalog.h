// The CustomResourceDefinitions (apiextensions.k8s.io/v1) of the custom kinds muster
// serves (Kueue, Volcano, Kubeflow, JobSet... from control/resource_types.h), read-only:
// `kubectl get crd` lists them and `kubectl get crd clusterqueues.kueue.x-k8s.io -o
// yaml` shows names, scope, versions and schema (openapi_schemas.h). muster's kinds are
// built in, so creating, changing or deleting a CRD is a 405 saying so. Generated from
// the kind table on each request; nothing is stored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/resource_types.h"
#include "server/api_handler.h"

namespace muster::server {

inline constexpr const char* kCrdGroup = "apiextensions.k8s.io";

// CustomResourceDefinition itself as a served type (cluster-scoped, get and list), for
// the OpenAPI document of apiextensions.k8s.io/v1; not in the kind table, whose
// kinds the store, the garbage collector and the kube adapter all handle.
const control::ResourceType& CrdType();

// The APIResource entries of apiextensions.k8s.io/v1 for discovery.
nlohmann::json CrdApiResources();

// Whether `type` is what a cluster installs by CRD: not a Kubernetes group, not one
// of muster's scheduler views or reviews.
bool IsCustomResource(const control::ResourceType& type);

// The CRD of `type`, created at `created_unix` (when this server started).
nlohmann::json CustomResourceDefinition(const control::ResourceType& type, int64_t created_unix);

// nullopt when `request` is not under /apis/apiextensions.k8s.io/v1/.
std::optional<ApiResponse> HandleCrdRoute(const ApiRequest& request);

}  // namespace muster::server
