// Effective per-pod resource requests, computed the way Kubernetes computes them for
// scheduling and quota (k8s.io/component-helpers/resource PodRequests, with the
// sidecar-container rules of KEP-753).
#pragma once

#include "core/resource_list.h"
#include "model/pod.h"

namespace muster::workloads {

// Requests of one container after API defaulting (SetDefaults_Container): a resource
// with a limit but no request is requested at its limit; an explicit request (even
// "0") is kept.
model::QuantityMap DefaultedRequests(const model::Container& container);
// The same as a ResourceList.
ResourceList ContainerRequests(const model::Container& container);

// max(sum of app containers + sidecars, largest init-container step) + overhead, where
// an init container's step also counts the sidecars (restartPolicy Always) started
// before it, and sidecars keep running next to the app containers.
ResourceList EffectivePodRequests(const model::PodSpec& spec);

}  // namespace muster::workloads
