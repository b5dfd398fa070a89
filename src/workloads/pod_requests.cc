#include "workloads/pod_requests.h"

namespace muster::workloads {

model::QuantityMap DefaultedRequests(const model::Container& container) {
  model::QuantityMap effective = container.requests;
  // emplace keeps an explicit request and only fills the missing ones.
  for (const auto& [name, limit] : container.limits) effective.emplace(name, limit);
  return effective;
}

ResourceList ContainerRequests(const model::Container& container) {
  return ResourceList::FromQuantities(DefaultedRequests(container));
}

ResourceList EffectivePodRequests(const model::PodSpec& spec) {
  ResourceList running;
  for (const model::Container& c : spec.containers) running += ContainerRequests(c);

  // Init containers run one at a time, but every sidecar started before one keeps
  // running while it does; sidecars also keep running with the app containers.
  ResourceList sidecars;
  ResourceList init_peak;
  for (const model::Container& c : spec.init_containers) {
    ResourceList r = ContainerRequests(c);
    if (c.restart_policy == "Always") {
      running += r;
      sidecars += r;
      init_peak = ResourceList::Max(init_peak, sidecars);
    } else {
      init_peak = ResourceList::Max(init_peak, r + sidecars);
    }
  }
  ResourceList total = ResourceList::Max(running, init_peak);
  total += ResourceList::FromQuantities(spec.overhead);
  return total;
}

}  // namespace muster::workloads
