#include "server/meta_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

// A value quoted in a message: long ones (a whole pod template) are cut, so a
// rejection stays readable and bounded.
constexpr size_t kMaxQuotedValue = 256;

std::string Quoted(const json& value) {
  // A key or value that is not UTF-8 (a YAML body can carry one) is quoted with
  // U+FFFD, never an exception.
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > kMaxQuotedValue) s = s.substr(0, kMaxQuotedValue) + "...";
  return s;
}

std::string QualifiedKind(const control::ResourceType& t) {
  return t.group.empty() ? t.kind : t.kind + "." + t.group;
}

void CheckName(const std::string& field, const json& value, api::NameRule rule,
               std::vector<StatusCause>& out) {
  for (const auto& m : api::ValidateName(value.get<std::string>(), rule)) {
    out.push_back(InvalidValue(field, value, m));
  }
}

// A map of string -> string (labels, annotations); reports other shapes.
bool StringMap(const json& md, const char* key, std::vector<StatusCause>& out) {
  if (!md.contains(key) || md[key].is_null()) return false;
  const json& m = md[key];
  const std::string field = std::string("metadata.") + key;
  if (!m.is_object()) {
    out.push_back(InvalidValue(field, m, "must be a map of strings"));
    return false;
  }
  bool ok = true;
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it.value().is_string()) {
      out.push_back(InvalidValue(field + "[" + it.key() + "]", it.value(), "must be a string"));
      ok = false;
    }
  }
  return ok;
}

void CheckLabels(const json& md, std::vector<StatusCause>& out) {
  if (!StringMap(md, "labels", out)) return;
  for (const auto& [k, v] : md["labels"].items()) {
    for (const auto& m : api::IsQualifiedName(k)) {
      out.push_back(InvalidValue("metadata.labels", k, m));
    }
    for (const auto& m : api::IsValidLabelValue(v.get<std::string>())) {
      out.push_back(InvalidValue("metadata.labels", v, m));
    }
  }
}

void CheckAnnotations(const json& md, std::vector<StatusCause>& out) {
  if (!StringMap(md, "annotations", out)) return;
  size_t total = 0;
  for (const auto& [k, v] : md["annotations"].items()) {
    std::string lower = k;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& m : api::IsQualifiedName(lower)) {
      out.push_back(InvalidValue("metadata.annotations", k, m));
    }
    total += k.size() + v.get<std::string>().size();
  }
  if (total > api::kTotalAnnotationSizeLimit) {
    out.push_back(TooLong("metadata.annotations", api::kTotalAnnotationSizeLimit));
  }
}

void CheckOwnerReferences(const json& md, std::vector<StatusCause>& out) {
  if (!md.contains("ownerReferences") || md["ownerReferences"].is_null()) return;
  const json& refs = md["ownerReferences"];
  if (!refs.is_array()) {
    out.push_back(InvalidValue("metadata.ownerReferences", refs, "must be a list"));
    return;
  }
  int controllers = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const json& r = refs[i];
    const std::string field = "metadata.ownerReferences[" + std::to_string(i) + "]";
    if (!r.is_object()) {
      out.push_back(InvalidValue(field, r, "must be an object"));
      continue;
    }
    for (const char* key : {"apiVersion", "kind", "name", "uid"}) {
      if (!r.contains(key) || !r[key].is_string() || r[key].get<std::string>().empty()) {
        // Upstream's wording per field ("version must not be empty"...).
        const std::string what = std::string(key) == "apiVersion" ? "version" : key;
        out.push_back(
            InvalidValue(field + "." + key, r.value(key, json("")), what + " must not be empty"));
      }
    }
    for (const char* key : {"controller", "blockOwnerDeletion"}) {
      if (r.contains(key) && !r[key].is_null() && !r[key].is_boolean()) {
        out.push_back(InvalidValue(field + "." + key, r[key], "must be a boolean"));
      }
    }
    if (r.value("controller", false) == true) ++controllers;
  }
  if (controllers > 1) {
    out.push_back(InvalidValue("metadata.ownerReferences", refs,
                               "Only one reference can have Controller set to true"));
  }
}

