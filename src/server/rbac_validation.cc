#include "server/rbac_validation.h"

#include <string>

#include "api/object_names.h"
#include "server/auth/rbac_policy.h"
#include "server/meta_validation.h"

namespace muster::server {
namespace {

using auth::kRbacGroup;
using nlohmann::json;

StatusCause NotSupported(const std::string& field, const json& value,
                         const std::vector<std::string>& supported) {
  std::string list;
  for (const auto& s : supported) list += (list.empty() ? "" : ", ") + json(s).dump();
  std::string shown = value.dump();
  if (shown.size() > 256) shown = shown.substr(0, 256) + "...";
  return {"FieldValueNotSupported", "Unsupported value: " + shown + ": supported values: " + list,
          field};
}

StatusCause TooMany(const std::string& field, size_t max) {
  return {"FieldValueTooMany", "Too many: must have at most " + std::to_string(max) + " items",
          field};
}

// A string field: absent is "", anything else but a bounded string is reported.
std::string StringAt(const json& object, const char* key, const std::string& field,
                     std::vector<StatusCause>& out) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return "";
  const json& v = object[key];
  if (!v.is_string()) {
    out.push_back(InvalidValue(field, v, "must be a string"));
    return "";
  }
  if (v.get_ref<const std::string&>().size() > auth::kMaxRbacString) {
    out.push_back(TooLong(field, auth::kMaxRbacString));
    return "";
  }
  return v.get<std::string>();
}

// A list of strings; returns its size (0 when absent or malformed).
size_t StringList(const json& rule, const char* key, const std::string& field,
                  std::vector<StatusCause>& out) {
  if (!rule.contains(key) || rule[key].is_null()) return 0;
  const json& list = rule[key];
  if (!list.is_array()) {
    out.push_back(InvalidValue(field, list, "must be a list of strings"));
    return 0;
  }
  if (list.size() > auth::kMaxRuleEntries) {
    out.push_back(TooMany(field, auth::kMaxRuleEntries));
    return 0;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (!list[i].is_string()) {
      out.push_back(InvalidValue(f, list[i], "must be a string"));
    } else if (list[i].get_ref<const std::string&>().size() > auth::kMaxRbacString) {
      out.push_back(TooLong(f, auth::kMaxRbacString));
    }
  }
  return list.size();
}

void ValidateRule(const json& rule, const std::string& field, bool namespaced,
                  std::vector<StatusCause>& out) {
  if (!rule.is_object()) {
    out.push_back(InvalidValue(field, rule, "must be an object"));
    return;
  }
  const size_t verbs = StringList(rule, "verbs", field + ".verbs", out);
  const size_t groups = StringList(rule, "apiGroups", field + ".apiGroups", out);
  const size_t resources = StringList(rule, "resources", field + ".resources", out);
  StringList(rule, "resourceNames", field + ".resourceNames", out);
  const size_t urls = StringList(rule, "nonResourceURLs", field + ".nonResourceURLs", out);
  if (verbs == 0) {
    out.push_back(RequiredValue(field + ".verbs", "verbs must contain at least one value"));
  }
  if (urls > 0) {
    if (namespaced) {
      out.push_back(InvalidValue(field + ".nonResourceURLs", rule["nonResourceURLs"],
                                 "namespaced rules cannot apply to non-resource URLs"));
    }
    if (groups > 0 || resources > 0) {
      out.push_back(InvalidValue(field + ".nonResourceURLs", rule["nonResourceURLs"],
                                 "rules cannot apply to both regular resources and non-resource "
                                 "URLs"));
    }
    return;
  }
  if (groups == 0) {
    out.push_back(
        RequiredValue(field + ".apiGroups", "resource rules must supply at least one api group"));
  }
  if (resources == 0) {
    out.push_back(
        RequiredValue(field + ".resources", "resource rules must supply at least one resource"));
  }
}

void ValidateRole(const json& object, bool namespaced, std::vector<StatusCause>& out) {
  if (!object.contains("rules") || object["rules"].is_null()) return;
  const json& rules = object["rules"];
  if (!rules.is_array()) {
    out.push_back(InvalidValue("rules", rules, "must be a list of rules"));
    return;
  }
  if (rules.size() > auth::kMaxRules) {
    out.push_back(TooMany("rules", auth::kMaxRules));
    return;
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    ValidateRule(rules[i], "rules[" + std::to_string(i) + "]", namespaced, out);
  }
  if (!namespaced && object.contains("aggregationRule") && !object["aggregationRule"].is_null() &&
      !object["aggregationRule"].is_object()) {
    out.push_back(InvalidValue("aggregationRule", object["aggregationRule"], "must be an object"));
  }
}

void ValidateSubject(const json& s, const std::string& field, bool namespaced,
                     std::vector<StatusCause>& out) {
  if (!s.is_object()) {
    out.push_back(InvalidValue(field, s, "must be an object"));
    return;
  }
  const std::string name = StringAt(s, "name", field + ".name", out);
  const std::string kind = StringAt(s, "kind", field + ".kind", out);
  const std::string group = StringAt(s, "apiGroup", field + ".apiGroup", out);
  const std::string ns = StringAt(s, "namespace", field + ".namespace", out);
  if (name.empty()) out.push_back(RequiredValue(field + ".name"));
  if (kind == "ServiceAccount") {
    if (!group.empty()) out.push_back(NotSupported(field + ".apiGroup", group, {""}));
    if (!name.empty()) {
      for (const auto& m : api::ValidateName(name, api::NameRule::kDnsSubdomain)) {
        out.push_back(InvalidValue(field + ".name", name, m));
      }
    }
    if (!namespaced && ns.empty()) out.push_back(RequiredValue(field + ".namespace"));
  } else if (kind == "User" || kind == "Group") {
    if (!group.empty() && group != kRbacGroup) {
      out.push_back(NotSupported(field + ".apiGroup", group, {kRbacGroup}));
    }
  } else {
    out.push_back(NotSupported(field + ".kind", kind, {"ServiceAccount", "User", "Group"}));
  }
}

void ValidateBinding(const json& object, bool namespaced, std::vector<StatusCause>& out) {
  const json ref = object.value("roleRef", json());
  if (!ref.is_object()) {
    out.push_back(RequiredValue("roleRef"));
  } else {
    const std::string group = StringAt(ref, "apiGroup", "roleRef.apiGroup", out);
    const std::string kind = StringAt(ref, "kind", "roleRef.kind", out);
    const std::string name = StringAt(ref, "name", "roleRef.name", out);
    if (!group.empty() && group != kRbacGroup) {
      out.push_back(NotSupported("roleRef.apiGroup", group, {kRbacGroup}));
    }
    if (namespaced && kind != "Role" && kind != "ClusterRole") {
      out.push_back(NotSupported("roleRef.kind", kind, {"Role", "ClusterRole"}));
    } else if (!namespaced && kind != "ClusterRole") {
      out.push_back(NotSupported("roleRef.kind", kind, {"ClusterRole"}));
    }
    if (name.empty()) {
      out.push_back(RequiredValue("roleRef.name"));
    } else {
      for (const auto& m : api::ValidateName(name, api::NameRule::kPathSegment)) {
        out.push_back(InvalidValue("roleRef.name", name, m));
      }
    }
  }
  if (!object.contains("subjects") || object["subjects"].is_null()) return;
  const json& subjects = object["subjects"];
  if (!subjects.is_array()) {
    out.push_back(InvalidValue("subjects", subjects, "must be a list of subjects"));
    return;
  }
  if (subjects.size() > auth::kMaxSubjects) {
    out.push_back(TooMany("subjects", auth::kMaxSubjects));
    return;
  }
  for (size_t i = 0; i < subjects.size(); ++i) {
    ValidateSubject(subjects[i], "subjects[" + std::to_string(i) + "]", namespaced, out);
  }
}

}  // namespace

