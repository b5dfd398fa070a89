// Kubeflow PyTorchJob / TFJob (kubeflow.org/v1) and MPIJob (v2beta1) -> Workload: one
// pod set per replica type, lower-cased, in the order Kueue's kubeflow integration
// lists them (OrderedReplicaTypes).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/text.h"
#include "workloads/build_internal.h"

namespace muster::workloads::internal {
namespace {

struct KindInfo {
  std::string_view field;  // where the replica specs live
  std::vector<std::string_view> order;
  std::string_view default_restart_policy;  // the operator's defaulting when unset
};

// mpi-operator v2 runs its launcher as a batch Job, whose default backoffLimit applies
// when runPolicy sets none (the decoder defaults the launcher to OnFailure).
constexpr int32_t kMpiLauncherBackoffLimit = 6;

const KindInfo* InfoFor(const std::string& kind) {
  static const KindInfo kPytorchInfo{"spec.pytorchReplicaSpecs", {"Master", "Worker"}, "OnFailure"};
  static const KindInfo kTfInfo{
      "spec.tfReplicaSpecs", {"Chief", "Master", "PS", "Worker", "Evaluator"}, "Never"};
  static const KindInfo kMpiInfo{"spec.mpiReplicaSpecs", {"Launcher", "Worker"}, "Never"};
  if (kind == "PyTorchJob") return &kPytorchInfo;
  if (kind == "TFJob") return &kTfInfo;
  if (kind == "MPIJob") return &kMpiInfo;
  return nullptr;
}

std::string Join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// Replica specs in Kueue's order; rejects unknown and repeated replica types.
Result<std::vector<const model::ReplicaSpec*>> OrderedReplicas(const model::KubeflowJob& job,
                                                               const KindInfo& info) {
  std::vector<const model::ReplicaSpec*> by_rank(info.order.size(), nullptr);
  for (const model::ReplicaSpec& r : job.replica_specs) {
    std::string field = std::string(info.field) + "." + r.type;
    auto it = std::find_if(info.order.begin(), info.order.end(),
                           [&](std::string_view t) { return AsciiLower(t) == AsciiLower(r.type); });
    if (it == info.order.end()) {
      return FieldError(job.meta, field,
                        "unknown replica type; " + job.meta.kind + " allows " + Join(info.order));
    }
    const model::ReplicaSpec*& slot = by_rank[it - info.order.begin()];
    if (slot != nullptr) return FieldError(job.meta, field, "replica type given twice");
    slot = &r;
  }
  std::vector<const model::ReplicaSpec*> out;
  for (const model::ReplicaSpec* r : by_rank) {
    if (r != nullptr) out.push_back(r);
  }
  if (out.empty()) return FieldError(job.meta, info.field, "at least one replica type is required");
  return out;
}

bool Restarts(std::string_view restart_policy) {
  // ExitCode retries only retryable (>= 128) exit codes, but it does retry: the
  // simulator's failures are node losses and evictions, which are retryable.
  return restart_policy == "OnFailure" || restart_policy == "ExitCode" ||
         restart_policy == "Always";
}

// Gang minimum: schedulingPolicy.minAvailable (the PodGroup's minMember) first, then
// PyTorch elastic minReplicas, which bounds the workers only; else every pod.
Status ApplyMinimums(const model::KubeflowJob& job, model::Workload* w) {
  const auto& policy = job.run_policy.scheduling_policy;
  if (policy && policy->min_available) {
    if (*policy->min_available < 0) {
      return FieldError(job.meta, "spec.runPolicy.schedulingPolicy.minAvailable",
                        "must be 0 or more");
    }
    DistributeMinCount(*policy->min_available, &w->pod_sets);
    // The operator writes it into the PodGroup's minMember: Volcano starts the job
    // with that many pods and schedules the rest as they fit.
    w->elastic = model::ElasticSource::kPodGroupMinMember;
  } else if (job.elastic_policy && job.elastic_policy->min_replicas) {
    int32_t min_replicas = *job.elastic_policy->min_replicas;
    if (min_replicas < 0) {
      return FieldError(job.meta, "spec.elasticPolicy.minReplicas", "must be 0 or more");
    }
    for (model::PodSet& ps : w->pod_sets) {
      if (ps.name == "worker") ps.min_count = std::min(ps.count, min_replicas);
    }
    // torch elastic: workers beyond minReplicas join the rendezvous as they start.
    w->elastic = model::ElasticSource::kPyTorchElasticPolicy;
  }
  w->min_available = SumMinCounts(w->pod_sets);
  return Status::Ok();
}

}  // namespace

Result<model::Workload> BuildKubeflowJob(const model::KubeflowJob& job, PriorityRefs* refs) {
  const KindInfo* info = InfoFor(job.meta.kind);
  if (info == nullptr) {
    return FieldError(
        job.meta, "kind",
        "\"" + job.meta.kind + "\" is not a Kubeflow kind (PyTorchJob, TFJob, MPIJob)");
  }
  auto replicas = OrderedReplicas(job, *info);
  if (!replicas.ok()) return replicas.status();

  model::Workload w;
  bool restarts = false;
  for (const model::ReplicaSpec* r : *replicas) {
    std::string field = std::string(info->field) + "." + r->type + ".template";
    auto ps = MakePodSet(job.meta, field, AsciiLower(r->type), r->replicas, r->tmpl);
    if (!ps.ok()) return ps.status();
    ps->restart_policy =
        r->restart_policy.empty() ? std::string(info->default_restart_policy) : r->restart_policy;
    restarts = restarts || Restarts(ps->restart_policy);
    NoteTemplateClass(r->tmpl, field, refs);
    if (w.scheduler_name.empty()) w.scheduler_name = r->tmpl.spec.scheduler_name;
    w.pod_sets.push_back(std::move(*ps));
  }
  if (Status s = ApplyMinimums(job, &w); !s.ok()) return s;

  if (const auto& policy = job.run_policy.scheduling_policy) {
    w.volcano_queue = policy->queue;
    refs->spec_class = policy->priority_class;
    refs->spec_field = "spec.runPolicy.schedulingPolicy.priorityClass";
  }
  w.lifecycle.restart_on_failure = restarts;
  // Without backoffLimit the training operator never gives up on a restartable
  // replica. mpi-operator v2 hands runPolicy.backoffLimit to its launcher, a batch Job,
  // whose own default (6) then applies.
  const int32_t unlimited =
      job.meta.kind == "MPIJob" ? kMpiLauncherBackoffLimit : std::numeric_limits<int32_t>::max();
  w.lifecycle.max_restarts = job.run_policy.backoff_limit.value_or(restarts ? unlimited : 0);

  w.rank.nproc_per_node = job.nproc_per_node;
  w.rank.elastic_policy = job.elastic_policy;
  if (job.meta.kind == "MPIJob") {
    w.rank.slots_per_worker = job.slots_per_worker;
    w.rank.mpi_implementation = job.mpi_implementation.empty() ? "OpenMPI" : job.mpi_implementation;
    // WaitForWorkersReady: mpi-operator creates the launcher once every worker is
    // Ready; the executor holds the launcher until the worker pods run.
    bool workers = std::any_of(w.pod_sets.begin(), w.pod_sets.end(),
                               [](const model::PodSet& ps) { return ps.name == "worker"; });
    for (model::PodSet& ps : w.pod_sets) {
      if (job.launcher_waits_for_workers && workers && ps.name == "launcher") {
        ps.start_after.push_back({"worker", false});
      }
    }
  }
  return w;
}

}  // namespace muster::workloads::internal
