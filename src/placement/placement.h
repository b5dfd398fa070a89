// Public contract of the placement layer (the engine depends only on this file).
// Placement decides where a gang's pods go: nodes, GPU devices, NUMA zones, and
// topology domains, all at once or not at all. No I/O; deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"
#include "model/config.h"
#include "model/kueue.h"
#include "model/node.h"
#include "model/volcano.h"
#include "model/workload.h"

namespace muster::placement {

using NodeIndex = int32_t;

// Where one pod goes.
class NodeFitCache;  // node_fit_cache.h

struct PodPlacement {
  int32_t pod_set = 0;  // index into Workload::pod_sets
  int32_t index = 0;    // pod index within the pod set (rank order follows topology)
  NodeIndex node = -1;
  std::vector<int32_t> gpus;  // device indices on the node
  int32_t numa_zone = -1;     // chosen zone when NUMA-aligned, else -1
  // Container-scope alignment across zones: each container's zone (-1 = not
  // aligned), in template order; empty when the pod has one zone or none.
  std::vector<int32_t> container_zones;
};

// A whole gang's placement, sorted by (pod_set, index).
struct GangPlan {
  std::string workload_key;
  std::vector<PodPlacement> pods;
};

// Why a gang cannot be placed: machine-readable reason plus a one-line message
// naming what is missing and where ("6 nvidia.com/gpu in one NUMA zone: largest
// zone free on dgx-1 has 4 (single-numa-node)").
struct PlacementFailure {
  std::string reason;  // Unschedulable | InsufficientResources | NumaUnaligned |
                       // TopologyUnsatisfiable | NoMatchingNodes
  std::string message;
};

// Node constraints admission adds to a pod set: the assigned flavors' node labels,
// taints and tolerations (Kueue injects them into the pod template).
struct PodSetConstraints {
  model::StringMap flavor_node_labels;
  std::vector<model::Toleration> flavor_tolerations;
  std::string topology_name;  // the assigned flavor's Kueue Topology ("" = none)
};

struct PlacementRequest {
  const model::Workload* workload = nullptr;
  std::vector<PodSetConstraints> constraints;  // one per pod set (may be empty = none)
  // Pods to place per pod set; empty = every pod (count). Partial admission may ask
  // for fewer, never below min_count.
  std::vector<int32_t> counts;
  // Nodes this gang must not use, in any order: another gang holds a reservation
  // on them (engine/reservations.h). The planner skips them like filtered nodes,
  // so scoring and buckets stay as they are; failure messages count them under
  // `excluded_why` ("reserved for ml/big"; "" = "excluded").
  std::vector<NodeIndex> excluded_nodes;
  std::string excluded_why;
  // False: a failed plan skips the diagnosis (why no node takes the pod: a walk over
  // the candidate nodes) and says only that it does not fit. For a caller that reads
  // nothing of the failure, such as a victim search that follows it.
  bool explain = true;
  // Where the plan's node searches keep what they found per node, for the next plans
  // of the caller (node_fit_cache.h); null = none. The caller keeps it for one
  // planner and clears it when the planner changes.
  NodeFitCache* fit_cache = nullptr;
};

// The physical cluster: nodes, devices, NUMA zones, topology domains, and what is
// bound where. Indexed for fast gang search (free-capacity buckets, per-domain
// aggregates).
class ClusterState {
 public:
  virtual ~ClusterState() = default;

  virtual int32_t NodeCount() const = 0;
  virtual const model::Node& GetNode(NodeIndex i) const = 0;
  virtual std::optional<NodeIndex> FindNode(const std::string& name) const = 0;
  // Free resources on a node (allocatable minus bound pods).
  virtual ResourceList Free(NodeIndex i) const = 0;

