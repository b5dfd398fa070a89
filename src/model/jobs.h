// Training job kinds: batch/v1 Job, Kubeflow PyTorchJob/TFJob (v1) and MPIJob
// (v2beta1), JobSet (v1alpha2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/meta.h"
#include "model/pod.h"
#include "model/pod_failure_policy.h"

namespace muster::model {

enum class CompletionMode { kNonIndexed, kIndexed };

// The spec of a batch/v1 Job (also a JobSet replicated job's template).
struct BatchJobSpec {
  int32_t parallelism = 1;
  std::optional<int32_t> completions;  // nullopt = work-queue style job
  CompletionMode completion_mode = CompletionMode::kNonIndexed;
  bool suspend = false;
  int32_t backoff_limit = 6;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::optional<int32_t> backoff_limit_per_index;
  std::optional<int32_t> max_failed_indexes;
  std::vector<PodFailurePolicyRule> pod_failure_policy;
  PodTemplate tmpl;
};

struct BatchJob {
  ObjectMeta meta;
  BatchJobSpec spec;
};

// One replica type of a Kubeflow job ("Master", "Worker", "PS", "Chief",
// "Evaluator", "Launcher").
struct ReplicaSpec {
  std::string type;
  int32_t replicas = 1;
  std::string restart_policy;  // Always | OnFailure | Never | ExitCode
  PodTemplate tmpl;
};

struct SchedulingPolicy {
  std::optional<int32_t> min_available;
  std::string queue;
  std::string priority_class;
};

struct RunPolicy {
  std::string clean_pod_policy;
  std::optional<int32_t> backoff_limit;
  std::optional<int64_t> active_deadline_seconds;
  bool suspend = false;
  std::optional<SchedulingPolicy> scheduling_policy;
};

struct ElasticPolicy {
  std::optional<int32_t> min_replicas;
  std::optional<int32_t> max_replicas;
  std::optional<int32_t> max_restarts;
  std::string rdzv_backend;
  std::optional<int32_t> nproc_per_node;
};

// PyTorchJob, TFJob or MPIJob; meta.kind says which.
struct KubeflowJob {
  ObjectMeta meta;
  std::vector<ReplicaSpec> replica_specs;  // in the manifest's order
  RunPolicy run_policy;
  std::optional<ElasticPolicy> elastic_policy;  // PyTorchJob
  int32_t slots_per_worker = 1;                 // MPIJob
  std::string mpi_implementation;               // MPIJob: OpenMPI | Intel | MPICH
  // MPIJob launcherCreationPolicy WaitForWorkersReady (default AtStartup): the
  // launcher starts once every worker runs.
  bool launcher_waits_for_workers = false;
  std::optional<std::string> nproc_per_node;  // PyTorchJob spec.nprocPerNode
};

// spec.replicatedJobs[].dependsOn: start only once `name` is Ready or Complete.
struct JobSetDependsOn {
  std::string name;
  std::string status = "Ready";  // Ready | Complete
};

struct ReplicatedJob {
  std::string name;
  std::vector<JobSetDependsOn> depends_on;
  int32_t replicas = 1;
  BatchJobSpec tmpl;  // spec.replicatedJobs[].template.spec
  StringMap template_labels;
  StringMap template_annotations;
};

struct JobSetSuccessPolicy {
  std::string op = "All";  // All | Any
  std::vector<std::string> target_replicated_jobs;
};

// spec.failurePolicy.rules[]: what a child Job's failure does.
struct JobSetFailureRule {
  std::string name;
  std::string action;  // FailJobSet | RestartJobSet | RestartJobSetAndIgnoreMaxRestarts
  std::vector<std::string> on_job_failure_reasons;
  std::vector<std::string> on_job_failure_message_patterns;
  std::vector<std::string> target_replicated_jobs;
};

struct JobSetFailurePolicy {
  int32_t max_restarts = 0;
  std::vector<JobSetFailureRule> rules;
};

struct JobSet {
  ObjectMeta meta;
  std::vector<ReplicatedJob> replicated_jobs;
  JobSetSuccessPolicy success_policy;
  JobSetFailurePolicy failure_policy;
  std::string startup_policy_order = "AnyOrder";  // AnyOrder | InOrder
  bool suspend = false;
};

}  // namespace muster::model