bool IsRbacType(const control::ResourceType& type) { return type.group == kRbacGroup; }

std::vector<StatusCause> ValidateRbacObject(const control::ResourceType& type, const json& object) {
  std::vector<StatusCause> out;
  if (!IsRbacType(type) || !object.is_object()) return out;
  if (type.kind == "Role" || type.kind == "ClusterRole") {
    ValidateRole(object, type.namespaced, out);
  } else {
    ValidateBinding(object, type.namespaced, out);
  }
  return out;
}

void ValidateRbacUpdate(const control::ResourceType& type, const json& current, const json& next,
                        std::vector<StatusCause>& out) {
  if (!IsRbacType(type) || (type.kind != "RoleBinding" && type.kind != "ClusterRoleBinding")) {
    return;
  }
  // Compared as v1 defaults them: an omitted apiGroup is rbac.authorization.k8s.io.
  auto ref = [](const json& o) {
    json r = o.is_object() ? o.value("roleRef", json()) : json();
    if (r.is_object() && r.value("apiGroup", json("")) == json("")) r["apiGroup"] = kRbacGroup;
    return r;
  };
  const json before = ref(current);
  const json after = ref(next);
  if (before != after) out.push_back(InvalidValue("roleRef", after, "cannot change roleRef"));
}

}  // namespace muster::server
