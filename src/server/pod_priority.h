// kube-apiserver's Priority admission plugin, for the Pods created through serve's API:
// on create a pod's priority is computed from its PriorityClass (spec.priorityClassName),
// else from the global default class (which then names it), else 0, and written into
// spec.priority and spec.preemptionPolicy. A class that does not exist, or a priority or
// preemption policy the pod states that differs from what was computed, is refused with
// 403 Forbidden, as upstream. On an update the stored pod's values are kept where the new
// object leaves them out (upstream copies them before validation).
// Pods the executors write for admitted jobs do not pass here (see src/server/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/object_reader.h"
#include "server/api_status.h"

namespace muster::server {

// nullopt: `pod` may be created, with spec.priority (and spec.priorityClassName from the
// global default, spec.preemptionPolicy) set; else the 403 to answer.
std::optional<ApiError> AdmitPodPriority(const control::ObjectReader& store, nlohmann::json& pod);

// On an update: the stored pod's spec.priority and spec.preemptionPolicy where `pod`
// has none.
void KeepPodPriority(nlohmann::json& pod, const nlohmann::json& current);

}  // namespace muster::server
