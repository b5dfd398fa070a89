// Privilege-escalation prevention for the RBAC kinds, as kube-apiserver's RBAC
// storage does it: a user may create or change a Role or ClusterRole only with the
// `escalate` verb on it or when they already hold every permission its rules grant
// (in its namespace; cluster-wide for a ClusterRole), and a RoleBinding or
// ClusterRoleBinding only with the `bind` verb on the role it refers to or when they
// already hold every permission of that role. system:masters is never checked.
// Coverage is upstream's: each (verb, group, resource, name) or (verb, URL) the new
// rules name must be covered by one of the user's rules; "*" only by "*".
#pragma once

#include <optional>
#include <string>

#include "server/api_handler.h"
#include "server/api_status.h"
#include "server/auth/rbac_authorizer.h"

namespace muster::server {

// Whether `rules` are all covered by `owner` (upstream's validation.Covers).
bool RulesCovered(const std::vector<auth::PolicyRule>& owner,
                  const std::vector<auth::PolicyRule>& rules);

// nullopt unless `request` (already authorized, its `path` normalized) writes an
// RBAC object that would grant its user more than they hold: then the 403.
std::optional<ApiError> CheckRbacEscalation(const ObjectStore& store,
                                            const auth::RbacAuthorizer* authorizer,
                                            const ApiRequest& request, const std::string& path);

}  // namespace muster::server
