#include "server/kueue_defaults.h"

#include "control/json_fields.h"
#include "control/workload_objects.h"
#include "server/graceful_deletion.h"

namespace muster::server {

using nlohmann::json;

void DefaultKueueObject(const control::ResourceType& type, json& object, const json* current) {
  const std::string key = type.StoreKey();
  if (key != "clusterqueues.kueue.x-k8s.io" && key != "resourceflavors.kueue.x-k8s.io") return;
  if (!object.is_object()) return;
  if (current != nullptr && BeingDeleted(*current)) return;
  control::AddFinalizer(object, control::kResourceInUseFinalizer);
}

}  // namespace muster::server