  // Binds every pod of the plan. Fails (changing nothing) if it no longer fits.
  virtual Status Commit(const GangPlan& plan, const model::Workload& workload) = 0;
  // Unbinds every pod of the workload (finished, evicted, failed).
  virtual void Release(const std::string& workload_key) = 0;
  // Added (elastic workloads): unbinds the workload's pods whose index in pod set p
  // is keep[p] or more (pod sets beyond keep's end keep every pod); the rest stay.
  virtual Status ReleaseAbove(const std::string& workload_key,
                              const std::vector<int32_t>& /*keep*/) {
    return FailedPrecondition("this cluster state cannot release part of " + workload_key);
  }
  // Node lost / back. A lost node takes no pods; its bound pods are the caller's to release.
  virtual void SetNodeReady(NodeIndex i, bool ready) = 0;
  virtual bool NodeReady(NodeIndex i) const = 0;
  // The node object or its NodeTopology (`numa`, null for none) changed in place (a
  // long-running server: cordoned, labelled, tainted, resized, a device plugin
  // registering GPUs). Its bound pods stay. FailedPrecondition, changing nothing,
  // where the cluster must be rebuilt: a bound pod no longer fits, or labels changed
  // while HyperNodes (which select members by label) exist.
  virtual Status UpdateNode(NodeIndex i, const model::Node& /*node*/,
                            const model::NodeTopology* /*numa*/) {
    return FailedPrecondition("this cluster state cannot update node " + std::to_string(i) +
                              " in place");
  }
  // A node joined (a long-running server): it gets the next index, so the indexes
  // of bound pods and plans stay valid; `numa` is its NodeTopology, if any.
  // FailedPrecondition, changing nothing, where the cluster must be rebuilt.
  virtual Result<NodeIndex> AddNode(const model::Node& node, const model::NodeTopology* /*numa*/) {
    return FailedPrecondition("this cluster state cannot add node " + node.meta.name + " in place");
  }
  // A node left (a long-running server: its Node object was deleted). Its index
  // stays taken, never reused, so bound pods, plans and nominations keep naming the
  // same nodes; it is no longer found by name, takes no pods and is in no index,
  // domain or count. FailedPrecondition, changing nothing, while pods are bound on
  // it (the caller evicts them first) or where the cluster must be rebuilt; NotFound
  // when it was removed already.
  virtual Status RemoveNode(NodeIndex i) {
    return FailedPrecondition("this cluster state cannot remove node " + std::to_string(i) +
                              " in place");
  }
  // The Volcano HyperNodes were created, edited or deleted: membership is resolved
  // again and the domains rebuilt; bound pods stay where they are.
  // FailedPrecondition, changing nothing, where the cluster must be rebuilt.
  virtual Status SetHyperNodes(const std::vector<model::HyperNode>& /*hyper_nodes*/) {
    return FailedPrecondition("this cluster state cannot change HyperNodes in place");
  }
  // Whether node i was removed (RemoveNode): callers walking every index skip it.
  virtual bool NodeRemoved(NodeIndex /*i*/) const { return false; }
  // Removed nodes still holding an index (NodeCount() counts them).
  virtual int32_t RemovedNodeCount() const { return 0; }
  // Workloads with pods bound on a node, sorted by key.
  virtual std::vector<std::string> WorkloadsOnNode(NodeIndex i) const = 0;

  // Checks internal accounting (no node or device over-committed); empty when fine.
  virtual std::vector<std::string> CheckInvariants() const = 0;
};

// Builds the cluster from decoded manifests.
Result<std::unique_ptr<ClusterState>> BuildClusterState(
    const std::vector<model::Node>& nodes, const std::vector<model::NodeTopology>& numa,
    const std::vector<model::Topology>& topologies,
    const std::vector<model::HyperNode>& hyper_nodes);

class GangPlanner {
 public:
  virtual ~GangPlanner() = default;

  // Plans the whole gang against `state` without changing it.
  virtual std::variant<GangPlan, PlacementFailure> Plan(const ClusterState& state,
                                                        const PlacementRequest& request) const = 0;

