// Finding the node for one pod of a gang without scanning the whole cluster: nodes
// are visited from the free-GPU bucket the scorer likes best, at most
// kMaxFeasibleNodes feasible nodes are scored (plus every node the plan already
// touched), and static filter results are cached per pod set for the whole plan.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "placement/node_filter.h"
#include "placement/node_fit_cache.h"
#include "placement/overlay.h"
#include "placement/placement.h"
#include "placement/scorers/scorer.h"
#include "placement/verdict_cache.h"

namespace muster::placement {

inline constexpr int32_t kMaxFeasibleNodes = 32;

// Everything about one pod set that stays fixed during a plan.
struct PodSetContext {
  int32_t pod_set = 0;
  std::string name;
  PodShape shape;
  ResourceList scoring_request;  // ScoringRequest(shape), once per plan
  PodConstraints constraints;
  model::NodeAffinity affinity;
  VerdictCache verdicts;  // per node: -1 unknown, else FilterVerdict
  // The search's candidates come from the label index's lists for the node
  // selector (every path that filters a node of a selecting pod set narrows them
  // so: gang_planner.cc NarrowBySelector), so Filter skips the selector's label
  // lookups.
  bool selector_by_index = false;
  std::string excluded_why;         // how Diagnose names kExcluded nodes ("" = "excluded")
  std::vector<NodeIndex> excluded;  // the nodes ExcludeNodes marked kExcluded
  // Added to the scorer's score of a node for the next pod (Volcano's task-topology
  // plugin, task_topology.h); null = nothing.
  const std::function<int64_t(NodeIndex)>* bonus = nullptr;
  int64_t fit_key = -1;  // NodeFitCache::KeyOf of the shape and constraints, once asked
  // The label index's own list NarrowBySelector searches (null: a narrowed copy or
  // none); a search of it may keep its walk in the NodeFitCache.
  const std::vector<int32_t>* label_list = nullptr;
};

// Marks the request's excluded nodes kExcluded in the pod set's verdict cache, so
// every search path (greedy, TAS, HyperNode scopes, Diagnose) skips them.
void ExcludeNodes(PodSetContext& ctx, const PlacementRequest& request);

PodSetContext MakePodSetContext(const model::PodSet& ps, int32_t index,
                                const PodSetConstraints* constraints, int32_t node_count);

class NodeSearch {
 public:
  // `max_scored` feasible nodes are scored per pod on a whole-cluster search
  // (0 = every feasible node).
  // `ties` non-null: equal-score nodes are chosen uniformly at random from it
  // (reservoir sampling, as kube-scheduler's selectHost); null: first by name.
  // `explain` false: Diagnose says only that nothing fits (PlacementRequest::explain).
  NodeSearch(const Overlay& overlay, const Scorer& scorer, int32_t max_scored = kMaxFeasibleNodes,
             Rng* ties = nullptr, bool explain = true)
      : ov_(overlay), scorer_(scorer), max_scored_(max_scored), ties_(ties), explain_(explain) {}

  FilterVerdict Filter(PodSetContext& ctx, NodeIndex i) const;

  struct Pick {
    NodeIndex node = -1;
    PodAlloc alloc;
  };
  // Best node for one more pod; `allowed` = ascending name ranks, null = every node.
  std::optional<Pick> PickNode(PodSetContext& ctx, const std::vector<int32_t>* allowed) const;

  // Why no node takes one more pod (`placed` of `count` already planned): a walk over
  // the candidate nodes, skipped when the search was built not to explain.
  // Implemented in node_diagnose.cc.
  PlacementFailure Diagnose(PodSetContext& ctx, const std::vector<int32_t>* allowed, int32_t placed,
                            int32_t count) const;

  int64_t Score(const PodSetContext& ctx, NodeIndex i, const PodAlloc& alloc) const;

  // PickNode reads and fills `cache` (null: none) for nodes the overlay has not
  // touched. Ignored for a scorer with state of its own (ScoresFromInputAlone).
  void UseFitCache(NodeFitCache* cache);

 private:
  struct Tally;
  // Classifies node `i` (Filter, then TryAllocate on the overlay) into `t`.
  void Visit(PodSetContext& ctx, NodeIndex i, Tally& t) const;
  // Diagnose over the whole cluster from the free-capacity index; false (nothing
  // tallied) when the pod set's filters depend on labels.
  bool TallyFromIndex(PodSetContext& ctx, Tally& t) const;

  const Overlay& ov_;
  const Scorer& scorer_;
  int32_t max_scored_;
  Rng* ties_;
  bool explain_;
  NodeFitCache* fit_cache_ = nullptr;
  // Score's per-node list of what is used, reused so scoring a node allocates
  // nothing (the allocatable side is NodeInfo::scoring_allocatable).
  mutable ResourceList used_scratch_;
};

}  // namespace muster::placement
