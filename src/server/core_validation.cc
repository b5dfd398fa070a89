// Dispatch by kind; PersistentVolumeClaim, ResourceQuota and ServiceAccount
// (upstream's ValidatePersistentVolumeClaim, ValidateResourceQuota,
// ValidateServiceAccount). ConfigMap and Secret: config_validation.cc; Service:
// service_validation.cc.
#include "server/core_validation.h"

#include <algorithm>
#include <set>

#include "api/object_names.h"
#include "core/quantity.h"
#include "core/quantity_bounds.h"
#include "server/core_defaults.h"
#include "server/meta_validation.h"
#include "server/resource_quota.h"

namespace muster::server {
namespace {

using nlohmann::json;

// Past this many, further problems are not listed: a hostile 3 MiB body must not
// make a response of millions of causes.
constexpr size_t kMaxCauses = 64;

const json& At(const json& object, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return kNull;
    at = &(*at)[key];
  }
  return *at;
}

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

// A quantity written as a string or a number; nullopt (and a cause) otherwise.
std::optional<Quantity> QuantityAt(const std::string& field, const json& v,
                                   std::vector<StatusCause>& out) {
  std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    out.push_back(InvalidValue(field, v,
                               "quantities must match the regular expression "
                               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
    return std::nullopt;
  }
  return *q;
}

const std::vector<std::string> kAccessModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                               "ReadWriteOncePod"};

void ValidateClaim(const json& claim, std::vector<StatusCause>& out) {
  const json& spec = At(claim, {"spec"});
  if (!spec.is_object()) {
    out.push_back(RequiredValue("spec"));
    return;
  }
  const json& modes = At(spec, {"accessModes"});
  if (!modes.is_array() || modes.empty()) {
    out.push_back(RequiredValue("spec.accessModes", "at least 1 access mode is required"));
  } else if (modes.size() > 2 * kAccessModes.size()) {
    out.push_back({"FieldValueTooMany",
                   "Too many: " + std::to_string(modes.size()) + ": must have at most " +
                       std::to_string(kAccessModes.size()) + " items",
                   "spec.accessModes"});
  } else {
    bool once_pod = false;
    for (const json& m : modes) {
      if (std::find(kAccessModes.begin(), kAccessModes.end(), Text(m)) == kAccessModes.end()) {
        out.push_back(NotSupportedValue("spec.accessModes", m, kAccessModes));
      }
      once_pod = once_pod || Text(m) == "ReadWriteOncePod";
    }
    if (once_pod && modes.size() > 1) {
      out.push_back(
          Forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"));
    }
  }
  const json& storage = At(spec, {"resources", "requests", "storage"});
  if (storage.is_null()) {
    out.push_back(RequiredValue("spec.resources[storage]"));
  } else if (auto q = QuantityAt("spec.resources.requests[storage]", storage, out)) {
    if (q->MilliValue() <= 0) {
      out.push_back(
          InvalidValue("spec.resources.requests[storage]", storage, "must be greater than zero"));
    } else if (std::string why = CheckQuantityBound("storage", *q, QuantityScope::kWorkload);
               !why.empty()) {
      out.push_back(InvalidValue("spec.resources.requests[storage]", storage, why));
    }
  }
  const json& mode = At(spec, {"volumeMode"});
  if (Text(mode) != "Filesystem" && Text(mode) != "Block") {
    out.push_back(NotSupportedValue("spec.volumeMode", mode, {"Block", "Filesystem"}));
  }
  const json& cls = At(spec, {"storageClassName"});
  if (!cls.is_null() && !Text(cls).empty()) {
    for (const auto& m : api::IsDns1123Subdomain(Text(cls))) {
      out.push_back(InvalidValue("spec.storageClassName", cls, m));
    }
  }
}

void ValidateQuota(const json& quota, std::vector<StatusCause>& out) {
  const json& hard = At(quota, {"spec", "hard"});
  if (hard.is_null()) return;
  if (!hard.is_object()) {
    out.push_back(InvalidValue("spec.hard", hard, "must be a map of quantities"));
    return;
  }
  if (hard.size() > kMaxQuotaEntries) {
    out.push_back({"FieldValueTooMany",
                   "Too many: " + std::to_string(hard.size()) + ": must have at most " +
                       std::to_string(kMaxQuotaEntries) + " items",
                   "spec.hard"});
    return;
  }
  for (const auto& [name, value] : hard.items()) {
    const std::string field = "spec.hard[" + name + "]";
    if (name.find('/') == std::string::npos) {
      if (!IsStandardQuotaResource(name)) {
        out.push_back(InvalidValue(field, name, "must be a standard resource for quota"));
      }
    } else {
      for (const auto& m : api::IsQualifiedName(name)) out.push_back(InvalidValue(field, name, m));
    }
    auto q = QuantityAt(field, value, out);
    if (!q) continue;
    if (q->MilliValue() < 0) {
      out.push_back(InvalidValue(field, value, "must be greater than or equal to 0"));
    } else if (std::string why =
                   CheckQuantityBound(QuotaBaseResource(name), *q, QuantityScope::kQuota);
               !why.empty()) {
      out.push_back(InvalidValue(field, value, why));
    }
  }
}

void ValidateServiceAccount(const json& account, std::vector<StatusCause>& out) {
  for (const char* list : {"secrets", "imagePullSecrets"}) {
    const json& refs = At(account, {list});
    if (refs.is_null()) continue;
    if (!refs.is_array()) {
      out.push_back(InvalidValue(list, refs, "must be a list"));
      continue;
    }
    if (refs.size() > kMaxQuotaEntries) {
      out.push_back({"FieldValueTooMany", "Too many: " + std::to_string(refs.size()), list});
    }
  }
  const json& automount = At(account, {"automountServiceAccountToken"});
  if (!automount.is_null() && !automount.is_boolean()) {
    out.push_back(InvalidValue("automountServiceAccountToken", automount, "must be a boolean"));
  }
}

// The immutable fields of a ConfigMap or Secret whose stored copy says immutable.
void ValidateDataUpdate(const control::ResourceType& type, const json& current, const json& next,
                        std::vector<StatusCause>& out) {
  if (type.kind == "Secret" && At(current, {"type"}) != At(next, {"type"})) {
    out.push_back(InvalidValue("type", At(next, {"type"}), "field is immutable"));
  }
  if (At(current, {"immutable"}) != json(true)) return;
  const std::string message = "field is immutable when `immutable` is set";
  if (At(next, {"immutable"}) != json(true)) out.push_back(Forbidden("immutable", message));
  if (At(current, {"data"}) != At(next, {"data"})) out.push_back(Forbidden("data", message));
  if (type.kind == "ConfigMap" && At(current, {"binaryData"}) != At(next, {"binaryData"})) {
    out.push_back(Forbidden("binaryData", message));
  }
}

void ValidateClaimUpdate(const json& current, const json& next, std::vector<StatusCause>& out) {
  json before = At(current, {"spec"}), after = At(next, {"spec"});
  if (!before.is_object() || !after.is_object()) return;
  const json old_storage = At(before, {"resources", "requests", "storage"});
  const json new_storage = At(after, {"resources", "requests", "storage"});
  for (json* spec : {&before, &after}) {
    if (spec->contains("resources") && (*spec)["resources"].is_object())
      (*spec)["resources"].erase("requests");
    if (spec->contains("resources") && (*spec)["resources"].empty()) spec->erase("resources");
    spec->erase("volumeAttributesClassName");
  }
  if (before != after) {
    out.push_back(Forbidden("spec",
                            "spec is immutable after creation except resources.requests and "
                            "volumeAttributesClassName for bound claims"));
  }
  std::vector<StatusCause> ignored;
  auto was = QuantityAt("", old_storage, ignored);
  auto now = QuantityAt("", new_storage, ignored);
  if (was && now && *now < *was) {
    out.push_back(
        Forbidden("spec.resources.requests.storage", "field can not be less than previous value"));
  }
}

}  // namespace

bool IsCoreKind(const control::ResourceType& type) {
  if (!type.group.empty()) return false;
  static const std::set<std::string> kKinds = {
      "ConfigMap", "Secret", "Service", "PersistentVolumeClaim", "ResourceQuota", "ServiceAccount"};
  return kKinds.count(type.kind) != 0;
}

std::vector<StatusCause> ValidateCoreObject(const control::ResourceType& type, const json& object) {
  std::vector<StatusCause> out;
  if (!IsCoreKind(type)) return out;
  try {
    // A YAML body may carry bytes that are not UTF-8; the store writes JSON text.
    (void)object.dump();
  } catch (const json::exception&) {
    return {
        {"FieldValueInvalid", "Invalid value: the object holds a string that is not UTF-8", ""}};
  }
  if (type.kind == "ConfigMap") ValidateConfigMap(object, out);
  if (type.kind == "Secret") ValidateSecret(object, out);
  if (type.kind == "Service") ValidateService(object, out);
  if (type.kind == "PersistentVolumeClaim") ValidateClaim(object, out);
  if (type.kind == "ResourceQuota") ValidateQuota(object, out);
  if (type.kind == "ServiceAccount") ValidateServiceAccount(object, out);
  if (out.size() > kMaxCauses) out.resize(kMaxCauses);
  return out;
}

void ValidateCoreUpdate(const control::ResourceType& type, const json& current, const json& next,
                        std::vector<StatusCause>& out) {
  if (!IsCoreKind(type)) return;
  if (type.kind == "ConfigMap" || type.kind == "Secret")
    ValidateDataUpdate(type, current, next, out);
  if (type.kind == "Service") ValidateServiceUpdate(current, next, out);
  if (type.kind == "PersistentVolumeClaim") ValidateClaimUpdate(current, next, out);
}

std::vector<std::string> CoreWarnings(const control::ResourceType& type, const json& object) {
  std::vector<std::string> w;
  // A Pod's restartPolicy is acted on: a bare pod's container restarts in place
  // (container_restart.h), a controller's pods as their job's policy says.
  if (type.group.empty() && type.kind == "Pod") return w;
  if (!IsCoreKind(type)) return w;
  if (type.kind == "Service") {
    const std::string t = Text(At(object, {"spec", "type"}));
    const std::string ip = Text(At(object, {"spec", "clusterIP"}));
    if (t == "NodePort" || t == "LoadBalancer") {
      w.push_back("spec.type " + t +
                  ": muster serve opens no node ports or load balancers; the Service's name "
                  "resolves to its pods' addresses");
    } else if (t == "ExternalName") {
      w.push_back("spec.type ExternalName: muster serve does not resolve the Service's name");
    } else if (ip != "None") {
      w.push_back(
          "spec.clusterIP is not routed by muster serve (no kube-proxy): the Service's "
          "name resolves to its pods' addresses and ports are the pods' own");
    }
    if (Text(At(object, {"spec", "sessionAffinity"})) == "ClientIP")
      w.push_back("spec.sessionAffinity ClientIP is not acted on by muster serve");
    for (const char* f : {"externalIPs", "loadBalancerIP", "loadBalancerSourceRanges",
                          "externalTrafficPolicy", "healthCheckNodePort"}) {
      if (!At(object, {"spec", f}).is_null())
        w.push_back(std::string("spec.") + f + " is not acted on by muster serve");
    }
  }
  if (type.kind == "PersistentVolumeClaim") {
    const std::string cls = Text(At(object, {"spec", "storageClassName"}));
    if (!cls.empty() && cls != kDefaultStorageClass) {
      w.push_back("spec.storageClassName " + cls + ": muster serve binds every claim to a local " +
                  "directory (class " + kDefaultStorageClass + ")");
    }
    if (Text(At(object, {"spec", "volumeMode"})) == "Block")
      w.push_back("spec.volumeMode Block: muster serve provides a directory (Filesystem)");
    for (const char* f : {"dataSource", "dataSourceRef", "selector"}) {
      if (!At(object, {"spec", f}).is_null())
        w.push_back(std::string("spec.") + f + " is not acted on by muster serve");
    }
  }
  if (type.kind == "ResourceQuota") {
    for (const char* f : {"scopes", "scopeSelector"}) {
      if (!At(object, {"spec", f}).is_null())
        w.push_back(std::string("spec.") + f +
                    " is not acted on by muster serve: the quota counts every object of the "
                    "namespace");
    }
    const json& hard = At(object, {"spec", "hard"});
    if (hard.is_object()) {
      for (const auto& [name, value] : hard.items()) {
        if (!QuotaTracks(name))
          w.push_back("spec.hard[" + name + "] is not counted by muster serve");
      }
    }
  }
  if (type.kind == "ServiceAccount") {
    for (const char* f : {"secrets", "imagePullSecrets", "automountServiceAccountToken"}) {
      if (!At(object, {f}).is_null())
        w.push_back(std::string(f) +
                    " is not acted on by muster serve (no service-account tokens)");
    }
  }
  return w;
}

StatusCause NotSupportedValue(const std::string& field, const json& value,
                              const std::vector<std::string>& supported) {
  std::string list;
  for (const auto& s : supported) list += (list.empty() ? "\"" : ", \"") + s + "\"";
  std::string shown = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 256) shown = shown.substr(0, 256) + "...";
  return {"FieldValueNotSupported", "Unsupported value: " + shown + ": supported values: " + list,
          field};
}

StatusCause DuplicateValue(const std::string& field, const json& value) {
  std::string shown = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 256) shown = shown.substr(0, 256) + "...";
  return {"FieldValueDuplicate", "Duplicate value: " + shown, field};
}

}  // namespace muster::server
