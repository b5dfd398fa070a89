// Per-kind rank identity (rank_*.cc). Not part of the layer's API.
#pragma once

#include <string>
#include <string_view>

#include "model/workload.h"
#include "workloads/workloads.h"

namespace muster::workloads::internal {

// Hostname of a pod: context.hostnames when it names one, else DefaultHostname.
std::string HostnameOf(const model::Workload& workload, const RankContext& context, int32_t pod_set,
                       int32_t index);

// How pod `index` of `pod_set` is reached: the context's address when it gives one
// (verbatim), else DefaultHostname + `dns_suffix` (".<ns>.svc", ".<subdomain>"...).
std::string AddressOf(const model::Workload& workload, const RankContext& context, int32_t pod_set,
                      int32_t index, std::string_view dns_suffix);

// Index of the pod set called `name`, or -1.
int32_t PodSetIndex(const model::Workload& workload, std::string_view name);

// The containerPort named `port_name` in the container named `container` (the ports
// the Kubeflow operators read), or `fallback`.
int32_t DeclaredPort(const model::PodTemplate& tmpl, std::string_view container,
                     std::string_view port_name, int32_t fallback);

// Each adds the env (and hostfile) of its kind to `id`.
void PyTorchIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                     const RankContext& context, PodIdentity* id);
// TrainJob on a torch runtime: torchrun's PET_* env on the trainer step's pods.
void TrainerTorchIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                          const RankContext& context, PodIdentity* id);
void TensorFlowIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                        const RankContext& context, PodIdentity* id);
void MpiIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                 const RankContext& context, PodIdentity* id);
void VolcanoIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                     const RankContext& context, PodIdentity* id);

}  // namespace muster::workloads::internal
