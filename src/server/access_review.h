// authorization.k8s.io/v1 self reviews, what `kubectl auth can-i` sends:
// - SelfSubjectAccessReview (POST .../selfsubjectaccessreviews): may the caller do
//   spec.resourceAttributes (verb, group, resource, subresource, namespace, name) or
//   spec.nonResourceAttributes (verb, path)? Answered 201 with status.allowed and the
//   authorizer's reason, as upstream.
// - SelfSubjectRulesReview (POST .../selfsubjectrulesreviews): the caller's rules in
//   spec.namespace (`kubectl auth can-i --list`).
// Neither is stored. Without an authorizer (serve without authentication) the caller
// may do everything, and the answers say so.
#pragma once

#include <optional>
#include <string>

#include "server/api_handler.h"
#include "server/auth/rbac_authorizer.h"

namespace muster::server {

// nullopt when `path` (normalized, no trailing slash) is not a self review; any
// method but POST is 405 there.
std::optional<ApiResponse> HandleAccessReview(const ApiRequest& request, const std::string& path,
                                              const auth::RbacAuthorizer* authorizer);

}  // namespace muster::server