  // Physical victim search: given candidate workloads (in the order admission
  // prefers to evict them), returns the smallest set, found by removing candidates
  // in order until the gang fits and then adding back those not needed, whose
  // eviction lets the gang fit on real nodes. nullopt when even all of them do not.
  virtual std::optional<std::vector<std::string>> FindVictims(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& candidate_keys) const = 0;

  // Plans the gang as if the bound workloads `assume_evicted` were gone, without
  // changing `state`: where would it go once they finish (reservations for
  // starving gangs). This default handles only an empty list.
  virtual std::variant<GangPlan, PlacementFailure> PlanAssumingEvicted(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& assume_evicted) const {
    if (assume_evicted.empty()) return Plan(state, request);
    return PlacementFailure{"Unschedulable",
                            "this planner cannot plan with workloads assumed gone"};
  }

  // Added (elastic victims): as PlanAssumingEvicted, with each workload of `shrunk`
  // also keeping only its pods below the given count per pod set (as ReleaseAbove).
  virtual std::variant<GangPlan, PlacementFailure> PlanAssumingShrunk(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& assume_evicted,
      const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrunk) const {
    if (shrunk.empty()) return PlanAssumingEvicted(state, request, assume_evicted);
    return PlacementFailure{"Unschedulable", "this planner cannot plan with workloads shrunk"};
  }
};

std::unique_ptr<GangPlanner> MakeGangPlanner(const model::SchedulerConfiguration& config);

// ---- Planner options (additive; the one-argument MakeGangPlanner uses defaults) ----

// One "typical pod" of the FGD scorer's target workload: a request shape and how
// often it occurs (Weng et al., ATC'23; the simulator's TargetPod).
struct FgdTaskType {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  // per GPU: 1..999 = a share of one device, 1000 = whole devices, 0 = none
  int32_t num_gpus = 0;   // devices (1 for a shared pod, 0 for a cpu-only pod)
  std::vector<std::string> gpu_models;  // models it accepts (sorted); empty = any
  double weight = 1;                    // popularity; normalized over the distribution
};

struct FgdTaskDistribution {
  std::vector<FgdTaskType> tasks;  // empty = the scorer's built-in default mix
  // Node label naming a node's GPU model; tasks with gpu_models only fit nodes whose
  // label value is one of them. Empty = models are ignored.
  std::string gpu_model_label;
};

// The typical-pod distribution of a workload, as the FGD simulator derives it:
// pods counted per (cpu, gpu milli, GPU count, accepted models) shape, cpu-only
// pods included, shapes taken most popular first (ties by shape) until they cover
// `popularity_percent` of all pods, weights renormalized over those taken.
// Accepted models come from a pod set's required node affinity on
// `gpu_model_label` (operator In).
FgdTaskDistribution TaskDistributionFromWorkloads(const std::vector<model::Workload>& workloads,
                                                  const std::string& gpu_model_label,
                                                  int32_t popularity_percent = 95);

struct PlannerOptions {
  // Feasible nodes scored per pod when the whole cluster is searched (nodes the
  // plan already touched come on top). 0 = every feasible node, as kube-scheduler
  // with percentageOfNodesToScore=100 and the FGD simulator do.
  int32_t max_scored_nodes = 32;
  // Target workload of the fgd scoring policy (ignored by the other policies).
  FgdTaskDistribution fgd;
  // Equal-score nodes: false = the first by name (what tests and the engine
  // expect); true = uniformly at random among them, as kube-scheduler's
  // selectHost does (the FGD simulator's protocol). The draw comes from an Rng
  // seeded with tie_break_seed and the workload key, so a plan stays a pure
  // function of the state, the request and the options.
  bool random_tie_break = false;
  uint64_t tie_break_seed = 0;
};

std::unique_ptr<GangPlanner> MakeGangPlanner(const model::SchedulerConfiguration& config,
                                             const PlannerOptions& options);

}  // namespace muster::placement
