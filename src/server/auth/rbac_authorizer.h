// Authorization as kube-apiserver does it with --authorization-mode=RBAC: members
// of system:masters may do everything (its privileged-group authorizer); anyone
// else is allowed a request when a ClusterRoleBinding, or a RoleBinding in the
// request's namespace, names them (User, Group or ServiceAccount) and the role it
// refers to has a rule that allows the request (rbac_policy.h). Otherwise the
// request is denied with upstream's 403 Status (ForbiddenError).
//
// RbacAuthorizer reads the RBAC objects from the store and keeps them indexed in
// memory; any committed change to an RBAC kind invalidates that copy, so a request
// answered after a binding's create sees it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/api_status.h"
#include "server/auth/rbac_policy.h"
#include "server/auth/request_attributes.h"
#include "server/object_store.h"

namespace muster::server::auth {

struct Decision {
  bool allowed = false;
  // Allowed: which binding allowed it ("RBAC: allowed by RoleBinding ..."). Denied:
  // the bindings whose role is missing ("RBAC: clusterrole... not found"), or "".
  std::string reason;
};

// What `user` may do in namespace `namespace_` (cluster-wide rules included), for
// SelfSubjectRulesReview.
struct UserRules {
  std::vector<PolicyRule> resource_rules;
  std::vector<PolicyRule> non_resource_rules;
  std::vector<std::string> errors;  // missing roles
};

// Pure evaluation of `policy` (system:masters is not special here).
Decision Evaluate(const RbacPolicy& policy, const RequestAttributes& request);
UserRules RulesFor(const RbacPolicy& policy, const UserInfo& user, const std::string& namespace_);

// The store key of each RBAC kind.
inline constexpr char kRolesKey[] = "roles.rbac.authorization.k8s.io";
inline constexpr char kClusterRolesKey[] = "clusterroles.rbac.authorization.k8s.io";
inline constexpr char kRoleBindingsKey[] = "rolebindings.rbac.authorization.k8s.io";
inline constexpr char kClusterRoleBindingsKey[] = "clusterrolebindings.rbac.authorization.k8s.io";

// Builds the policy from stored objects (each list is what ObjectStore::List gives).
RbacPolicy BuildPolicy(const std::vector<nlohmann::json>& cluster_roles,
                       const std::vector<nlohmann::json>& roles,
                       const std::vector<nlohmann::json>& cluster_role_bindings,
                       const std::vector<nlohmann::json>& role_bindings);

// The 403 of a denied request, worded as upstream:
// jobs.batch "x" is forbidden: User "bob" cannot delete resource "jobs" in API group
// "batch" in the namespace "team-a"[: <reason>].
ApiError ForbiddenError(const RequestAttributes& request, const std::string& reason);

class RbacAuthorizer {
 public:
  explicit RbacAuthorizer(ObjectStore& store);
  ~RbacAuthorizer();
  RbacAuthorizer(const RbacAuthorizer&) = delete;
  RbacAuthorizer& operator=(const RbacAuthorizer&) = delete;

  Decision Authorize(const RequestAttributes& request) const;
  UserRules Rules(const UserInfo& user, const std::string& namespace_) const;
  // The rules of the Role `name` in `namespace_` or of the ClusterRole `name`
  // (`kind`); nullopt when it does not exist.
  std::optional<std::vector<PolicyRule>> RoleRules(const std::string& kind,
                                                   const std::string& namespace_,
                                                   const std::string& name) const;

 private:
  std::shared_ptr<const RbacPolicy> Policy() const;

  ObjectStore& store_;
  WatchHub::SubscriptionId subscription_ = 0;
  std::atomic<uint64_t> changes_{1};
  mutable std::mutex mu_;
  mutable uint64_t built_ = 0;
  mutable std::shared_ptr<const RbacPolicy> policy_;
};

}  // namespace muster::server::auth
