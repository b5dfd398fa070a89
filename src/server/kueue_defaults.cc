#include "server/kueue_defaults.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "server/graceful_deletion.h"

namespace muster::server {

using nlohmann::json;

void DefaultKueueObject(const control::ResourceType& type, json& object, const json* current) {
  const std::string key = type.StoreKey();
  if (key != "clusterqueues.kueue.x-k8s.io" && key != "resourceflavors.kueue.x-k8s.io") return;
  if (!object.is_object()) return;
  if (current != nullptr && BeingDeleted(*current)) return;
  json& meta = object["metadata"];
  if (!meta.is_object()) return;  // validation answers for it
  json& finalizers = meta["finalizers"];
  if (finalizers.is_null()) finalizers = json::array();
  if (!finalizers.is_array()) return;
  const json name = control::kResourceInUseFinalizer;
  if (std::find(finalizers.begin(), finalizers.end(), name) == finalizers.end())
    finalizers.push_back(name);
}

}  // namespace muster::server
