#include "engine/flavor_injection.h"

#include <algorithm>
#include <set>

namespace muster::engine {

model::Workload WithFlavorInjection(const model::Workload& workload,
                                    const admission::Assignment& assignment,
                                    const std::map<std::string, model::ResourceFlavor>& flavors) {
  model::Workload out = workload;
  for (const admission::PodSetAssignment& psa : assignment.pod_sets) {
    auto ps = std::find_if(out.pod_sets.begin(), out.pod_sets.end(),
                           [&](const model::PodSet& p) { return p.name == psa.pod_set; });
    if (ps == out.pod_sets.end()) continue;
    // Each flavor once, in name order: the merged selector does not depend on the
    // order of the pod set's resources.
    std::set<std::string> names;
    for (const auto& [resource, flavor] : psa.flavors) names.insert(flavor);
    model::PodSpec& spec = ps->tmpl.spec;
    for (const std::string& name : names) {
      auto it = flavors.find(name);
      if (it == flavors.end()) continue;
      for (const auto& [key, value] : it->second.node_labels) spec.node_selector[key] = value;
      for (const model::Toleration& t : it->second.tolerations) {
        if (std::find(spec.tolerations.begin(), spec.tolerations.end(), t) ==
            spec.tolerations.end()) {
          spec.tolerations.push_back(t);
        }
      }
    }
  }
  return out;
}

}  // namespace muster::engine
