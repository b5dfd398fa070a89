// Public contract of the workloads layer: every job kind becomes one Workload, and
// each pod's rank identity (env, hostname) is a pure function of the Workload.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::workloads {

// Converts every job of `manifests` into a Workload, in input order, resolving
// priority (PriorityClass / WorkloadPriorityClass / Volcano) and queues.
Result<std::vector<model::Workload>> BuildWorkloads(const model::ManifestSet& manifests);

// Converts one job. `manifests` supplies priority classes and pod groups.
Result<model::Workload> BuildWorkload(const model::JobObject& job,
                                      const model::ManifestSet& manifests);

// The runtime a TrainJob's spec.runtimeRef names (a TrainingRuntime in the TrainJob's
// namespace, or a ClusterTrainingRuntime); nullptr when `manifests` has none.
const model::TrainingRuntime* FindTrainingRuntime(const model::TrainJob& job,
                                                  const model::ManifestSet& manifests);

// The JobSet a TrainJob runs as: the runtime's template, named and labelled like the
// TrainJob, its trainer step ("node") given numNodes pods and the trainer's image,
// command, args, env and resources. `nproc_per_node` receives the torch plugin's
// PET_NPROC_PER_NODE (empty for a runtime without torch).
Result<model::JobSet> TrainJobAsJobSet(const model::TrainJob& job,
                                       const model::TrainingRuntime& runtime,
                                       std::string* nproc_per_node, std::string* trainer_step);

// Where the gang runs, needed to compute addresses: hostnames per pod, the master
// address and port chosen by the executor.
struct RankContext {
  std::string master_addr;  // default: the coordinator's name (PyTorchJob "<job>-master-0")
  int32_t master_port = 23456;
  // How each pod is reached, by pod set then index, used verbatim (e.g. pod IPs where
  // names cannot resolve). Default: the names upstream's controllers write, which a
  // cluster's DNS resolves: "<pod>" (PyTorch), "<pod>.<ns>.svc" (TF_CONFIG),
  // "<worker>.<job>.<ns>.svc" (MPI hostfile), "<pod>.<subdomain>" (Volcano svc).
  std::map<std::string, std::vector<std::string>> hostnames;
};

struct PodIdentity {
  std::string hostname;                    // DefaultHostname, or the context's address
  std::map<std::string, std::string> env;  // RANK, WORLD_SIZE, MASTER_ADDR, PET_*, TF_CONFIG...
  std::string mpi_hostfile;                // MPIJob launcher: "host slots=N" lines
  // Volcano svc plugin: the files of /etc/volcano ("<task>.host": one host a line).
  std::map<std::string, std::string> volcano_hostfiles;
};

// The identity of pod `index` of pod set `pod_set` (index into Workload::pod_sets).
PodIdentity RankIdentity(const model::Workload& workload, int32_t pod_set, int32_t index,
                         const RankContext& context);

// Name and hostname of a pod as its upstream controller makes them: a batch Job's
// "<job>-<index>" (the Indexed Job hostname), a JobSet's
// "<jobset>-<replicatedJob>-<jobIndex>-<podIndex>", every other kind's
// "<job>-<podset>-<index>" (Kubeflow, Volcano). "" for an unknown pod set.
std::string DefaultHostname(const model::Workload& workload, int32_t pod_set, int32_t index);

// The pod's subdomain (spec.subdomain): the template's, else the headless Service
// the kind's controller creates: a JobSet's (its name), an MPIJob's (its name), a
// Volcano Job's with the svc plugin (its name). "" when none.
std::string DefaultSubdomain(const model::Workload& workload, int32_t pod_set);

// A RankContext with the defaults upstream controllers use for `workload`: for a
// PyTorchJob, MASTER_PORT is the master template's "pytorchjob-port" of container
// "pytorch" when declared (else 23456). Executors that pick their own ports override.
RankContext DefaultRankContext(const model::Workload& workload);

}  // namespace muster::workloads
