// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): ClusterTrainingRuntime and
// TrainingRuntime (a JobSet template plus an ML policy), and TrainJob, which names a
// runtime and overrides its trainer step. A TrainJob runs as the JobSet its runtime
// describes (workloads/build_trainjob.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/jobs.h"
#include "model/meta.h"
#include "model/pod.h"

namespace muster::model {

// Label on a runtime's replicated job naming its role ("trainer", "dataset-initializer",
// "model-initializer").
inline constexpr const char* kTrainJobAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr const char* kTrainerAncestor = "trainer";
// The trainer step's container the TrainJob's trainer fields apply to.
inline constexpr const char* kTrainerContainer = "node";
// torchrun's rendezvous port on node 0 (upstream constants.ContainerTrainerPort).
inline constexpr int32_t kTrainerMasterPort = 29400;

struct TorchPolicy {
  std::optional<std::string> num_proc_per_node;  // "auto" | "cpu" | "gpu" | an integer
  std::optional<ElasticPolicy> elastic_policy;   // warned: JobSet has no elastic resize
};

struct TrainingRuntime {
  ObjectMeta meta;  // kind ClusterTrainingRuntime (cluster-scoped) or TrainingRuntime
  std::optional<int32_t> num_nodes;  // spec.mlPolicy.numNodes
  std::optional<TorchPolicy> torch;  // spec.mlPolicy.torch
  bool mpi = false;                  // spec.mlPolicy.mpi (warned: not acted on)
  // spec.podGroupPolicy: coscheduling's scheduleTimeoutSeconds, or Volcano.
  std::optional<int32_t> schedule_timeout_seconds;
  bool volcano_pod_group = false;
  JobSet tmpl;  // spec.template (metadata and spec of the JobSet)
};

struct RuntimeRef {
  std::string name;
  std::string kind = "ClusterTrainingRuntime";  // or TrainingRuntime
  std::string api_group = "trainer.kubeflow.org";
};

// spec.trainer: what the TrainJob sets on the runtime's trainer step.
struct TrainerOverrides {
  std::optional<std::string> image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::optional<int32_t> num_nodes;
  std::optional<QuantityMap> requests;  // resourcesPerNode
  std::optional<QuantityMap> limits;
  std::optional<std::string> num_proc_per_node;
};

struct TrainJob {
  ObjectMeta meta;
  RuntimeRef runtime_ref;
  TrainerOverrides trainer;
  StringMap labels;       // spec.labels: onto the JobSet and its pods
  StringMap annotations;  // spec.annotations
  bool suspend = false;
  std::string managed_by;
};

}  // namespace muster::model
