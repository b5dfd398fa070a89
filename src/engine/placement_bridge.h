// PlacementBridge: the engine's admission::PlacementOracle. Admission asks it
// whether a gang with a given flavor assignment fits on real nodes; it turns the
// assignment into a placement::PlacementRequest (the assigned flavors' node labels,
// tolerations and Kueue Topology, as Kueue injects them into pod templates), plans
// with the GangPlanner, caches the plan, and binds it when admission commits.
// It also keeps the reservation of a starving gang (reservations.h): requests of
// other workloads exclude the reserved nodes, and failed CanPlace calls say so.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "admission/admission.h"
#include "engine/decision_log.h"
#include "engine/reservations.h"
#include "model/kueue.h"
#include "placement/node_fit_cache.h"
#include "placement/placement.h"

namespace muster::engine {

class PlacementBridge : public admission::PlacementOracle {
 public:
  PlacementBridge(const std::vector<model::ResourceFlavor>& flavors,
                  placement::ClusterState& state);

  void SetPlanner(const placement::GangPlanner* planner) {
    planner_ = planner;
    fit_cache_ = {};  // what it holds was scored by the previous planner
  }

  Check CanPlace(const model::Workload& workload, const admission::Assignment& assignment,
                 const std::vector<std::string>& assume_evicted) override;
  std::optional<std::vector<std::string>> PhysicalVictims(
      const model::Workload& workload, const admission::Assignment& assignment,
      const std::vector<std::string>& candidates) override;
  void Commit(const model::Workload& workload, const admission::Assignment& assignment) override;
  void Nominate(const model::Workload& workload, const admission::Assignment& assignment,
                const std::vector<admission::Victim>& victims) override;
  void Unnominate(const std::string& workload_key) override { nominated_.erase(workload_key); }
  // Ends the nominations of workloads no longer pending (admitted elsewhere,
  // removed, finished): once per pass, with the engine's records.
  void DropStaleNominations(const RecordLookup& find);
  Check CanPlaceShrinking(
      const model::Workload& workload, const admission::Assignment& assignment,
      const std::vector<std::string>& assume_evicted,
      const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrink_to) override;

  // Elastic growth: where the pods `grown` adds to `now` (per pod set) would go,
  // beside the gang's bound pods, which stay. The plan's indices continue each pod
  // set after `now`'s count. Binds nothing.
  std::variant<placement::GangPlan, placement::PlacementFailure> PlanGrowth(
      const model::Workload& workload, const admission::Assignment& now,
      const admission::Assignment& grown) const;

  // The placement request an assignment stands for. `counts` follow the
  // assignment's per-pod-set counts (partial admission) when it has them;
  // `excluded_nodes` are the reservation's when the workload must avoid them.
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

  // ---- Reservations for starving gangs (reservations.h) ----
  // SchedulerConfiguration reservationAfter; nullopt disables reservations.
  void SetReservationAfter(std::optional<double> seconds) {
    reservations_.SetReservationAfter(seconds);
  }
  // Volcano's sla plugin (SchedulerConfiguration volcano.sla, slaWaitingTime).
  void SetSla(bool enabled, std::optional<double> default_wait) {
    reservations_.SetSla(enabled, default_wait);
  }
  // Once per admission pass, before it: ends, re-plans or makes the reservation.
  // Entries for the decision log; non-empty means the reservation changed (parked
  // workloads should be looked at again).
  std::vector<LogEntry> UpdateReservations(Time now, const RecordLookup& find,
                                           const admission::Admitter& admitter);
  const ReservationBook& reservations() const { return reservations_; }
  const std::map<std::string, model::ResourceFlavor>& flavors() const { return flavors_; }

 private:
  // Nodes nominated for preemptors (Nominate), by key; ordered, so requests list
  // the nodes kept from them in one order.
  struct Nomination {
    int32_t priority = 0;
    std::vector<placement::NodeIndex> nodes;  // of its plan, ascending
  };
  std::map<std::string, Nomination> nominated_;
  // A failed check of a workload kept off reserved nodes says so when that is why;
  // the holder's says it holds them.
  void ExplainReservation(const model::Workload& workload,
                          const placement::PlacementRequest& request, Check& check) const;

  std::map<std::string, model::ResourceFlavor> flavors_;
  placement::ClusterState& state_;
  const placement::GangPlanner* planner_ = nullptr;
  // Keyed lookups once per check and commit of every workload: a hash map.
  std::unordered_map<std::string, placement::GangPlan> cached_;  // last fitting CanPlace
  // CanPlace's node searches, kept from one admission's to the next (a cycle tries
  // thousands of pods of a few shapes on the same nodes).
  placement::NodeFitCache fit_cache_;
  // Bound this pass, in commit order. The engine takes them in the order admission
  // decided (its decisions are applied in order), so the one asked for is almost
  // always the first untaken: no hashing, no node per plan, storage reused.
  struct Committed {
    std::string key;
    placement::GangPlan plan;
    bool taken = false;
  };
  std::vector<Committed> committed_;
  size_t first_untaken_ = 0;
  void Bound(const std::string& key, placement::GangPlan plan);
  std::unordered_map<std::string, std::string> commit_errors_;
  ReservationBook reservations_;
  Time now_ = 0;  // of the latest UpdateReservations (backfill compares against it)
};

}  // namespace muster::engine
