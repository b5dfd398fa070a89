#include "server/resource_quota.h"

#include <algorithm>
#include <array>

#include "core/quantity.h"
#include "core/quantity_bounds.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr int64_t kOne = 1000;  // one whole unit in milli
constexpr std::string_view kStorageClassSuffix = ".storageclass.storage.k8s.io/";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

void Add(QuotaAmounts& to, const std::string& name, int64_t milli) {
  to[name] = SaturatingAdd(to[name], milli);
}

const json& At(const json& object, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return kNull;
    at = &(*at)[key];
  }
  return *at;
}

std::optional<int64_t> Milli(const json& v) {
  std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
  auto q = Quantity::Parse(text);
  if (!q.ok()) return std::nullopt;
  return q->MilliValue();
}

// requests and limits of one container, requests defaulted from limits.
void ContainerResources(const json& container, QuotaAmounts& requests, QuotaAmounts& limits) {
  const json& limit = At(container, {"resources", "limits"});
  const json& request = At(container, {"resources", "requests"});
  if (limit.is_object()) {
    for (const auto& [r, v] : limit.items()) {
      if (auto m = Milli(v)) Add(limits, r, *m);
    }
  }
  if (request.is_object()) {
    for (const auto& [r, v] : request.items()) {
      if (auto m = Milli(v)) Add(requests, r, *m);
    }
  }
  for (const auto& [r, m] : limits) {
    if (request.is_object() && request.contains(r)) continue;
    if (limit.is_object() && limit.contains(r)) {
      if (auto v = Milli(limit[r])) Add(requests, r, *v);
    }
  }
}

// Upstream's PodRequests/PodLimits: containers summed, init containers by maximum,
// overhead added.
std::pair<QuotaAmounts, QuotaAmounts> PodResources(const json& pod) {
  QuotaAmounts requests, limits;
  const json& containers = At(pod, {"spec", "containers"});
  if (containers.is_array()) {
    for (const json& c : containers) {
      QuotaAmounts r, l;
      ContainerResources(c, r, l);
      for (const auto& [k, v] : r) Add(requests, k, v);
      for (const auto& [k, v] : l) Add(limits, k, v);
    }
  }
  const json& init = At(pod, {"spec", "initContainers"});
  if (init.is_array()) {
    for (const json& c : init) {
      QuotaAmounts r, l;
      ContainerResources(c, r, l);
      for (const auto& [k, v] : r) requests[k] = std::max(requests[k], v);
      for (const auto& [k, v] : l) limits[k] = std::max(limits[k], v);
    }
  }
  const json& overhead = At(pod, {"spec", "overhead"});
  if (overhead.is_object()) {
    for (const auto& [r, v] : overhead.items()) {
      if (auto m = Milli(v)) {
        Add(requests, r, *m);
        if (limits.count(r) != 0) Add(limits, r, *m);
      }
    }
  }
  return {requests, limits};
}

bool IsCompute(std::string_view r) {
  return r == "cpu" || r == "memory" || r == "ephemeral-storage";
}

void PodUsage(const json& pod, QuotaAmounts& out) {
  const std::string phase = At(pod, {"status", "phase"}).is_string()
                                ? At(pod, {"status", "phase"}).get<std::string>()
                                : "";
  if (phase == "Succeeded" || phase == "Failed") return;  // terminal pods hold nothing
  Add(out, "pods", kOne);
  auto [requests, limits] = PodResources(pod);
  for (const auto& [r, v] : requests) {
    if (IsCompute(r)) Add(out, r, v);
    if (IsCompute(r) || StartsWith(r, "hugepages-") || r.find('/') != std::string::npos)
      Add(out, "requests." + r, v);
  }
  for (const auto& [r, v] : limits) {
    if (IsCompute(r)) Add(out, "limits." + r, v);
  }
}

// The store key whose objects count toward quota resource `name`.
std::string StoreKeyFor(std::string_view name) {
  if (StartsWith(name, "count/")) return std::string(name.substr(6));
  if (name == "services" || StartsWith(name, "services.")) return "services";
  if (name == "configmaps" || name == "secrets" || name == "resourcequotas" ||
      name == "replicationcontrollers")
    return std::string(name);
  if (name == "persistentvolumeclaims" || name == "requests.storage" ||
      name.find(kStorageClassSuffix) != std::string_view::npos)
    return "persistentvolumeclaims";
  return "pods";
}

