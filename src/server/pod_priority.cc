#include "server/pod_priority.h"

#include <cstdint>
#include <string>

#include "control/json_fields.h"

namespace muster::server {
namespace {

using control::ObjectField;
using control::StringField;
using json = nlohmann::json;

constexpr char kPreemptLowerPriority[] = "PreemptLowerPriority";

struct Computed {
  std::string class_name;  // "" when no class applies
  int64_t priority = 0;    // upstream's DefaultPriorityWhenNoDefaultClassExists
  std::string preemption_policy = kPreemptLowerPriority;
};

// A stored PriorityClass passed validation; a field of another type reads as unset.
Computed FromClass(const json& pc) {
  Computed c;
  c.class_name = StringField(ObjectField(pc, "metadata"), "name");
  c.priority = control::IntField(pc, "value");
  if (std::string policy = StringField(pc, "preemptionPolicy"); !policy.empty()) {
    c.preemption_policy = policy;
  }
  return c;
}

ApiError Forbidden(const json& pod, const std::string& why) {
  const std::string name = StringField(ObjectField(pod, "metadata"), "name");
  ApiError e = MakeError(403, "Forbidden", "pods \"" + name + "\" is forbidden: " + why);
  e.name = name;
  e.kind = "pods";
  return e;
}

bool Stated(const json& spec, const char* field) {
  return spec.contains(field) && !spec[field].is_null();
}

}  // namespace

std::optional<ApiError> AdmitPodPriority(const control::ObjectReader& store, json& pod) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return std::nullopt;
  json& spec = pod["spec"];
  auto classes = store.List("priorityclasses.scheduling.k8s.io", "");
  if (!classes.ok()) {
    return MakeError(
        500, "InternalError",
        "Internal error occurred: reading PriorityClasses: " + classes.status().message());
  }
  const std::string named = StringField(spec, "priorityClassName");
  Computed computed;
  if (!named.empty()) {
    const json* found = nullptr;
    for (const json& pc : classes->items) {
      if (StringField(ObjectField(pc, "metadata"), "name") == named) found = &pc;
    }
    if (found == nullptr) {
      return Forbidden(pod, "no PriorityClass with name " + named + " was found");
    }
    computed = FromClass(*found);
  } else {
    // The global default; where several claim it, the lowest value, as upstream.
    for (const json& pc : classes->items) {
      if (!pc.contains("globalDefault") || pc["globalDefault"] != true) continue;
      Computed c = FromClass(pc);
      if (computed.class_name.empty() || c.priority < computed.priority) computed = c;
    }
  }
  if (Stated(spec, "priority")) {
    const json& stated = spec["priority"];
    if (!stated.is_number_integer() || stated.get<int64_t>() != computed.priority) {
      return Forbidden(pod, "the integer value of priority (" + stated.dump() +
                                ") must not be provided in pod spec; priority admission "
                                "controller computed " +
                                std::to_string(computed.priority) +
                                " from the given PriorityClass name");
    }
  }
  if (Stated(spec, "preemptionPolicy")) {
    const json& stated = spec["preemptionPolicy"];
    if (!stated.is_string() || stated.get<std::string>() != computed.preemption_policy) {
      return Forbidden(pod, "the string value of PreemptionPolicy (" +
                                (stated.is_string() ? stated.get<std::string>() : stated.dump()) +
                                ") must not be provided in pod spec; priority admission "
                                "controller computed " +
                                computed.preemption_policy + " from the given PriorityClass name");
    }
  }
  if (!computed.class_name.empty()) spec["priorityClassName"] = computed.class_name;
  spec["priority"] = computed.priority;
  spec["preemptionPolicy"] = computed.preemption_policy;
  return std::nullopt;
}

void KeepPodPriority(json& pod, const json& current) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return;
  const json& old_spec = ObjectField(current, "spec");
  json& spec = pod["spec"];
  for (const char* field : {"priority", "preemptionPolicy"}) {
    if (!Stated(spec, field) && Stated(old_spec, field)) spec[field] = old_spec[field];
  }
}

}  // namespace muster::server
