#include "server/auth/rbac_authorizer.h"

#include <functional>

namespace muster::server::auth {
namespace {

using nlohmann::json;

std::string Quote(const std::string& s) { return json(s).dump(); }

std::string DescribeSubject(const Subject& s, const std::string& binding_namespace) {
  if (s.kind == "ServiceAccount") {
    const std::string ns = s.namespace_.empty() ? binding_namespace : s.namespace_;
    return "ServiceAccount " + Quote(s.name + "/" + ns);
  }
  return s.kind + " " + Quote(s.name);
}

// The role a binding refers to; nullptr with `error` set when it is missing.
const RoleObject* ResolveRole(const RbacPolicy& policy, const BindingObject& b,
                              std::string& error) {
  if (b.role_ref.kind == "ClusterRole") {
    auto it = policy.cluster_roles.find(b.role_ref.name);
    if (it != policy.cluster_roles.end()) return &it->second;
    error = std::string("clusterrole.") + kRbacGroup + " " + Quote(b.role_ref.name) + " not found";
    return nullptr;
  }
  // A Role is only ever referred to from a RoleBinding of its own namespace.
  if (b.role_ref.kind == "Role" && !b.namespace_.empty()) {
    auto it = policy.roles.find({b.namespace_, b.role_ref.name});
    if (it != policy.roles.end()) return &it->second;
    error = std::string("role.") + kRbacGroup + " " + Quote(b.role_ref.name) + " not found";
    return nullptr;
  }
  error = "unknown roleRef kind " + Quote(b.role_ref.kind);
  return nullptr;
}

// Calls `visit` with each binding that names `user` and its resolved role, cluster
// bindings first, then the bindings of `namespace_`; stops when it returns true.
// Missing roles are appended to `errors`.
void VisitBindings(
    const RbacPolicy& policy, const UserInfo& user, const std::string& namespace_,
    std::vector<std::string>& errors,
    const std::function<bool(const BindingObject&, const Subject&, const RoleObject&)>& visit) {
  auto one = [&](const BindingObject& b) {
    for (const Subject& s : b.subjects) {
      if (!SubjectMatches(s, user, b.namespace_)) continue;
      std::string error;
      const RoleObject* role = ResolveRole(policy, b, error);
      if (role == nullptr) {
        errors.push_back(error);
        return false;
      }
      return visit(b, s, *role);
    }
    return false;
  };
  for (const BindingObject& b : policy.cluster_role_bindings) {
    if (one(b)) return;
  }
  if (namespace_.empty()) return;
  auto it = policy.role_bindings.find(namespace_);
  if (it == policy.role_bindings.end()) return;
  for (const BindingObject& b : it->second) {
    if (one(b)) return;
  }
}

std::string Aggregate(const std::vector<std::string>& errors) {
  if (errors.empty()) return "";
  if (errors.size() == 1) return "RBAC: " + errors[0];
  std::string joined;
  for (const auto& e : errors) joined += (joined.empty() ? "" : ", ") + e;
  return "RBAC: [" + joined + "]";
}

std::vector<json> ListAll(const ObjectStore& store, const char* key) {
  auto list = store.List(key, "");
  return list.ok() ? std::move(list->items) : std::vector<json>{};
}

}  // namespace

Decision Evaluate(const RbacPolicy& policy, const RequestAttributes& request) {
  Decision d;
  std::vector<std::string> errors;
  VisitBindings(policy, request.user, request.namespace_, errors,
                [&](const BindingObject& b, const Subject& s, const RoleObject& role) {
                  for (const PolicyRule& rule : role.rules) {
                    if (!RuleAllows(rule, request)) continue;
                    const bool cluster = b.namespace_.empty();
                    d.allowed = true;
                    d.reason = std::string("RBAC: allowed by ") +
                               (cluster ? "ClusterRoleBinding " + Quote(b.name)
                                        : "RoleBinding " + Quote(b.name + "/" + b.namespace_)) +
                               " of " + b.role_ref.kind + " " + Quote(role.name) + " to " +
                               DescribeSubject(s, b.namespace_);
                    return true;
                  }
                  return false;
                });
  if (!d.allowed) d.reason = Aggregate(errors);
  return d;
}

UserRules RulesFor(const RbacPolicy& policy, const UserInfo& user, const std::string& namespace_) {
  UserRules out;
  VisitBindings(policy, user, namespace_, out.errors,
                [&](const BindingObject& b, const Subject&, const RoleObject& role) {
                  for (const PolicyRule& rule : role.rules) {
                    // Non-resource rules only count from cluster-wide bindings.
                    if (!rule.non_resource_urls.empty()) {
                      if (b.namespace_.empty()) out.non_resource_rules.push_back(rule);
                    } else {
                      out.resource_rules.push_back(rule);
                    }
                  }
                  return false;
                });
  return out;
}

RbacPolicy BuildPolicy(const std::vector<json>& cluster_roles, const std::vector<json>& roles,
                       const std::vector<json>& cluster_role_bindings,
                       const std::vector<json>& role_bindings) {
  RbacPolicy p;
  for (const auto& o : cluster_roles) {
    RoleObject r = ReadRole(o);
    r.namespace_.clear();
    std::string name = r.name;
    p.cluster_roles.emplace(std::move(name), std::move(r));
  }
  for (const auto& o : roles) {
    RoleObject r = ReadRole(o);
    if (r.namespace_.empty()) continue;
    p.roles.emplace(std::make_pair(r.namespace_, r.name), std::move(r));
  }
  for (const auto& o : cluster_role_bindings) {
    BindingObject b = ReadBinding(o);
    b.namespace_.clear();
    p.cluster_role_bindings.push_back(std::move(b));
  }
  for (const auto& o : role_bindings) {
    BindingObject b = ReadBinding(o);
    if (b.namespace_.empty()) continue;
    std::string ns = b.namespace_;
    p.role_bindings[ns].push_back(std::move(b));
  }
  return p;
}

ApiError ForbiddenError(const RequestAttributes& r, const std::string& reason) {
  std::string message;
  if (!r.resource_request) {
    message = "User " + Quote(r.user.name) + " cannot " + r.verb + " path " + Quote(r.path);
  } else {
    const std::string resource =
        r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
    message = "User " + Quote(r.user.name) + " cannot " + r.verb + " resource " + Quote(resource) +
              " in API group " + Quote(r.api_group) +
              (r.namespace_.empty() ? " at the cluster scope"
                                    : " in the namespace " + Quote(r.namespace_));
  }
  if (!reason.empty()) message += ": " + reason;
  ApiError e;
  e.code = 403;
  e.reason = "Forbidden";
  e.name = r.name;
  e.group = r.api_group;
  e.kind = r.resource;
  if (!r.resource_request || r.resource.empty()) {
    e.message = "forbidden: " + message;
  } else {
    const std::string qualified = r.api_group.empty() ? r.resource : r.resource + "." + r.api_group;
    e.message =
        qualified + (r.name.empty() ? "" : " " + Quote(r.name)) + " is forbidden: " + message;
  }
  return e;
}

RbacAuthorizer::RbacAuthorizer(ObjectStore& store) : store_(store) {
  // Runs under the store's write lock: only note that the policy is stale.
  subscription_ = store_.hub().Subscribe([this](const WatchHub::ChangePtr& c) {
    const std::string& key = c->resource;
    if (key == kRolesKey || key == kClusterRolesKey || key == kRoleBindingsKey ||
        key == kClusterRoleBindingsKey) {
      changes_.fetch_add(1);
    }
  });
}

RbacAuthorizer::~RbacAuthorizer() { store_.hub().Unsubscribe(subscription_); }

std::shared_ptr<const RbacPolicy> RbacAuthorizer::Policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t now = changes_.load();
  if (policy_ && built_ == now) return policy_;
  // A change that lands while the lists are read bumps `changes_` past `now`, so the
  // next request reads again.
  policy_ = std::make_shared<const RbacPolicy>(
      BuildPolicy(ListAll(store_, kClusterRolesKey), ListAll(store_, kRolesKey),
                  ListAll(store_, kClusterRoleBindingsKey), ListAll(store_, kRoleBindingsKey)));
  built_ = now;
  return policy_;
}

Decision RbacAuthorizer::Authorize(const RequestAttributes& request) const {
  if (request.user.InGroup(kMastersGroup)) return {true, ""};
  return Evaluate(*Policy(), request);
}

UserRules RbacAuthorizer::Rules(const UserInfo& user, const std::string& namespace_) const {
  return RulesFor(*Policy(), user, namespace_);
}

std::optional<std::vector<PolicyRule>> RbacAuthorizer::RoleRules(const std::string& kind,
                                                                 const std::string& namespace_,
                                                                 const std::string& name) const {
  auto policy = Policy();
  if (kind == "ClusterRole") {
    auto it = policy->cluster_roles.find(name);
    if (it != policy->cluster_roles.end()) return it->second.rules;
  } else if (kind == "Role") {
    auto it = policy->roles.find({namespace_, name});
    if (it != policy->roles.end()) return it->second.rules;
  }
  return std::nullopt;
}

}  // namespace muster::server::auth
