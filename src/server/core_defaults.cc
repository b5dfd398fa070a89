#include "server/core_defaults.h"

#include <arpa/inet.h>

#include <random>
#include <set>

#include "control/pod_spec_json.h"
#include "core/base64.h"
#include "server/batch_job_defaults.h"
#include "server/namespace_lifecycle.h"
#include "server/pod_priority.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr uint32_t kServiceBase = 0x0A600000;  // 10.96.0.0
constexpr uint32_t kServiceSize = 1u << 20;    // /12

std::optional<uint32_t> ParseIpv4(const std::string& ip) {
  in_addr addr{};
  if (inet_pton(AF_INET, ip.c_str(), &addr) != 1) return std::nullopt;
  return ntohl(addr.s_addr);
}

std::string FormatIpv4(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

void SetIfMissing(json& object, const char* key, const json& value) {
  if (!object.contains(key) || object[key].is_null() ||
      (object[key].is_string() && object[key].get<std::string>().empty())) {
    object[key] = value;
  }
}

void DefaultSecret(json& secret) {
  if (secret.contains("stringData") && secret["stringData"].is_object()) {
    if (!secret.contains("data") || !secret["data"].is_object()) secret["data"] = json::object();
    for (const auto& [key, value] : secret["stringData"].items()) {
      // A non-string value is left for validation to name.
      secret["data"][key] =
          value.is_string() ? json(EncodeBase64(value.get<std::string>())) : value;
    }
    secret.erase("stringData");
  }
  SetIfMissing(secret, "type", "Opaque");
}

void DefaultService(json& service, const json* current) {
  if (!service.contains("spec") || service["spec"].is_null()) service["spec"] = json::object();
  json& spec = service["spec"];
  if (!spec.is_object()) return;
  SetIfMissing(spec, "type", "ClusterIP");
  SetIfMissing(spec, "sessionAffinity", "None");
  if (spec["type"] == "ClusterIP" || spec["type"] == "NodePort" || spec["type"] == "LoadBalancer")
    SetIfMissing(spec, "internalTrafficPolicy", "Cluster");
  if (spec.contains("ports") && spec["ports"].is_array()) {
    for (json& port : spec["ports"]) {
      if (!port.is_object()) continue;
      SetIfMissing(port, "protocol", "TCP");
      const bool no_target = !port.contains("targetPort") || port["targetPort"].is_null() ||
                             port["targetPort"] == 0 || port["targetPort"] == "";
      if (no_target && port.contains("port")) port["targetPort"] = port["port"];
    }
  }
  if (current != nullptr && current->contains("spec") && (*current)["spec"].is_object()) {
    // An update without the allocated address keeps it (upstream's registry does).
    const json& before = (*current)["spec"];
    const bool unset =
        !spec.contains("clusterIP") || spec["clusterIP"].is_null() || spec["clusterIP"] == "";
    if (unset && before.contains("clusterIP")) {
      spec["clusterIP"] = before["clusterIP"];
      if (before.contains("clusterIPs")) spec["clusterIPs"] = before["clusterIPs"];
    }
  }
  if (spec.contains("clusterIP") && spec["clusterIP"].is_string() && spec["clusterIP"] != "") {
    spec["clusterIPs"] = json::array({spec["clusterIP"]});
  }
}

void DefaultClaim(json& claim, const json* current) {
  if (!claim.contains("spec") || claim["spec"].is_null()) claim["spec"] = json::object();
  json& spec = claim["spec"];
  if (!spec.is_object()) return;
  SetIfMissing(spec, "volumeMode", "Filesystem");
  if (current != nullptr && current->contains("spec") && (*current)["spec"].is_object()) {
    // The binder's and the default class's values are the server's, as upstream
    // keeps them when an update leaves them out.
    const json& before = (*current)["spec"];
    for (const char* key : {"volumeName", "storageClassName"}) {
      if (before.contains(key)) SetIfMissing(spec, key, before[key]);
    }
  }
  SetIfMissing(spec, "storageClassName", kDefaultStorageClass);
}

std::string RandomVolumeName() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) id += '-';
    id += kHex[rng() % 16];
  }
  return "pvc-" + id;
}

