// GangPlannerImpl: plans every pod of every pod set of a workload at once against
// an overlay of the cluster (all or nothing), honouring Kueue TAS levels, Volcano
// HyperNode tiers, NUMA alignment and the configured scorer.
#pragma once

#include <memory>
#include <optional>
#include <variant>

#include "model/config.h"
#include "placement/node_search.h"
#include "placement/overlay.h"
#include "placement/placement.h"
#include "placement/scorers/scorer.h"

namespace muster::placement {

class GangPlannerImpl final : public GangPlanner {
 public:
  explicit GangPlannerImpl(const model::SchedulerConfiguration& config,
                           const PlannerOptions& options = {});
  // For tests and benchmarks that pick a scorer directly.
  explicit GangPlannerImpl(std::unique_ptr<Scorer> scorer, const PlannerOptions& options = {})
      : scorer_(std::move(scorer)),
        max_scored_nodes_(options.max_scored_nodes),
        random_tie_break_(options.random_tie_break),
        tie_break_seed_(options.tie_break_seed) {}

  std::variant<GangPlan, PlacementFailure> Plan(const ClusterState& state,
                                                const PlacementRequest& request) const override;
  std::optional<std::vector<std::string>> FindVictims(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& candidate_keys) const override;
  std::variant<GangPlan, PlacementFailure> PlanAssumingEvicted(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& assume_evicted) const override;
  std::variant<GangPlan, PlacementFailure> PlanAssumingShrunk(
      const ClusterState& state, const PlacementRequest& request,
      const std::vector<std::string>& assume_evicted,
      const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrunk) const override;

  // Plans on `overlay`, charging the planned pods there (callers copy it first when
  // they need the original back).
  std::variant<GangPlan, PlacementFailure> PlanOn(Overlay& overlay,
                                                  const PlacementRequest& request) const;

 private:
  std::variant<GangPlan, PlacementFailure> PlanPodSets(Overlay& overlay,
                                                       const PlacementRequest& request,
                                                       const std::vector<int32_t>* scope) const;
  std::variant<GangPlan, PlacementFailure> PlanHyperNodes(Overlay& overlay,
                                                          const PlacementRequest& request) const;
  // Volcano's task-topology plugin: pods in its order across pod sets, nodes scored
  // by the policy plus the plugin (task_topology.h). nullopt: not for this request.
  std::optional<std::variant<GangPlan, PlacementFailure>> PlanTaskTopology(
      Overlay& overlay, const PlacementRequest& request, const std::vector<int32_t>* scope) const;

  std::unique_ptr<Scorer> scorer_;
  int32_t task_topology_weight_ = 1;  // 0: the task-topology plugin is off
  int32_t max_scored_nodes_ = kMaxFeasibleNodes;
  bool random_tie_break_ = false;
  uint64_t tie_break_seed_ = 0;
};

}  // namespace muster::placement
