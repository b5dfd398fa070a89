// v1 Pod created on its own (not from a job's template): validated like a template
// so the API refuses what it could never run (`cpu: "abc"`, 2^31 GPUs), but not
// scheduled by the simulator. `muster serve` runs such pods as workloads of their own
// (control/pod_workloads.h decodes each as a one-pod Job).
#include <set>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {

// The decoder table's signature takes the metadata by value (the others move it).
void DecodeBarePod(const YamlValue& root,
                   model::ObjectMeta meta,  // NOLINT(performance-unnecessary-value-param)
                   DecodeResult& out) {
  YamlValue spec = root.Get("spec");
  const model::PodSpec pod = DecodePodSpec(spec);
  YamlValue containers = spec.Get("containers");
  if (!containers.IsSet() || (containers.IsList() && pod.containers.empty())) {
    containers.Error("Required value: a pod has at least one container");
  }
  std::set<std::string> names;
  const auto items = containers.Items();
  for (size_t i = 0; i < items.size() && i < pod.containers.size(); ++i) {
    const std::string& name = pod.containers[i].name;
    if (name.empty()) {
      items[i].Get("name").Error("Required value");
    } else if (!names.insert(name).second) {
      items[i].Get("name").Error("Duplicate value: " + Quote(name));
    }
  }
  NoteValidatedOnly(root, meta, out);
}

}  // namespace muster::api::internal
