#include "control/pod_spec_json.h"

#include <cstdint>
#include <map>

#include "core/quantity.h"
#include "model/image_pull_policy.h"
#include "workloads/pod_requests.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

json QuantitiesJson(const model::QuantityMap& quantities) {
  json out = json::object();
  for (const auto& [name, q] : quantities) out[name] = q.ToString();
  return out;
}

json StringMapJson(const model::StringMap& map) {
  json out = json::object();
  for (const auto& [k, v] : map) out[k] = v;
  return out;
}

json KeySelectorJson(const model::KeySelector& k) {
  json out = {{"name", k.name}, {"key", k.key}};
  if (k.optional) out["optional"] = true;
  return out;
}

json EnvJson(const model::EnvVar& e) {
  json out = {{"name", e.name}};
  if (!e.value_from) {
    if (!e.value.empty()) out["value"] = e.value;
    return out;
  }
  const model::EnvVarSource& s = *e.value_from;
  json from = json::object();
  if (!s.field_path.empty()) {
    from["fieldRef"] = {{"apiVersion", "v1"}, {"fieldPath", s.field_path}};
  } else if (!s.resource.empty()) {
    json ref = {{"resource", s.resource}};
    if (!s.container_name.empty()) ref["containerName"] = s.container_name;
    if (s.divisor) ref["divisor"] = s.divisor->ToString();
    from["resourceFieldRef"] = std::move(ref);
  } else if (s.config_map_key) {
    from["configMapKeyRef"] = KeySelectorJson(*s.config_map_key);
  } else if (s.secret_key) {
    from["secretKeyRef"] = KeySelectorJson(*s.secret_key);
  }
  out["valueFrom"] = std::move(from);
  return out;
}

json ItemsJson(const std::vector<model::KeyToPath>& items) {
  json out = json::array();
  for (const auto& item : items) {
    json i = {{"key", item.key}, {"path", item.path}};
    if (item.mode) i["mode"] = *item.mode;
    out.push_back(std::move(i));
  }
  return out;
}

json VolumeJson(const model::Volume& v) {
  json out = {{"name", v.name}};
  json source = json::object();
  auto mode = [&] {
    if (v.default_mode) source["defaultMode"] = *v.default_mode;
  };
  switch (v.kind) {
    case model::VolumeKind::kEmptyDir:
      if (!v.medium.empty()) source["medium"] = v.medium;
      if (v.size_limit) source["sizeLimit"] = v.size_limit->ToString();
      out["emptyDir"] = std::move(source);
      break;
    case model::VolumeKind::kHostPath:
      source["path"] = v.source;
      if (!v.host_path_type.empty()) source["type"] = v.host_path_type;
      out["hostPath"] = std::move(source);
      break;
    case model::VolumeKind::kConfigMap:
    case model::VolumeKind::kSecret: {
      const bool config_map = v.kind == model::VolumeKind::kConfigMap;
      source[config_map ? "name" : "secretName"] = v.source;
      if (!v.items.empty()) source["items"] = ItemsJson(v.items);
      if (v.optional) source["optional"] = true;
      mode();
      out[config_map ? "configMap" : "secret"] = std::move(source);
      break;
    }
    case model::VolumeKind::kPersistentVolumeClaim:
      source["claimName"] = v.source;
      if (v.read_only) source["readOnly"] = true;
      out["persistentVolumeClaim"] = std::move(source);
      break;
    case model::VolumeKind::kDownwardApi: {
      json items = json::array();
      for (const auto& [path, field] : v.downward_items) {
        items.push_back(
            {{"path", path}, {"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", field}}}});
      }
      source["items"] = std::move(items);
      mode();
      out["downwardAPI"] = std::move(source);
      break;
    }
    case model::VolumeKind::kUnsupported:
      break;  // its source is one muster does not model (warned at apply)
  }
  return out;
}

const char* OperatorName(model::SelectorOperator op) {
  switch (op) {
    case model::SelectorOperator::kIn:
      return "In";
    case model::SelectorOperator::kNotIn:
      return "NotIn";
    case model::SelectorOperator::kExists:
      return "Exists";
    case model::SelectorOperator::kDoesNotExist:
      return "DoesNotExist";
    case model::SelectorOperator::kGt:
      return "Gt";
    case model::SelectorOperator::kLt:
      return "Lt";
  }
  return "In";
}

