// kube-apiserver's Priority admission plugin, for the Pods created through serve's API:
// on create a pod's priority is computed from its PriorityClass (spec.priorityClassName),
// else from the global default class (which then names it), else 0, and written into
// spec.priority and spec.preemptionPolicy. A class that does not exist, or a priority or
// preemption policy the pod states that differs from what was computed, is refused with
// 403 Forbidden, as upstream. On an update the stored pod's values are kept where the new
// object leaves them out (upstream copies them before validation).
// Pods the executors write for admitted jobs do not pass here; they get the same
// computation (ComputePodPriority), as a job controller's creates would.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/object_reader.h"
#include "core/status.h"
#include "server/api_status.h"

namespace muster::server {

// What the plugin computes for a pod.
struct PodPriority {
  std::string class_name;  // the class it names, or the global default; "" when none
  int64_t value = 0;
  std::string preemption_policy = "PreemptLowerPriority";
};

// For a pod naming PriorityClass `class_name` ("" = none: the global default, else 0):
// NotFound when it names a class that does not exist.
Result<PodPriority> ComputePodPriority(const control::ObjectReader& store,
                                       const std::string& class_name);
// The same over `classes`, the stored PriorityClasses (one read for many pods).
Result<PodPriority> ComputePodPriority(const std::vector<nlohmann::json>& classes,
                                       const std::string& class_name);

// nullopt: `pod` may be created, with spec.priority (and spec.priorityClassName from the
// global default, spec.preemptionPolicy) set; else the 403 to answer.
std::optional<ApiError> AdmitPodPriority(const control::ObjectReader& store, nlohmann::json& pod);

// On an update: the stored pod's spec.priority and spec.preemptionPolicy where `pod`
// has none.
void KeepPodPriority(nlohmann::json& pod, const nlohmann::json& current);

}  // namespace muster::server
