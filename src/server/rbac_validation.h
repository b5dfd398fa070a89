// Validation of the rbac.authorization.k8s.io/v1 kinds as kube-apiserver applies it
// (pkg/apis/rbac/validation), with its field paths and messages:
// - Role, ClusterRole: every rule has verbs; a rule is either about resources
//   (apiGroups and resources required) or about nonResourceURLs (never both, and
//   never in a namespaced Role). A ClusterRole's aggregationRule is stored but not
//   acted on (no aggregation controller; the default roles list their rules whole).
// - RoleBinding, ClusterRoleBinding: roleRef.apiGroup is rbac.authorization.k8s.io,
//   roleRef.kind Role or ClusterRole (ClusterRole only for a ClusterRoleBinding),
//   roleRef.name a path segment; subjects are User or Group (apiGroup
//   rbac.authorization.k8s.io) or ServiceAccount (apiGroup "", a namespace required
//   in a ClusterRoleBinding), each named. An empty apiGroup is taken as v1's default.
// - On update roleRef cannot change.
// Beyond upstream, sizes are bounded (rbac_policy.h: rules, entries per list,
// subjects, string length) so no object makes authorization expensive.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

bool IsRbacType(const control::ResourceType& type);

// The problems of `object` (a whole object of RBAC `type`); empty when valid.
std::vector<StatusCause> ValidateRbacObject(const control::ResourceType& type,
                                            const nlohmann::json& object);

// A binding's roleRef cannot change once created.
void ValidateRbacUpdate(const control::ResourceType& type, const nlohmann::json& current,
                        const nlohmann::json& next, std::vector<StatusCause>& out);

}  // namespace muster::server
