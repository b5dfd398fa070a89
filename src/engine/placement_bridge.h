// PlacementBridge: the engine's admission::PlacementOracle. Admission asks it
// whether a gang with a given flavor assignment fits on real nodes; it turns the
// assignment into a placement::PlacementRequest (the assigned flavors' node labels,
// tolerations and Kueue Topology, as Kueue injects them into pod templates), plans
// with the GangPlanner, caches the plan, and binds it when admission commits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "admission/admission.h"
#include "model/kueue.h"
#include "placement/placement.h"

namespace muster::engine {

class PlacementBridge : public admission::PlacementOracle {
 public:
  PlacementBridge(const std::vector<model::ResourceFlavor>& flavors,
                  placement::ClusterState& state);

  void SetPlanner(const placement::GangPlanner* planner) { planner_ = planner; }

  Check CanPlace(const model::Workload& workload, const admission::Assignment& assignment,
                 const std::vector<std::string>& assume_evicted) override;
  std::optional<std::vector<std::string>> PhysicalVictims(
      const model::Workload& workload, const admission::Assignment& assignment,
      const std::vector<std::string>& candidates) override;
  void Commit(const model::Workload& workload, const admission::Assignment& assignment) override;

  // The placement request an assignment stands for. `counts` follow the
  // assignment's per-pod-set counts (partial admission) when it has them.
  placement::PlacementRequest BuildRequest(const model::Workload& workload,
                                           const admission::Assignment& assignment) const;

  // Plans and binds now (used when admission admitted without asking, e.g. in
  // quota-only mode, or when the cached plan went stale). The bound plan, or why not.
  std::variant<placement::GangPlan, placement::PlacementFailure> PlaceNow(
      const model::Workload& workload, const admission::Assignment& assignment);

  // The plan Commit bound for `key` during this cycle, handed over once.
  std::optional<placement::GangPlan> TakeCommitted(const std::string& key);
  // Keys Commit bound that nobody took (admission committed without admitting).
  std::vector<std::string> UntakenKeys() const;
  // Why Commit could not bind `key` ("" when it did or was not asked).
  std::string CommitError(const std::string& key) const;

  // Forgets cached plans: the cluster changed outside a cycle.
  void Reset();

 private:
  std::map<std::string, model::ResourceFlavor> flavors_;
  placement::ClusterState& state_;
  const placement::GangPlanner* planner_ = nullptr;
  std::map<std::string, placement::GangPlan> cached_;     // last fitting CanPlace
  std::map<std::string, placement::GangPlan> committed_;  // bound, not yet taken
  std::map<std::string, std::string> commit_errors_;
};

}  // namespace muster::engine
