// PyTorchJob env, as the training operator's setPodEnv (envvar.go, master.go,
// elastic.go in pkg/controller.v1/pytorch) writes it.
#include <charconv>
#include <string>

#include "workloads/rank_internal.h"

namespace muster::workloads::internal {
namespace {

// spec.nprocPerNode, else the deprecated elasticPolicy.nProcPerNode, else the
// operator's default "auto".
std::string NprocPerNode(const model::RankSpec& rank) {
  if (rank.nproc_per_node) return *rank.nproc_per_node;
  if (rank.elastic_policy && rank.elastic_policy->nproc_per_node) {
    return std::to_string(*rank.elastic_policy->nproc_per_node);
  }
  return "auto";
}

// getNprocPerNodeInt: a non-integer ("auto", "gpu") counts as 1 process per pod.
int32_t NprocAsInt(const std::string& nproc) {
  int32_t n = 0;
  auto [ptr, ec] = std::from_chars(nproc.data(), nproc.data() + nproc.size(), n);
  if (ec != std::errc() || ptr != nproc.data() + nproc.size() || n <= 0) return 1;
  return n;
}

void AddElasticEnv(const model::Workload& w, const model::ElasticPolicy& policy, int32_t worker,
                   const RankContext& context, PodIdentity* id) {
  int32_t workers = worker >= 0 ? w.pod_sets[worker].count : 0;
  // The rendezvous runs on worker 0, at the port the workers listen on.
  std::string host = worker >= 0 ? HostnameOf(w, context, worker, 0) : w.meta.name + "-worker-0";
  id->env["PET_RDZV_ENDPOINT"] = host + ":" + std::to_string(context.master_port);
  id->env["PET_RDZV_BACKEND"] = policy.rdzv_backend.empty() ? "c10d" : policy.rdzv_backend;
  if (policy.min_replicas || policy.max_replicas) {
    int32_t min = policy.min_replicas.value_or(policy.max_replicas.value_or(workers));
    int32_t max = policy.max_replicas.value_or(min);
    id->env["PET_NNODES"] = std::to_string(min) + ":" + std::to_string(max);
  } else {
    id->env["PET_NNODES"] = std::to_string(workers);
  }
  if (policy.max_restarts) id->env["PET_MAX_RESTARTS"] = std::to_string(*policy.max_restarts);
  if (policy.nproc_per_node) {
    id->env["PET_NPROC_PER_NODE"] = std::to_string(*policy.nproc_per_node);
  }
}

}  // namespace

void PyTorchIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                     const RankContext& context, PodIdentity* id) {
  int32_t master = PodSetIndex(w, "master");
  int32_t worker = PodSetIndex(w, "worker");
  const std::string& role = w.pod_sets[pod_set].name;
  std::string nproc = NprocPerNode(w.rank);
  int32_t total = w.TotalCount();

  id->env["PYTHONUNBUFFERED"] = "1";

  // The operator writes these only when there is a Master; without one worker 0 takes
  // its place (rank 0, MASTER_ADDR), so plain init_process_group still works.
  int32_t rank = index;
  if (role == "worker" && master >= 0) rank = index + w.pod_sets[master].count;
  int32_t coordinator = master >= 0 ? master : worker;
  std::string master_addr = context.master_addr;
  if (master_addr.empty() && coordinator >= 0) master_addr = HostnameOf(w, context, coordinator, 0);
  std::string port = std::to_string(context.master_port);

  id->env["MASTER_ADDR"] = master_addr;
  id->env["MASTER_PORT"] = port;
  id->env["PET_MASTER_ADDR"] = master_addr;
  id->env["PET_MASTER_PORT"] = port;
  // WORLD_SIZE counts processes: pods x processes per pod.
  id->env["WORLD_SIZE"] = std::to_string(total * NprocAsInt(nproc));
  id->env["RANK"] = std::to_string(rank);
  id->env["PET_NODE_RANK"] = std::to_string(rank);
  id->env["PET_NPROC_PER_NODE"] = nproc;

  if (w.rank.elastic_policy) {
    AddElasticEnv(w, *w.rank.elastic_policy, worker, context, id);
  } else {
    id->env["PET_NNODES"] = std::to_string(total);
  }
}

}  // namespace muster::workloads::internal
