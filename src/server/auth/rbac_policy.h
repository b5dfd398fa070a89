// The rbac.authorization.k8s.io/v1 objects as the authorizer reads them (Role,
// ClusterRole, RoleBinding, ClusterRoleBinding), read from their stored JSON, and
// upstream's matching rules (plugin/pkg/auth/authorizer/rbac): a rule allows a
// request when its verbs, apiGroups, resources (with "*", "res/sub" and "*/sub") and
// resourceNames all match, or, for a non-resource request, its verbs and
// nonResourceURLs ("*" or a trailing "*" as a prefix) do.
//
// Reading is bounded and never fails: what a stored object holds beyond the limits
// (which validation enforces on write) is ignored, so a hostile object cannot make
// evaluation expensive.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/auth/identity.h"
#include "server/auth/request_attributes.h"

namespace muster::server::auth {

inline constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";
// Bounds on one object (validation rejects more; reading ignores the rest).
inline constexpr size_t kMaxRules = 512;
inline constexpr size_t kMaxRuleEntries = 256;  // per list of a rule
inline constexpr size_t kMaxSubjects = 1024;
inline constexpr size_t kMaxRbacString = 1024;

struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;

  bool operator==(const PolicyRule&) const = default;
};

struct Subject {
  std::string kind;  // "User", "Group", "ServiceAccount"
  std::string name;
  std::string namespace_;  // ServiceAccount only
};

struct RoleRef {
  std::string kind;  // "Role" or "ClusterRole"
  std::string name;
};

struct RoleObject {
  std::string namespace_;  // "" for a ClusterRole
  std::string name;
  std::vector<PolicyRule> rules;
};

struct BindingObject {
  std::string namespace_;  // "" for a ClusterRoleBinding
  std::string name;
  RoleRef role_ref;
  std::vector<Subject> subjects;
};

// Every RBAC object the authorizer consults, indexed for evaluation.
struct RbacPolicy {
  std::map<std::string, RoleObject> cluster_roles;                  // by name
  std::map<std::pair<std::string, std::string>, RoleObject> roles;  // (namespace, name)
  std::vector<BindingObject> cluster_role_bindings;
  std::map<std::string, std::vector<BindingObject>> role_bindings;  // by namespace
};

PolicyRule ReadRule(const nlohmann::json& rule);
RoleObject ReadRole(const nlohmann::json& object);
BindingObject ReadBinding(const nlohmann::json& object);
nlohmann::json RuleToJson(const PolicyRule& rule);

bool VerbMatches(const PolicyRule& rule, const std::string& verb);
bool RuleAllows(const PolicyRule& rule, const RequestAttributes& request);
// Whether `subject` names `user`; a ServiceAccount subject is the user
// "system:serviceaccount:<namespace>:<name>" (its namespace defaulting to the
// binding's, `binding_namespace`).
bool SubjectMatches(const Subject& subject, const UserInfo& user,
                    const std::string& binding_namespace);

}  // namespace muster::server::auth
