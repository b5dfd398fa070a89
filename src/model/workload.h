// Workload: the engine's unit of admission and gang placement, made from any job
// kind by workloads/. One Workload per job; one PodSet per replica type / task /
// replicated job, named as Kueue names them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"
#include "model/jobs.h"
#include "model/meta.h"
#include "model/pod.h"
#include "model/volcano.h"

namespace muster::model {

// Topology-aware placement request for a pod set.
struct TopologyRequest {
  enum class Mode { kNone, kRequired, kPreferred, kUnconstrained };
  Mode mode = Mode::kNone;
  std::string level;  // Kueue: a node label key of a Topology level
  // Volcano networkTopology: hard/soft with the highest HyperNode tier allowed.
  std::optional<int32_t> highest_tier_allowed;
};

// A pod set that starts only once another one has reached a state: JobSet
// startupPolicy InOrder (the previous replicated job Ready) and dependsOn.
struct PodSetDependency {
  std::string pod_set;
  bool complete = false;  // Complete (every pod succeeded); else Ready (every pod running)
};

// What decides a gang's success and what a pod failure does, when its job kind says
// (JobSet successPolicy and failurePolicy.rules). The executor applies it; the engine
// never reads it, so admission and placement decisions do not depend on it.
struct GangPolicy {
  // Success counts the child Jobs (pods_per_job consecutive pods) of pod sets.
  bool child_jobs = false;
  bool success_any = false;               // Any: one child Job; All: every one
  std::vector<std::string> success_sets;  // target pod sets; empty = all
  std::vector<JobSetFailureRule> failure_rules;
  bool in_order = false;  // startupPolicy InOrder (for the JobSet's conditions)
};

struct PodSet {
  std::string name;       // "main", "master", "worker", task or replicated-job name
  int32_t count = 1;      // pods in this set
  int32_t min_count = 1;  // pods that must run for the gang to start (<= count)
  // Effective per-pod requests as Kubernetes computes them: max(sum of containers,
  // largest init container) + overhead; limits stand in for missing requests.
  ResourceList requests;
  StringMap node_selector;
  NodeAffinity node_affinity;
  std::vector<Toleration> tolerations;
  TopologyRequest topology;
  std::string restart_policy;
  PodTemplate tmpl;  // the original template, for the executor and rank identity
  // JobSet: pods per child Job (the replicated job's parallelism); pod i of the set is
  // pod i % pods_per_job of child Job i / pods_per_job. 0 for every other kind.
  int32_t pods_per_job = 0;
  // Child Jobs use completionMode Indexed (batch Job, JobSet): pods get JOB_COMPLETION_INDEX.
  bool indexed = false;
  // Volcano task-level lifecycle policies (job-level ones are in LifecycleSpec).
  std::vector<LifecyclePolicy> volcano_policies;
  // A bare Pod run as a workload (Kueue's pod integration, a Volcano standalone
  // PodGroup, a pod handed to muster directly): the name of the existing Pod object
  // this one-pod set is. The executor runs that object and writes its status instead
  // of creating a pod from the template. Empty for every job kind.
  std::string existing_pod;
  // Its pods start only once these pod sets are Ready / Complete (JobSet).
  std::vector<PodSetDependency> start_after;
};

// Per-kind facts that rank identity (env, hostfile) needs, copied from the job so a
// pod's identity is a pure function of the Workload.
struct RankSpec {
  std::optional<std::string> nproc_per_node;    // PyTorchJob spec.nprocPerNode
  std::optional<ElasticPolicy> elastic_policy;  // PyTorchJob
  int32_t slots_per_worker = 1;                 // MPIJob
  std::string mpi_implementation;               // MPIJob: OpenMPI (default) | Intel | MPICH
  std::map<std::string, std::vector<std::string>> volcano_plugins;  // Volcano Job: env, svc...
  // TrainJob on a torch runtime: the trainer step's pod set, which gets torchrun's PET_*
  // env; empty otherwise.
  std::string torch_trainer_pod_set;
};

// How the job reacts to pod failure or eviction (simulation and the executor).
struct LifecycleSpec {
  int32_t max_restarts = 0;         // backoffLimit, maxRetry, failurePolicy.maxRestarts
  bool restart_on_failure = false;  // restartPolicy OnFailure / policies RestartJob
  std::vector<LifecyclePolicy> volcano_policies;
  // batch/v1 Job spec.podFailurePolicy (serve's executor matches failed pods).
  std::vector<PodFailurePolicyRule> pod_failure_policy;
};

// Simulation annotations (CONTRACT section 1), seconds from 0.
struct WorkloadSimSpec {
  double submit_at = 0;
  std::optional<double> duration;  // nullopt: runs until the simulation ends
  std::optional<double> checkpoint_interval;
  // Seconds from each start until every pod is ready (infinity: never); nullopt:
  // ready as soon as the gang is bound.
  std::optional<double> pods_ready_after;
};

// Volcano's task-topology annotations (volcano.sh/task-topology-affinity,
// -anti-affinity, -task-order) on the job or its PodGroup, by task (pod set) name:
// soft preferences the placement packs and spreads a gang's pods by.
struct TaskTopology {
  std::vector<std::vector<std::string>> affinity;       // groups packed together
  std::vector<std::vector<std::string>> anti_affinity;  // groups kept apart
  std::vector<std::string> task_order;                  // placed first to last
};

// Where a workload's elasticity comes from (workloads/elastic.h): it may run with
// fewer pods than its counts, down to its pod sets' min_count, grow towards the
// counts when capacity frees, and shrink towards the minimum instead of being
// evicted when a preemptor needs part of it.
enum class ElasticSource {
  kNone,
  kPyTorchElasticPolicy,  // PyTorchJob elasticPolicy.minReplicas below the workers
  kVolcanoMinAvailable,   // Volcano Job (task) minAvailable below the replicas
  kPodGroupMinMember,     // PodGroup minMember / Kubeflow schedulingPolicy.minAvailable
  kKueueElasticJob,       // kueue.x-k8s.io/elastic-job: "true": resized by its owner
};

struct Workload {
  std::string key;            // "namespace/name" of the job
  ObjectMeta meta;            // the job's metadata (kind in meta.kind)
  std::string local_queue;    // kueue.x-k8s.io/queue-name label; "" = none
  std::string volcano_queue;  // spec.queue / scheduling.volcano.sh/queue-name; "" = none
  int32_t priority = 0;
  std::string priority_class;     // the class the priority came from ("" = default/none)
  bool preemption_never = false;  // PriorityClass preemptionPolicy: Never
  std::vector<PodSet> pod_sets;
  // Total pods that must run at once: the gang size (minAvailable, minMember,
  // elasticPolicy.minReplicas, job-min-parallelism; else the sum of counts).
  int32_t min_available = 0;
  std::optional<NetworkTopologySpec> network_topology;  // Volcano job-level request
  LifecycleSpec lifecycle;
  WorkloadSimSpec sim;
  std::string scheduler_name;
  RankSpec rank;
  ElasticSource elastic = ElasticSource::kNone;
  std::optional<TaskTopology> task_topology;  // Volcano task-topology plugin
  // Volcano sla plugin: the job's sla-waiting-time annotation, in seconds.
  std::optional<double> sla_waiting_seconds;
  GangPolicy gang_policy;
  // Why it cannot be admitted as it is (a namespace LimitRange its pods break,
  // workloads/limit_ranges.h): admission holds it pending with this message, as
  // Kueue's scheduler does. Empty for nearly every workload.
  std::string inadmissible;

  int32_t TotalCount() const {
    int32_t n = 0;
    for (const auto& ps : pod_sets) n += ps.count;
    return n;
  }
};

// Everything the workload asks for: each pod set's requests times its count.
inline ResourceList TotalRequest(const Workload& w) {
  ResourceList total;
  for (const auto& ps : w.pod_sets) total += ps.requests.Scaled(ps.count);
  return total;
}

}  // namespace muster::model
