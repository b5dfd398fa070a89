// Everything decoded from a set of manifests, in input order per kind.
#pragma once

#include <optional>
#include <variant>
#include <vector>

#include "model/config.h"
#include "model/jobs.h"
#include "model/kueue.h"
#include "model/limit_range.h"
#include "model/node.h"
#include "model/trainer.h"
#include "model/volcano.h"

namespace muster::model {

// A job object of any supported kind, kept in one list so input order is preserved.
using JobObject = std::variant<BatchJob, KubeflowJob, JobSet, VolcanoJob, TrainJob>;

const ObjectMeta& MetaOf(const JobObject& job);

struct ManifestSet {
  std::vector<Node> nodes;
  std::vector<Namespace> namespaces;
  std::vector<LimitRange> limit_ranges;
  std::vector<NodeTopology> node_topologies;
  std::vector<PriorityClass> priority_classes;
  std::vector<ResourceFlavor> resource_flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<Cohort> cohorts;
  std::vector<WorkloadPriorityClass> workload_priority_classes;
  std::vector<Topology> topologies;
  std::vector<VolcanoQueue> volcano_queues;
  std::vector<PodGroup> pod_groups;
  std::vector<HyperNode> hyper_nodes;
  std::vector<TrainingRuntime> training_runtimes;  // both kinds, by meta.kind
  std::vector<JobObject> jobs;
  std::optional<KueueConfiguration> kueue_config;
  std::optional<SchedulerConfiguration> scheduler_config;
};

}  // namespace muster::model
