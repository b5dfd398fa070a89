// A Namespace's life, as kube-apiserver keeps it (its namespace strategy and REST
// storage, and the NamespaceLifecycle admission plugin):
//
// - On create a Namespace gets status.phase Active and the "kubernetes" finalizer in
//   spec.finalizers, and always carries the label kubernetes.io/metadata.name=<name>.
//   An update keeps spec.finalizers and the status as stored (the namespace
//   controller and PUT .../finalize, namespace_finalize.h, change them).
// - Deleting one whose spec.finalizers is not empty only marks it: deletionTimestamp
//   set and status.phase Terminating (graceful_deletion.h). The namespace controller
//   (namespace_controller.h) then deletes everything in it and takes "kubernetes" off;
//   the Namespace goes with its last finalizer.
// - default, kube-system and kube-public may not be deleted (403 Forbidden).
// - Nothing new may be created in a terminating namespace (403 Forbidden, cause
//   NamespaceTerminating on metadata.namespace); updates and deletes go on.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

inline constexpr char kNamespaceFinalizer[] = "kubernetes";
inline constexpr char kNamespaceNameLabel[] = "kubernetes.io/metadata.name";

bool IsNamespaceType(const control::ResourceType& type);
// A stored object is a v1 Namespace.
bool IsNamespaceObject(const nlohmann::json& object);

// Upstream's defaults for a Namespace; `current` is the stored one on an update
// (nullptr on create). Without a name yet (generateName), the label is set by
// LabelNamespaceName once it has one.
void DefaultNamespace(nlohmann::json& ns, const nlohmann::json* current);
void LabelNamespaceName(nlohmann::json& ns);

// A new Namespace `name` as the server makes it (bootstrap, a write into a missing
// namespace), defaults applied.
nlohmann::json NewNamespace(const std::string& name);

// spec.finalizers names something: a delete only marks the Namespace.
bool HeldBySpecFinalizers(const nlohmann::json& ns);

// Whether this Namespace may never be deleted (default, kube-system, kube-public).
bool ImmortalNamespace(const std::string& name);
std::optional<ApiError> RefuseNamespaceDelete(const std::string& name);

// The refusal of a create of `type` named `name` (may be empty: generateName) into
// namespace `ns` while that namespace is terminating; nullopt when it may go on.
std::optional<ApiError> RefuseCreateInTerminatingNamespace(const control::ObjectReader& store,
                                                           const control::ResourceType& type,
                                                           const std::string& ns,
                                                           const std::string& name);

}  // namespace muster::server
