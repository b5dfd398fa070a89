#include "server/rbac_escalation.h"

#include <algorithm>

#include "server/label_selector.h"
#include "server/patch_request.h"
#include "server/request_target.h"

namespace muster::server {
namespace {

using auth::PolicyRule;
using nlohmann::json;

// More single permissions than this in one object are not judged: not covered.
constexpr size_t kMaxExpanded = 200000;

bool Has(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}
bool HasOrAll(const std::vector<std::string>& list, const std::string& v) {
  return Has(list, "*") || Has(list, v);
}

bool ResourceCovered(const std::vector<std::string>& owner, const std::string& resource) {
  if (HasOrAll(owner, resource)) return true;
  const size_t slash = resource.find('/');
  return slash != std::string::npos && Has(owner, "*" + resource.substr(slash));
}

bool UrlCovered(const std::vector<std::string>& owner, const std::string& url) {
  for (const auto& u : owner) {
    if (u == "*" || u == url) return true;
    if (!u.empty() && u.back() == '*' && url.rfind(u.substr(0, u.size() - 1), 0) == 0) return true;
  }
  return false;
}

bool Covered(const std::vector<PolicyRule>& owner, const PolicyRule& rule, size_t& budget) {
  const bool urls = !rule.non_resource_urls.empty();
  const std::vector<std::string> none = {""};
  const auto& names = rule.resource_names.empty() ? none : rule.resource_names;
  for (const auto& verb : rule.verbs) {
    if (urls) {
      for (const auto& url : rule.non_resource_urls) {
        if (budget == 0 || --budget == 0) return false;
        const bool ok = std::any_of(owner.begin(), owner.end(), [&](const PolicyRule& o) {
          return HasOrAll(o.verbs, verb) && UrlCovered(o.non_resource_urls, url);
        });
        if (!ok) return false;
      }
      continue;
    }
    for (const auto& group : rule.api_groups) {
      for (const auto& resource : rule.resources) {
        for (const auto& name : names) {
          if (budget == 0 || --budget == 0) return false;
          const bool ok = std::any_of(owner.begin(), owner.end(), [&](const PolicyRule& o) {
            return o.non_resource_urls.empty() && HasOrAll(o.verbs, verb) &&
                   HasOrAll(o.api_groups, group) && ResourceCovered(o.resources, resource) &&
                   (o.resource_names.empty() || (!name.empty() && Has(o.resource_names, name)));
          });
          if (!ok) return false;
        }
      }
    }
  }
  return true;
}

std::optional<json> ObjectWritten(const ObjectStore& store, const RequestTarget& t,
                                  const ApiRequest& r) {
  if (r.method != "PATCH") {
    json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) return std::nullopt;  // the handler says why
    return body;
  }
  // Every patch type, as the handler will apply it (patch_request.h).
  PatchRequest patch;
  if (ReadPatch(r, t, NowRfc3339(), patch)) return std::nullopt;  // the handler says why
  auto current = store.Get({t.type->StoreKey(), t.namespace_, t.name});
  if (!current.ok()) {
    // An apply of an absent object creates it.
    if (patch.type == PatchType::kApply) return patch.patch;
    return std::nullopt;
  }
  json next;
  if (PatchObject(patch, *current, next)) return std::nullopt;
  return next;
}

}  // namespace

bool RulesCovered(const std::vector<PolicyRule>& owner, const std::vector<PolicyRule>& rules) {
  size_t budget = kMaxExpanded;
  return std::all_of(rules.begin(), rules.end(),
                     [&](const PolicyRule& rule) { return Covered(owner, rule, budget); });
}

std::optional<ApiError> CheckRbacEscalation(const ObjectStore& store,
                                            const auth::RbacAuthorizer* authorizer,
                                            const ApiRequest& request, const std::string& path) {
  if (authorizer == nullptr || request.user.name.empty() ||
      request.user.InGroup(auth::kMastersGroup)) {
    return std::nullopt;
  }
  const std::string& m = request.method;
  if (m != "POST" && m != "PUT" && m != "PATCH") return std::nullopt;
  auto target = ParseRequestTarget(path);
  if (!target.ok() || target->type->group != auth::kRbacGroup) return std::nullopt;
  const RequestTarget& t = *target;
  auto object = ObjectWritten(store, t, request);
  if (!object) return std::nullopt;
  std::string ns = t.namespace_;
  if (t.type->namespaced && ns.empty()) {
    ns = FieldValue(*object, "metadata.namespace");
    if (ns.empty()) ns = "default";
  }
  const std::string name = t.name.empty() ? FieldValue(*object, "metadata.name") : t.name;
  const bool binding = t.type->kind == "RoleBinding" || t.type->kind == "ClusterRoleBinding";
  // The verb that waives the check, on the role itself (upstream's escalate / bind).
  auth::RequestAttributes waiver;
  waiver.user = request.user;
  waiver.resource_request = true;
  waiver.api_group = auth::kRbacGroup;
  waiver.namespace_ = ns;
  std::vector<PolicyRule> granted;
  if (binding) {
    const auth::BindingObject b = auth::ReadBinding(*object);
    waiver.verb = "bind";
    waiver.resource = b.role_ref.kind == "Role" ? "roles" : "clusterroles";
    waiver.name = b.role_ref.name;
    if (authorizer->Authorize(waiver).allowed) return std::nullopt;
    auto rules = authorizer->RoleRules(b.role_ref.kind, ns, b.role_ref.name);
    if (!rules) {
      return auth::ForbiddenError(auth::AttributesOf(m, path, request.query, request.user),
                                  "cannot bind " + b.role_ref.kind + " \"" + b.role_ref.name +
                                      "\", which does not exist, without the bind verb");
    }
    granted = std::move(*rules);
  } else {
    waiver.verb = "escalate";
    waiver.resource = t.type->plural;
    waiver.name = name;
    if (authorizer->Authorize(waiver).allowed) return std::nullopt;
    granted = auth::ReadRole(*object).rules;
  }
  const auth::UserRules owner = authorizer->Rules(request.user, t.type->namespaced ? ns : "");
  std::vector<PolicyRule> all = owner.resource_rules;
  all.insert(all.end(), owner.non_resource_rules.begin(), owner.non_resource_rules.end());
  if (RulesCovered(all, granted)) return std::nullopt;
  ApiError e = MakeError(
      403, "Forbidden",
      t.type->plural + "." + auth::kRbacGroup + " \"" + name + "\" is forbidden: user \"" +
          request.user.name +
          "\" is attempting to grant RBAC permissions not currently held (it needs the " +
          waiver.verb + " verb on " + waiver.resource + " \"" + waiver.name + "\" otherwise)");
  e.name = name;
  e.group = auth::kRbacGroup;
  e.kind = t.type->plural;
  return e;
}

}  // namespace muster::server