const control::ResourceType* TypeOfKey(const std::string& key) {
  for (const auto& t : control::ResourceTypes()) {
    if (t.StoreKey() == key && t.namespaced && !t.view && !t.review) return &t;
  }
  return nullptr;
}

QuotaAmounts HardOf(const json& quota) {
  QuotaAmounts hard;
  const json& spec_hard = At(quota, {"spec", "hard"});
  if (!spec_hard.is_object()) return hard;
  for (const auto& [name, v] : spec_hard.items()) {
    if (auto m = Milli(v)) hard[name] = *m;
  }
  return hard;
}

std::string PrettyPrint(const QuotaAmounts& amounts) {
  std::string out;
  for (const auto& [name, milli] : amounts) {
    if (!out.empty()) out += ",";
    out += name + "=" + FormatQuotaAmount(name, milli);
  }
  return out;
}

}  // namespace

bool IsStandardQuotaResource(std::string_view name) {
  static constexpr std::array<std::string_view, 19> kNames = {"pods",
                                                              "services",
                                                              "replicationcontrollers",
                                                              "resourcequotas",
                                                              "secrets",
                                                              "configmaps",
                                                              "persistentvolumeclaims",
                                                              "services.nodeports",
                                                              "services.loadbalancers",
                                                              "cpu",
                                                              "memory",
                                                              "ephemeral-storage",
                                                              "requests.cpu",
                                                              "requests.memory",
                                                              "requests.storage",
                                                              "requests.ephemeral-storage",
                                                              "limits.cpu",
                                                              "limits.memory",
                                                              "limits.ephemeral-storage"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  return StartsWith(name, "requests.hugepages-") || StartsWith(name, "hugepages-");
}

bool QuotaTracks(std::string_view name) {
  if (IsStandardQuotaResource(name) || StartsWith(name, "count/")) return true;
  if (StartsWith(name, "requests.") && name.find('/') != std::string_view::npos) return true;
  const size_t at = name.find(kStorageClassSuffix);
  if (at == std::string_view::npos) return false;
  const std::string_view rest = name.substr(at + kStorageClassSuffix.size());
  return rest == "requests.storage" || rest == "persistentvolumeclaims";
}

std::string QuotaBaseResource(std::string_view name) {
  if (const size_t at = name.find(kStorageClassSuffix); at != std::string_view::npos)
    name = name.substr(at + kStorageClassSuffix.size());
  for (std::string_view prefix : {"requests.", "limits."}) {
    if (StartsWith(name, prefix)) return std::string(name.substr(prefix.size()));
  }
  return std::string(name);
}

std::string FormatQuotaAmount(std::string_view name, int64_t milli) {
  const bool bytes = IsByteResource(QuotaBaseResource(name));
  return Quantity::FromMilli(milli,
                             bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI)
      .ToString();
}

QuotaAmounts UsageOf(const control::ResourceType& type, const json& object) {
  QuotaAmounts out;
  if (!type.namespaced) return out;
  Add(out, "count/" + type.StoreKey(), kOne);
  if (!type.group.empty()) return out;
  if (type.kind == "Pod") {
    PodUsage(object, out);
    // A terminal pod is no longer counted as an object either.
    if (out.count("pods") == 0) out.clear();
  } else if (type.kind == "ConfigMap" || type.kind == "Secret" || type.kind == "ResourceQuota") {
    Add(out, type.plural, kOne);
  } else if (type.kind == "Service") {
    Add(out, "services", kOne);
    const json& spec = At(object, {"spec"});
    const std::string t = spec.value("type", "ClusterIP");
    if (t == "LoadBalancer") Add(out, "services.loadbalancers", kOne);
    if ((t == "NodePort" || t == "LoadBalancer") && spec.contains("ports") &&
        spec["ports"].is_array()) {
      Add(out, "services.nodeports", kOne * static_cast<int64_t>(spec["ports"].size()));
    }
  } else if (type.kind == "PersistentVolumeClaim") {
    Add(out, "persistentvolumeclaims", kOne);
    const std::string cls = At(object, {"spec", "storageClassName"}).is_string()
                                ? At(object, {"spec", "storageClassName"}).get<std::string>()
                                : "";
    const std::string prefix = cls + std::string(kStorageClassSuffix);
    if (!cls.empty()) Add(out, prefix + "persistentvolumeclaims", kOne);
    if (auto m = Milli(At(object, {"spec", "resources", "requests", "storage"}))) {
      Add(out, "requests.storage", *m);
      if (!cls.empty()) Add(out, prefix + "requests.storage", *m);
    }
  }
  return out;
}

QuotaAmounts NamespaceUsage(const control::ObjectReader& store, const std::string& ns,
                            const std::set<std::string>& resources) {
  QuotaAmounts used;
  std::set<std::string> keys;
  for (const std::string& r : resources) {
    used[r] = 0;
    if (QuotaTracks(r)) keys.insert(StoreKeyFor(r));
  }
  for (const std::string& key : keys) {
    const control::ResourceType* type = TypeOfKey(key);
    if (type == nullptr) continue;  // a kind not served: none of it exists
    auto list = store.List(key, ns);
    if (!list.ok()) continue;
    for (const json& object : list->items) {
      for (const auto& [r, v] : UsageOf(*type, object)) {
        if (resources.count(r) != 0) Add(used, r, v);
      }
    }
  }
  return used;
}

std::optional<ApiError> CheckQuota(const control::ObjectReader& store,
                                   const control::ResourceType& type, const std::string& ns,
                                   const json& object) {
  if (!type.namespaced || ns.empty()) return std::nullopt;
  const QuotaAmounts delta = UsageOf(type, object);
  if (delta.empty()) return std::nullopt;
  auto quotas = store.List("resourcequotas", ns);
  if (!quotas.ok() || quotas->items.empty()) return std::nullopt;
  for (const json& quota : quotas->items) {
    const QuotaAmounts hard = HardOf(quota);
    std::set<std::string> shared;
    for (const auto& [r, v] : delta) {
      if (v > 0 && hard.count(r) != 0) shared.insert(r);
    }
    if (shared.empty()) continue;
    const QuotaAmounts used = NamespaceUsage(store, ns, shared);
    QuotaAmounts requested, failed_used, limited;
    for (const std::string& r : shared) {
      if (SaturatingAdd(used.at(r), delta.at(r)) <= hard.at(r)) continue;
      requested[r] = delta.at(r);
      failed_used[r] = used.at(r);
      limited[r] = hard.at(r);
    }
    if (requested.empty()) continue;
    const std::string name = At(object, {"metadata", "name"}).is_string()
                                 ? At(object, {"metadata", "name"}).get<std::string>()
                                 : "";
    const std::string quota_name = At(quota, {"metadata", "name"}).get<std::string>();
    ApiError e = MakeError(403, "Forbidden",
                           (type.group.empty() ? type.plural : type.plural + "." + type.group) +
                               " \"" + name + "\" is forbidden: exceeded quota: " + quota_name +
                               ", requested: " + PrettyPrint(requested) + ", used: " +
                               PrettyPrint(failed_used) + ", limited: " + PrettyPrint(limited));
    e.name = name;
    e.group = type.group;
    e.kind = type.plural;
    return e;
  }
  return std::nullopt;
}

json QuotaStatus(const control::ObjectReader& store, const json& quota) {
  const json& spec_hard = At(quota, {"spec", "hard"});
  json status = {{"hard", json::object()}, {"used", json::object()}};
  if (spec_hard.is_object()) {
    for (const auto& [r, v] : spec_hard.items()) {
      // Canonical, as a Quantity serialises ("1000m" -> "1").
      auto q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump());
      status["hard"][r] = q.ok() ? json(q->ToString()) : v;
    }
  }
  const QuotaAmounts hard = HardOf(quota);
  std::set<std::string> names;
  for (const auto& [r, v] : hard) names.insert(r);
  const std::string ns = At(quota, {"metadata", "namespace"}).is_string()
                             ? At(quota, {"metadata", "namespace"}).get<std::string>()
                             : "";
  for (const auto& [r, v] : NamespaceUsage(store, ns, names)) {
    status["used"][r] = FormatQuotaAmount(r, v);
  }
  return status;
}

}  // namespace muster::server