json RequirementsJson(const std::vector<model::NodeSelectorRequirement>& requirements) {
  json out = json::array();
  for (const auto& r : requirements) {
    json item = {{"key", r.key}, {"operator", OperatorName(r.op)}};
    if (!r.values.empty()) item["values"] = r.values;
    out.push_back(std::move(item));
  }
  return out;
}

json TermJson(const model::NodeSelectorTerm& term) {
  json out = json::object();
  if (!term.match_expressions.empty()) {
    out["matchExpressions"] = RequirementsJson(term.match_expressions);
  }
  if (!term.match_fields.empty()) out["matchFields"] = RequirementsJson(term.match_fields);
  return out;
}

json NodeAffinityJson(const model::NodeAffinity& a) {
  json out = json::object();
  if (!a.required.empty()) {
    json terms = json::array();
    for (const auto& t : a.required) terms.push_back(TermJson(t));
    out["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", terms}};
  }
  if (!a.preferred.empty()) {
    json preferred = json::array();
    for (const auto& p : a.preferred) {
      preferred.push_back({{"weight", p.weight}, {"preference", TermJson(p.preference)}});
    }
    out["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(preferred);
  }
  return out;
}

json TolerationJson(const model::Toleration& t) {
  json out = json::object();
  if (!t.key.empty()) out["key"] = t.key;
  out["operator"] = t.op == model::TolerationOperator::kExists ? "Exists" : "Equal";
  if (!t.value.empty()) out["value"] = t.value;
  if (t.effect) out["effect"] = model::TaintEffectName(*t.effect);
  if (t.toleration_seconds) out["tolerationSeconds"] = *t.toleration_seconds;
  return out;
}

void DefaultContainerJson(json& c) {
  if (!c.contains("terminationMessagePath")) c["terminationMessagePath"] = "/dev/termination-log";
  if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
  if (!c.contains("imagePullPolicy")) {
    // Read as sent: defaulting runs before validation, on any shape of object.
    const auto image = c.find("image");
    c["imagePullPolicy"] = model::DefaultImagePullPolicy(
        image != c.end() && image->is_string() ? image->get<std::string>() : "");
  }
  if (c.contains("ports") && c["ports"].is_array()) {
    for (json& p : c["ports"]) {
      if (p.is_object() && !p.contains("protocol")) p["protocol"] = "TCP";
    }
  }
  if (!c.contains("resources")) c["resources"] = json::object();
  // SetDefaults_Pod: a limit without a request is also the request.
  json& resources = c["resources"];
  if (resources.is_object() && resources.contains("limits") && resources["limits"].is_object() &&
      (!resources.contains("requests") || resources["requests"].is_object())) {
    for (const auto& [name, value] : resources["limits"].items()) {
      if (!resources["requests"].contains(name)) resources["requests"][name] = value;
    }
  }
}

}  // namespace

json ContainerJson(const model::Container& c) {
  json out = {{"name", c.name}, {"image", c.image}};
  if (!c.command.empty()) out["command"] = c.command;
  if (!c.args.empty()) out["args"] = c.args;
  if (!c.working_dir.empty()) out["workingDir"] = c.working_dir;
  if (!c.ports.empty()) {
    json ports = json::array();
    for (const auto& p : c.ports) {
      json port = {{"containerPort", p.container_port}};
      if (!p.name.empty()) port["name"] = p.name;
      ports.push_back(std::move(port));
    }
    out["ports"] = std::move(ports);
  }
  if (!c.env_from.empty()) {
    json from = json::array();
    for (const auto& f : c.env_from) {
      json ref = {{"name", f.config_map.empty() ? f.secret : f.config_map}};
      if (f.optional) ref["optional"] = true;
      json item = {{f.config_map.empty() ? "secretRef" : "configMapRef", std::move(ref)}};
      if (!f.prefix.empty()) item["prefix"] = f.prefix;
      from.push_back(std::move(item));
    }
    out["envFrom"] = std::move(from);
  }
  if (!c.env.empty()) {
    json env = json::array();
    for (const auto& e : c.env) env.push_back(EnvJson(e));
    out["env"] = std::move(env);
  }
  json resources = json::object();
  if (!c.limits.empty()) resources["limits"] = QuantitiesJson(c.limits);
  if (model::QuantityMap requests = workloads::DefaultedRequests(c); !requests.empty()) {
    resources["requests"] = QuantitiesJson(requests);
  }
  out["resources"] = std::move(resources);
  if (!c.volume_mounts.empty()) {
    json mounts = json::array();
    for (const auto& m : c.volume_mounts) {
      json mount = {{"name", m.name}, {"mountPath", m.mount_path}};
      if (!m.sub_path.empty()) mount["subPath"] = m.sub_path;
      if (m.read_only) mount["readOnly"] = true;
      mounts.push_back(std::move(mount));
    }
    out["volumeMounts"] = std::move(mounts);
  }
  if (!c.image_pull_policy.empty()) out["imagePullPolicy"] = c.image_pull_policy;
  if (!c.restart_policy.empty()) out["restartPolicy"] = c.restart_policy;
  return out;
}

