// What Kueue's defaulting webhooks add to its objects as they are written: a
// ClusterQueue and a ResourceFlavor carry the resource-in-use finalizer
// (control/workload_objects.h), so that deleting a ClusterQueue while it has admitted
// workloads leaves it terminating until they are done instead of evicting them, and
// deleting a flavor that ClusterQueues name leaves it serving them until none does.
// Added on create and on an update that dropped it, never to an object already being
// deleted (no finalizer may be added then).
#pragma once

#include <nlohmann/json.hpp>

#include "control/resource_types.h"

namespace muster::server {

// `current` is the stored object on an update (nullptr on create).
void DefaultKueueObject(const control::ResourceType& type, nlohmann::json& object,
                        const nlohmann::json* current);

}  // namespace muster::server
