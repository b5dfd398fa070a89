// Synthetic clusters and workloads for `muster gen` and `muster bench`: the same
// deterministic description becomes model objects (for in-process benchmarks,
// where decoding 40,000 YAML documents would dominate setup) and YAML text (for
// `muster validate`/`simulate` and for other schedulers' harnesses). Every choice
// comes from the spec and a splitmix64 stream seeded with `seed`, never from
// <random> distributions, whose output differs between standard libraries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::sim {

// Memory amounts in the generated clusters and the bench scenarios.
inline constexpr int64_t kGi = int64_t{1} << 30;

// Node label keys the generator writes (the Kueue Topology levels, widest first).
inline constexpr const char* kGenBlockLabel = "topology.muster.dev/block";
inline constexpr const char* kGenRackLabel = "topology.muster.dev/rack";
inline constexpr const char* kGenHostLabel = "kubernetes.io/hostname";
inline constexpr const char* kGenGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGenTopologyName = "datacenter";
inline constexpr const char* kGenFlavorName = "gpu";

struct ClusterSpec {
  int32_t nodes = 16;
  int32_t gpus_per_node = 8;
  int32_t numa = 2;            // NUMA zones per node; GPUs, cpu and memory split evenly
  int32_t racks = 0;           // 0 = one rack per 32 nodes (rounded up)
  int32_t blocks = 1;          // racks are split evenly over blocks
  int64_t cpu_per_node = 128;  // cores
  int64_t memory_gi_per_node = 1024;
  std::string gpu_product = "NVIDIA-H100-80GB-HBM3";
  // Queues: 0 = none. ClusterQueues "cq-NNNN" spread round-robin over `cohorts`
  // cohorts, nominal quota an even split of the cluster, unlimited borrowing in
  // the cohort, preemption LowerPriority within and Any to reclaim; one LocalQueue
  // "lq" per ClusterQueue in namespace "team-NNNN".
  int32_t cluster_queues = 0;
  int32_t cohorts = 1;
  uint64_t seed = 0;  // the cluster's layout is fixed by the shape; kept for the header
};

// Racks after defaulting (>= 1, <= nodes).
int32_t EffectiveRacks(const ClusterSpec& spec);
// Rack and block of node i: contiguous runs of nodes, so racks differ by at most one node.
int32_t RackOfNode(const ClusterSpec& spec, int32_t node);
int32_t BlockOfRack(const ClusterSpec& spec, int32_t rack);

// Nodes, NodeResourceTopology, Topology, ResourceFlavor and (optionally) queues.
model::ManifestSet GenerateCluster(const ClusterSpec& spec);
// The same objects as a YAML stream that `muster validate` accepts; byte-identical
// for the same spec.
std::string ClusterYaml(const ClusterSpec& spec);

// Fractions of small/medium/large jobs (normalised; need not sum to 1).
struct JobMix {
  double small = 0.6;
  double medium = 0.3;
  double large = 0.1;
};
// "small:0.6,medium:0.3,large:0.1" (any subset, any order).
Result<JobMix> ParseJobMix(std::string_view text);

struct WorkloadSpec {
  int32_t jobs = 100;
  JobMix mix;
  uint64_t seed = 0;
  // 0 = jobs name no queue; else job i goes to LocalQueue "lq" in namespace
  // "team-NNNN" (the queues of GenerateCluster with the same count).
  int32_t queues = 0;
  int32_t gpus_per_node = 8;
  // GPUs in one rack of the target cluster: a large gang that fits in half of it
  // asks for a rack, a bigger one for a block.
  int32_t rack_gpus = 256;
  double mean_interarrival_seconds = 2;  // exponential arrivals
};

enum class JobClass { kSmall, kMedium, kLarge };

// One generated job, before it becomes a manifest or a Workload.
struct JobPlan {
  std::string name;         // "job-NNNNNN"
  std::string namespace_;   // "team-NNNN" or "default"
  std::string local_queue;  // "" = none
  JobClass job_class = JobClass::kSmall;
  bool pytorch = false;  // PyTorchJob (1 master + workers) instead of an Indexed Job
  int32_t pods = 1;      // gang size
  int32_t gpus_per_pod = 1;
  int64_t cpu_milli_per_pod = 4000;
  int64_t memory_gi_per_pod = 32;
  std::string priority_class;  // one of GeneratedPriorityClasses()
  int32_t priority = 0;
  std::string topology_level;  // required topology level label; "" = none
  double submit_at = 0;        // seconds
  double duration = 0;         // seconds
};

// The PriorityClasses generated jobs name (emitted by WorkloadYaml).
std::vector<model::PriorityClass> GeneratedPriorityClasses();

// Jobs in submission order; job i depends only on (seed, i), its class and the
// arrival stream.
std::vector<JobPlan> PlanJobs(const WorkloadSpec& spec);
// The Workload the engine would build from the job's manifest (one pod set
// "main" for an Indexed Job; "master" + "worker" for a PyTorchJob).
model::Workload PlanToWorkload(const JobPlan& plan, int64_t order);
// PriorityClasses and jobs as YAML; byte-identical for the same spec.
std::string WorkloadYaml(const WorkloadSpec& spec);

}  // namespace muster::sim