json PodSpecJson(const model::PodSpec& spec) {
  json out = json::object();
  json containers = json::array();
  for (const auto& c : spec.containers) containers.push_back(ContainerJson(c));
  out["containers"] = std::move(containers);
  if (!spec.init_containers.empty()) {
    json init = json::array();
    for (const auto& c : spec.init_containers) init.push_back(ContainerJson(c));
    out["initContainers"] = std::move(init);
  }
  if (!spec.volumes.empty()) {
    json volumes = json::array();
    for (const auto& v : spec.volumes) volumes.push_back(VolumeJson(v));
    out["volumes"] = std::move(volumes);
  }
  if (!spec.node_selector.empty()) out["nodeSelector"] = StringMapJson(spec.node_selector);
  if (!spec.node_affinity.required.empty() || !spec.node_affinity.preferred.empty()) {
    out["affinity"] = {{"nodeAffinity", NodeAffinityJson(spec.node_affinity)}};
  }
  if (!spec.tolerations.empty()) {
    json tolerations = json::array();
    for (const auto& t : spec.tolerations) tolerations.push_back(TolerationJson(t));
    out["tolerations"] = std::move(tolerations);
  }
  if (!spec.priority_class_name.empty()) out["priorityClassName"] = spec.priority_class_name;
  if (spec.priority) out["priority"] = *spec.priority;
  if (!spec.scheduler_name.empty()) out["schedulerName"] = spec.scheduler_name;
  out["restartPolicy"] = spec.restart_policy;
  out["terminationGracePeriodSeconds"] = spec.termination_grace_period_seconds;
  if (!spec.subdomain.empty()) out["subdomain"] = spec.subdomain;
  if (!spec.hostname.empty()) out["hostname"] = spec.hostname;
  if (!spec.service_account_name.empty()) out["serviceAccountName"] = spec.service_account_name;
  if (!spec.overhead.empty()) out["overhead"] = QuantitiesJson(spec.overhead);
  return out;
}

void DefaultPodSpecJson(json& spec) {
  if (!spec.is_object()) return;
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("securityContext")) spec["securityContext"] = json::object();
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
  // The ServiceAccount admission plugin: "default", mirrored in the deprecated field.
  if (!spec.contains("serviceAccountName")) spec["serviceAccountName"] = "default";
  spec["serviceAccount"] = spec["serviceAccountName"];
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (json& c : spec[list]) {
      if (c.is_object()) DefaultContainerJson(c);
    }
  }
  if (spec.contains("volumes") && spec["volumes"].is_array()) {
    for (json& v : spec["volumes"]) {
      for (const char* kind : {"configMap", "secret", "downwardAPI"}) {
        if (v.contains(kind) && v[kind].is_object() && !v[kind].contains("defaultMode")) {
          v[kind]["defaultMode"] = 0644;
        }
      }
    }
  }
}

std::string PodQosClass(const model::PodSpec& spec) {
  // Only cpu and memory count (isSupportedQoSComputeResource); zero values do not.
  auto counts = [](const std::string& name, const Quantity& q) {
    return (name == "cpu" || name == "memory") && !q.IsZero();
  };
  // Sums in milli-units (MilliValue saturates; pods do not come near it).
  std::map<std::string, int64_t> requests, limits;
  bool guaranteed = true;
  auto visit = [&](const model::Container& c) {
    for (const auto& [name, q] : workloads::DefaultedRequests(c)) {
      if (counts(name, q)) requests[name] += q.MilliValue();
    }
    int limited = 0;
    for (const auto& [name, q] : c.limits) {
      if (!counts(name, q)) continue;
      limits[name] += q.MilliValue();
      ++limited;
    }
    if (limited != 2) guaranteed = false;
  };
  for (const auto& c : spec.containers) visit(c);
  for (const auto& c : spec.init_containers) visit(c);
  if (requests.empty() && limits.empty()) return "BestEffort";
  return guaranteed && requests == limits ? "Guaranteed" : "Burstable";
}

}  // namespace muster::control
