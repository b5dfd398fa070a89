// JobSet status (jobset.x-k8s.io/v1alpha2) as the JobSet controller writes it, with
// serve playing that controller: Completed / Failed with upstream's reasons,
// restarts and restartsCountTowardsMax, and for startupPolicy InOrder the
// StartupPolicyInProgress condition until every replicated job's pods have started,
// then StartupPolicyCompleted (the two exclude each other, as upstream's do).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/workload_record.h"

namespace muster::control {

// Updates `status` (conditions included) of JobSet `object` whose workload is `r`;
// `waiting_pods`: pods of its running gang not started yet.
void SetJobSetStatus(nlohmann::json& status, nlohmann::json& conditions,
                     const nlohmann::json& object, const engine::WorkloadRecord& r,
                     int32_t waiting_pods, int32_t started_pods, const std::string& now);

}  // namespace muster::control
