#include "server/pod_priority.h"

#include <cstdint>
#include <string>

#include "control/json_fields.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

// A stored PriorityClass passed validation; a field of another type reads as unset.
PodPriority FromClass(const json& pc) {
  PodPriority c;
  c.class_name = control::StringField(control::ObjectField(pc, "metadata"), "name");
  c.value = control::IntField(pc, "value");
  if (std::string policy = control::StringField(pc, "preemptionPolicy"); !policy.empty()) {
    c.preemption_policy = policy;
  }
  return c;
}

ApiError ForbiddenPod(const json& pod, const std::string& why) {
  const std::string name = control::StringField(control::ObjectField(pod, "metadata"), "name");
  ApiError e = MakeError(403, "Forbidden", "pods \"" + name + "\" is forbidden: " + why);
  e.name = name;
  e.kind = "pods";
  return e;
}

bool Stated(const json& spec, const char* field) {
  return spec.contains(field) && !spec[field].is_null();
}

}  // namespace

Result<PodPriority> ComputePodPriority(const control::ObjectReader& store,
                                       const std::string& class_name) {
  auto classes = store.List("priorityclasses.scheduling.k8s.io", "");
  if (!classes.ok()) return classes.status();
  return ComputePodPriority(classes->items, class_name);
}

Result<PodPriority> ComputePodPriority(const std::vector<json>& classes,
                                       const std::string& class_name) {
  PodPriority computed;
  if (!class_name.empty()) {
    for (const json& pc : classes) {
      if (control::StringField(control::ObjectField(pc, "metadata"), "name") == class_name)
        return FromClass(pc);
    }
    return NotFound("no PriorityClass with name " + class_name + " was found");
  }
  // The global default; where several claim it, the lowest value, as upstream.
  for (const json& pc : classes) {
    if (!pc.contains("globalDefault") || pc["globalDefault"] != true) continue;
    PodPriority c = FromClass(pc);
    if (computed.class_name.empty() || c.value < computed.value) computed = c;
  }
  return computed;
}

std::optional<ApiError> AdmitPodPriority(const control::ObjectReader& store, json& pod) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return std::nullopt;
  json& spec = pod["spec"];
  auto result = ComputePodPriority(store, control::StringField(spec, "priorityClassName"));
  if (!result.ok() && result.status().code() == StatusCode::kNotFound) {
    return ForbiddenPod(pod, result.status().message());
  }
  if (!result.ok()) {
    return MakeError(
        500, "InternalError",
        "Internal error occurred: reading PriorityClasses: " + result.status().message());
  }
  const PodPriority& computed = *result;
  if (Stated(spec, "priority")) {
    const json& stated = spec["priority"];
    if (!stated.is_number_integer() || stated.get<int64_t>() != computed.value) {
      return ForbiddenPod(pod, "the integer value of priority (" + stated.dump() +
                                   ") must not be provided in pod spec; priority admission "
                                   "controller computed " +
                                   std::to_string(computed.value) +
                                   " from the given PriorityClass name");
    }
  }
  if (Stated(spec, "preemptionPolicy")) {
    const json& stated = spec["preemptionPolicy"];
    if (!stated.is_string() || stated.get<std::string>() != computed.preemption_policy) {
      return ForbiddenPod(pod,
                          "the string value of PreemptionPolicy (" +
                              (stated.is_string() ? stated.get<std::string>() : stated.dump()) +
                              ") must not be provided in pod spec; priority admission "
                              "controller computed " +
                              computed.preemption_policy + " from the given PriorityClass name");
    }
  }
  if (!computed.class_name.empty()) spec["priorityClassName"] = computed.class_name;
  spec["priority"] = computed.value;
  spec["preemptionPolicy"] = computed.preemption_policy;
  return std::nullopt;
}

void KeepPodPriority(json& pod, const json& current) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return;
  const json& old_spec = control::ObjectField(current, "spec");
  json& spec = pod["spec"];
  for (const char* field : {"priority", "preemptionPolicy"}) {
    if (!Stated(spec, field) && Stated(old_spec, field)) spec[field] = old_spec[field];
  }
}

}  // namespace muster::server