void CheckFinalizers(const json& md, std::vector<StatusCause>& out) {
  if (!md.contains("finalizers") || md["finalizers"].is_null()) return;
  const json& f = md["finalizers"];
  if (!f.is_array()) {
    out.push_back(InvalidValue("metadata.finalizers", f, "must be a list of strings"));
    return;
  }
  for (size_t i = 0; i < f.size(); ++i) {
    const std::string field = "metadata.finalizers[" + std::to_string(i) + "]";
    if (!f[i].is_string()) {
      out.push_back(InvalidValue(field, f[i], "must be a string"));
      continue;
    }
    for (const auto& m : api::IsQualifiedName(f[i].get<std::string>())) {
      out.push_back(InvalidValue(field, f[i], m));
    }
  }
}

}  // namespace

api::NameRule NameRuleOf(const control::ResourceType& type) {
  if (type.kind == "Namespace") return api::NameRule::kDnsLabel;
  if (type.group == "rbac.authorization.k8s.io") return api::NameRule::kPathSegment;
  return api::NameRule::kDnsSubdomain;
}

StatusCause InvalidValue(const std::string& field, const json& value, const std::string& message) {
  return {"FieldValueInvalid", "Invalid value: " + Quoted(value) + ": " + message, field};
}

StatusCause RequiredValue(const std::string& field, const std::string& message) {
  return {"FieldValueRequired", message.empty() ? "Required value" : "Required value: " + message,
          field};
}

StatusCause Forbidden(const std::string& field, const std::string& message) {
  return {"FieldValueForbidden", "Forbidden: " + message, field};
}

StatusCause TooLong(const std::string& field, size_t max_bytes) {
  return {"FieldValueTooLong",
          "Too long: must have at most " + std::to_string(max_bytes) + " bytes", field};
}

std::vector<StatusCause> ValidateObjectMeta(const control::ResourceType& type, const json& md,
                                            bool check_name) {
  std::vector<StatusCause> out;
  if (!md.is_object()) return {InvalidValue("metadata", md, "must be an object")};
  const api::NameRule rule = NameRuleOf(type);
  const json name = md.value("name", json(""));
  const json generate = md.value("generateName", json(""));
  if (!name.is_string()) {
    out.push_back(InvalidValue("metadata.name", name, "must be a string"));
  } else if (name.get<std::string>().empty() &&
             (!generate.is_string() || generate.get<std::string>().empty())) {
    out.push_back(RequiredValue("metadata.name", "name or generateName is required"));
  } else if (!name.get<std::string>().empty() && check_name) {
    CheckName("metadata.name", name, rule, out);
  }
  if (!generate.is_string()) {
    out.push_back(InvalidValue("metadata.generateName", generate, "must be a string"));
  } else if (!generate.get<std::string>().empty() && check_name) {
    // A prefix may end in '-': checked as the name it will become (upstream masks
    // the trailing dash the same way).
    std::string prefix = generate.get<std::string>();
    if (prefix.back() == '-') prefix.back() = 'a';
    for (const auto& m : api::ValidateName(prefix, rule)) {
      out.push_back(InvalidValue("metadata.generateName", generate, m));
    }
  }
  if (type.namespaced) {
    const json ns = md.value("namespace", json(""));
    if (!ns.is_string()) {
      out.push_back(InvalidValue("metadata.namespace", ns, "must be a string"));
    } else if (!ns.get<std::string>().empty() && check_name) {
      CheckName("metadata.namespace", ns, api::NameRule::kDnsLabel, out);
    }
  }
  CheckLabels(md, out);
  CheckAnnotations(md, out);
  CheckOwnerReferences(md, out);
  CheckFinalizers(md, out);
  return out;
}

ApiError InvalidObject(const control::ResourceType& type, const std::string& name,
                       std::vector<StatusCause> causes) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.name = name;
  e.group = type.group;
  e.kind = type.kind;
  e.message = QualifiedKind(type) + " \"" + name + "\" is invalid: ";
  if (causes.size() > 1) e.message += "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) e.message += ", ";
    e.message += (causes[i].field.empty() ? "" : causes[i].field + ": ") + causes[i].message;
  }
  if (causes.size() > 1) e.message += "]";
  e.causes = std::move(causes);
  return e;
}

}  // namespace muster::server
