#include "server/auth/rbac_policy.h"

#include <algorithm>

namespace muster::server::auth {
namespace {

using nlohmann::json;

std::string BoundedString(const json& v) {
  if (!v.is_string()) return "";
  const auto& s = v.get_ref<const std::string&>();
  return s.size() > kMaxRbacString ? "" : s;
}

std::string Field(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it == object.end() ? "" : BoundedString(*it);
}

std::vector<std::string> Strings(const json& rule, const char* key) {
  std::vector<std::string> out;
  auto it = rule.find(key);
  if (it == rule.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (out.size() >= kMaxRuleEntries) break;
    if (v.is_string() && v.get_ref<const std::string&>().size() <= kMaxRbacString) {
      out.push_back(v.get<std::string>());
    }
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool HasOrAll(const std::vector<std::string>& list, const std::string& value) {
  return Has(list, "*") || Has(list, value);
}

bool ResourceMatches(const PolicyRule& rule, const std::string& combined,
                     const std::string& subresource) {
  for (const auto& r : rule.resources) {
    if (r == "*" || r == combined) return true;
    // "*/status" allows the status subresource of every resource.
    if (!subresource.empty() && r.size() == subresource.size() + 2 && r.rfind("*/", 0) == 0 &&
        r.compare(2, std::string::npos, subresource) == 0) {
      return true;
    }
  }
  return false;
}

bool NonResourceUrlMatches(const PolicyRule& rule, const std::string& path) {
  for (const auto& u : rule.non_resource_urls) {
    if (u == "*" || u == path) return true;
    if (!u.empty() && u.back() == '*' && path.rfind(u.substr(0, u.size() - 1), 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

PolicyRule ReadRule(const json& rule) {
  PolicyRule r;
  if (!rule.is_object()) return r;
  r.verbs = Strings(rule, "verbs");
  r.api_groups = Strings(rule, "apiGroups");
  r.resources = Strings(rule, "resources");
  r.resource_names = Strings(rule, "resourceNames");
  r.non_resource_urls = Strings(rule, "nonResourceURLs");
  return r;
}

RoleObject ReadRole(const json& object) {
  RoleObject role;
  const json md = object.is_object() ? object.value("metadata", json::object()) : json::object();
  role.namespace_ = Field(md, "namespace");
  role.name = Field(md, "name");
  if (object.is_object() && object.contains("rules") && object["rules"].is_array()) {
    for (const auto& rule : object["rules"]) {
      if (role.rules.size() >= kMaxRules) break;
      role.rules.push_back(ReadRule(rule));
    }
  }
  return role;
}

BindingObject ReadBinding(const json& object) {
  BindingObject b;
  if (!object.is_object()) return b;
  const json md = object.value("metadata", json::object());
  b.namespace_ = Field(md, "namespace");
  b.name = Field(md, "name");
  const json ref = object.value("roleRef", json::object());
  b.role_ref.kind = Field(ref, "kind");
  b.role_ref.name = Field(ref, "name");
  if (object.contains("subjects") && object["subjects"].is_array()) {
    for (const auto& s : object["subjects"]) {
      if (b.subjects.size() >= kMaxSubjects) break;
      b.subjects.push_back({Field(s, "kind"), Field(s, "name"), Field(s, "namespace")});
    }
  }
  return b;
}

json RuleToJson(const PolicyRule& rule) {
  json j = {{"verbs", rule.verbs}};
  if (!rule.api_groups.empty()) j["apiGroups"] = rule.api_groups;
  if (!rule.resources.empty()) j["resources"] = rule.resources;
  if (!rule.resource_names.empty()) j["resourceNames"] = rule.resource_names;
  if (!rule.non_resource_urls.empty()) j["nonResourceURLs"] = rule.non_resource_urls;
  return j;
}

bool VerbMatches(const PolicyRule& rule, const std::string& verb) {
  return HasOrAll(rule.verbs, verb);
}

bool RuleAllows(const PolicyRule& rule, const RequestAttributes& request) {
  if (!VerbMatches(rule, request.verb)) return false;
  if (!request.resource_request) return NonResourceUrlMatches(rule, request.path);
  const std::string combined =
      request.subresource.empty() ? request.resource : request.resource + "/" + request.subresource;
  return HasOrAll(rule.api_groups, request.api_group) &&
         ResourceMatches(rule, combined, request.subresource) &&
         (rule.resource_names.empty() || Has(rule.resource_names, request.name));
}

bool SubjectMatches(const Subject& subject, const UserInfo& user,
                    const std::string& binding_namespace) {
  if (subject.kind == "User") return !subject.name.empty() && subject.name == user.name;
  if (subject.kind == "Group") return !subject.name.empty() && user.InGroup(subject.name);
  if (subject.kind == "ServiceAccount") {
    const std::string ns = subject.namespace_.empty() ? binding_namespace : subject.namespace_;
    if (ns.empty() || subject.name.empty()) return false;
    return user.name == "system:serviceaccount:" + ns + ":" + subject.name;
  }
  return false;
}

}  // namespace muster::server::auth
