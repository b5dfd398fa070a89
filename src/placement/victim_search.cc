// Physical victim search (GangPlanner::FindVictims): evict candidates in admission's
// order until the gang plans on real nodes, then add back, newest first, every one
// the gang does not need (Kueue's minimal preemption, done on the node level).
// PlanAssumingEvicted is the same what-if for a given set.
#include <set>

#include "placement/gang_planner.h"

namespace muster::placement {
namespace {

bool Fits(const GangPlannerImpl& planner, const IndexedClusterState& state,
          const PlacementRequest& request, const std::vector<std::string>& evicted) {
  Overlay ov(state);
  for (const auto& key : evicted) ov.Evict(key);
  return std::holds_alternative<GangPlan>(planner.PlanOn(ov, request));
}

}  // namespace

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::PlanAssumingEvicted(
    const ClusterState& state, const PlacementRequest& request,
    const std::vector<std::string>& assume_evicted) const {
  const auto* indexed = dynamic_cast<const IndexedClusterState*>(&state);
  if (indexed == nullptr) {
    return PlacementFailure{"Unschedulable", "cluster state was not built by BuildClusterState"};
  }
  Overlay ov(*indexed);
  for (const auto& key : assume_evicted) ov.Evict(key);
  return PlanOn(ov, request);
}

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::PlanAssumingShrunk(
    const ClusterState& state, const PlacementRequest& request,
    const std::vector<std::string>& assume_evicted,
    const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrunk) const {
  const auto* indexed = dynamic_cast<const IndexedClusterState*>(&state);
  if (indexed == nullptr) {
    return PlacementFailure{"Unschedulable", "cluster state was not built by BuildClusterState"};
  }
  Overlay ov(*indexed);
  for (const auto& key : assume_evicted) ov.Evict(key);
  for (const auto& [key, keep] : shrunk) ov.EvictAbove(key, keep);
  return PlanOn(ov, request);
}

std::optional<std::vector<std::string>> GangPlannerImpl::FindVictims(
    const ClusterState& state, const PlacementRequest& request,
    const std::vector<std::string>& candidate_keys) const {
  const auto* indexed = dynamic_cast<const IndexedClusterState*>(&state);
  if (indexed == nullptr || request.workload == nullptr) return std::nullopt;
  std::vector<std::string> removed;
  if (Fits(*this, *indexed, request, removed)) return removed;
  std::set<std::string> seen;
  Overlay ov(*indexed);
  bool fits = false;
  for (const auto& key : candidate_keys) {
    if (!seen.insert(key).second) continue;
    ov.Evict(key);
    removed.push_back(key);
    Overlay trial = ov;
    if (std::holds_alternative<GangPlan>(PlanOn(trial, request))) {
      fits = true;
      break;
    }
  }
  if (!fits) return std::nullopt;
  // The last one removed is needed: without it the gang did not fit.
  std::vector<bool> needed(removed.size(), true);
  for (int i = static_cast<int>(removed.size()) - 2; i >= 0; --i) {
    needed[i] = false;
    std::vector<std::string> evicted;
    for (size_t j = 0; j < removed.size(); ++j) {
      if (needed[j]) evicted.push_back(removed[j]);
    }
    if (!Fits(*this, *indexed, request, evicted)) needed[i] = true;
  }
  std::vector<std::string> out;
  for (size_t j = 0; j < removed.size(); ++j) {
    if (needed[j]) out.push_back(removed[j]);
  }
  return out;
}

}  // namespace muster::placement
