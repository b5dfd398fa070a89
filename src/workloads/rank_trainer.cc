// Trainer v2's torch plugin: the env torchrun reads on every pod of a TrainJob's
// trainer step (upstream sets it on the "node" container of the JobSet template).
#include <string>

#include "workloads/rank_internal.h"
#include "workloads/workloads.h"

namespace muster::workloads::internal {

void TrainerTorchIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                          const RankContext& context, PodIdentity* id) {
  const model::PodSet& ps = w.pod_sets[pod_set];
  if (w.rank.torch_trainer_pod_set.empty() || ps.name != w.rank.torch_trainer_pod_set) return;
  const int32_t per_job = ps.pods_per_job > 0 ? ps.pods_per_job : ps.count;
  id->env["PET_NNODES"] = std::to_string(per_job);
  id->env["PET_NPROC_PER_NODE"] = w.rank.nproc_per_node.value_or("auto");
  // The pod's completion index (upstream: a fieldRef to the Job's completion index).
  id->env["PET_NODE_RANK"] = std::to_string(per_job > 0 ? index % per_job : index);
  // Node 0 of the trainer step: "<trainjob>-node-0-0.<trainjob>", the JobSet pod's
  // hostname under the JobSet's headless service; an executor's address is used as is.
  std::string master = context.master_addr;
  if (master.empty()) {
    master = HostnameOf(w, context, pod_set, 0);
    if (master == DefaultHostname(w, pod_set, 0)) master += "." + DefaultSubdomain(w, pod_set);
  }
  id->env["PET_MASTER_ADDR"] = master;
  id->env["PET_MASTER_PORT"] = std::to_string(context.master_port);
}

}  // namespace muster::workloads::internal