Status AllocateClusterIp(const control::ObjectReader& store, json& service) {
  json& spec = service["spec"];
  const std::string type = spec.value("type", "ClusterIP");
  if (type == "ExternalName") return Status();
  std::set<uint32_t> used;
  if (auto list = store.List("services", ""); list.ok()) {
    for (const json& s : list->items) {
      const json ip = s.value("spec", json::object()).value("clusterIP", json(""));
      if (!ip.is_string()) continue;
      if (auto v = ParseIpv4(ip.get<std::string>())) used.insert(*v);
    }
  }
  const std::string asked = spec.value("clusterIP", "");
  if (asked == "None") return Status();
  if (!asked.empty()) {
    auto v = ParseIpv4(asked);
    if (v && used.count(*v) != 0) {
      return InvalidArgument("failed to allocate IP " + asked +
                             ": provided IP is already allocated");
    }
    return Status();
  }
  // Network and broadcast addresses excluded; first and last usable are fine.
  if (used.size() + 2 >= kServiceSize)
    return Status(StatusCode::kUnavailable, "the Service address range is full");
  static thread_local std::mt19937 rng(std::random_device{}());
  for (;;) {
    const uint32_t offset = 1 + rng() % (kServiceSize - 2);
    if (used.count(kServiceBase + offset) == 0) {
      spec["clusterIP"] = FormatIpv4(kServiceBase + offset);
      spec["clusterIPs"] = json::array({spec["clusterIP"]});
      spec["ipFamilies"] = json::array({"IPv4"});
      spec["ipFamilyPolicy"] = "SingleStack";
      return Status();
    }
  }
}

void BindClaim(json& claim) {
  json& spec = claim["spec"];
  if (spec.value("volumeName", "").empty()) spec["volumeName"] = RandomVolumeName();
  json& annotations = claim["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  annotations["pv.kubernetes.io/bind-completed"] = "yes";
  annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
  annotations["volume.kubernetes.io/storage-provisioner"] = kLocalProvisioner;
  json status = {{"phase", "Bound"}, {"accessModes", spec.value("accessModes", json::array())}};
  const json requests = spec.value("resources", json::object()).value("requests", json::object());
  if (requests.contains("storage")) status["capacity"] = {{"storage", requests["storage"]}};
  claim["status"] = std::move(status);
}

// SetDefaults_LimitRangeItem: a Container item's default limit from its max, its
// default request from its default limit, then from its min.
void DefaultLimitRange(json& object) {
  json* limits = nullptr;
  if (object.contains("spec") && object["spec"].is_object() && object["spec"].contains("limits") &&
      object["spec"]["limits"].is_array()) {
    limits = &object["spec"]["limits"];
  }
  if (limits == nullptr) return;
  auto fill = [](json& item, const char* into, const char* from) {
    if (!item.contains(from) || !item[from].is_object()) return;
    if (!item.contains(into) || !item[into].is_object()) item[into] = json::object();
    for (const auto& [k, v] : item[from].items()) {
      if (!item[into].contains(k)) item[into][k] = v;
    }
  };
  for (json& item : *limits) {
    if (!item.is_object() || item.value("type", json()) != "Container") continue;
    fill(item, "default", "max");
    fill(item, "defaultRequest", "default");
    fill(item, "defaultRequest", "min");
  }
}

// SetDefaults_Pod, SetDefaults_PodSpec and SetDefaults_Container.
void DefaultPod(json& object, const json* current) {
  if (object.contains("spec")) control::DefaultPodSpecJson(object["spec"]);
  if (current != nullptr) KeepPodPriority(object, *current);
}

}  // namespace

bool InServiceRange(const std::string& ip) {
  auto v = ParseIpv4(ip);
  return v && *v > kServiceBase && *v < kServiceBase + kServiceSize - 1;
}

void DefaultCoreObject(const control::ResourceType& type, json& object, const json* current) {
  if (IsBatchJob(type)) return DefaultBatchJob(object);
  if (IsCronJob(type)) return DefaultCronJob(object);
  if (!type.group.empty() || !object.is_object()) return;
  if (type.kind == "Secret") DefaultSecret(object);
  if (type.kind == "Service") DefaultService(object, current);
  if (type.kind == "PersistentVolumeClaim") DefaultClaim(object, current);
  if (type.kind == "Namespace") DefaultNamespace(object, current);
  if (type.kind == "LimitRange") DefaultLimitRange(object);
  if (type.kind == "Pod") DefaultPod(object, current);
}

Status AllocateOnCreate(const control::ResourceType& type, const control::ObjectReader& store,
                        json& object) {
  if (!type.group.empty()) return Status();
  if (type.kind == "Service") {
    Status s = AllocateClusterIp(store, object);
    if (s.ok()) object["status"] = {{"loadBalancer", json::object()}};
    return s;
  }
  if (type.kind == "PersistentVolumeClaim") BindClaim(object);
  return Status();
}

}  // namespace muster::server
