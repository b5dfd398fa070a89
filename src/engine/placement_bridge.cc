#include "engine/placement_bridge.h"

#include <algorithm>

namespace muster::engine {
namespace {

// The distinct nodes of a plan, ascending.
std::vector<placement::NodeIndex> NodesOf(const placement::GangPlan& plan) {
  std::vector<placement::NodeIndex> nodes;
  for (const auto& pod : plan.pods) nodes.push_back(pod.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

admission::PlacementOracle::Check NoPlanner() {
  return {false, "Internal", "no gang planner configured"};
}

}  // namespace

PlacementBridge::PlacementBridge(const std::vector<model::ResourceFlavor>& flavors,
                                 placement::ClusterState& state)
    : state_(state) {
  for (const auto& f : flavors) flavors_.emplace(f.meta.name, f);
}

placement::PlacementRequest PlacementBridge::BuildRequest(
    const model::Workload& workload, const admission::Assignment& assignment) const {
  placement::PlacementRequest request;
  request.workload = &workload;
  if (reservations_.MustAvoid(workload, now_)) {
    request.excluded_nodes = reservations_.current()->nodes;
    request.excluded_why = "reserved for " + reservations_.current()->holder;
  }
  // The nodes nominated for a preemptor are kept from workloads of no higher
  // priority (kube-scheduler counts nominated pods of equal or higher priority when
  // it filters a node). Whole nodes: a share of one, checked against the
  // preemptor's plan, let preemptions chase each other round the nodes.
  for (const auto& [key, n] : nominated_) {
    if (key == workload.key || n.priority < workload.priority) continue;
    request.excluded_nodes.insert(request.excluded_nodes.end(), n.nodes.begin(), n.nodes.end());
    if (request.excluded_why.empty()) request.excluded_why = "nominated for " + key;
  }
  if (assignment.pod_sets.empty()) return request;  // no queue: no flavor constraints

  bool any_partial = false;
  request.constraints.resize(workload.pod_sets.size());
  request.counts.resize(workload.pod_sets.size());
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    const model::PodSet& ps = workload.pod_sets[i];
    request.counts[i] = ps.count;
    // Match by name: the contract says same order, but a name never lies.
    const admission::PodSetAssignment* psa = nullptr;
    for (const auto& a : assignment.pod_sets) {
      if (a.pod_set == ps.name) psa = &a;
    }
    if (psa == nullptr && i < assignment.pod_sets.size()) psa = &assignment.pod_sets[i];
    if (psa == nullptr) continue;
    if (psa->count >= 0 && psa->count != ps.count) {
      request.counts[i] = psa->count;
      any_partial = true;
    }
    // Distinct flavors in name order, so merged labels do not depend on map order
    // of resources. A pod set names one or two: a sorted list of pointers, not a set
    // of copies (this runs for every placement check).
    std::vector<const std::string*> names;
    for (const auto& [resource, flavor] : psa->flavors) names.push_back(&flavor);
    std::sort(names.begin(), names.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    names.erase(std::unique(names.begin(), names.end(),
                            [](const std::string* a, const std::string* b) { return *a == *b; }),
                names.end());
    placement::PodSetConstraints& c = request.constraints[i];
    for (const std::string* name : names) {
      auto it = flavors_.find(*name);
      if (it == flavors_.end()) continue;  // admission validated it; nothing to add
      const model::ResourceFlavor& flavor = it->second;
      for (const auto& [k, v] : flavor.node_labels) c.flavor_node_labels.emplace(k, v);
      c.flavor_tolerations.insert(c.flavor_tolerations.end(), flavor.tolerations.begin(),
                                  flavor.tolerations.end());
      if (c.topology_name.empty()) c.topology_name = flavor.topology_name;
    }
  }
  if (!any_partial) request.counts.clear();
  return request;
}

admission::PlacementOracle::Check PlacementBridge::CanPlace(
    const model::Workload& workload, const admission::Assignment& assignment,
    const std::vector<std::string>& assume_evicted) {
  if (planner_ == nullptr) return NoPlanner();
  Check check;
  placement::PlacementRequest request = BuildRequest(workload, assignment);
  // With victims to assume gone, a failed plan is mostly followed by a victim search
  // that finds some, and then nothing reads why it failed: no diagnosis (a walk over
  // the nodes) unless the search finds none.
  request.explain = assume_evicted.empty();
  request.fit_cache = &fit_cache_;
  auto planned = planner_->Plan(state_, request);
  if (auto* plan = std::get_if<placement::GangPlan>(&planned)) {
    cached_.insert_or_assign(workload.key, std::move(*plan));
    check.fits = true;
    if (assume_evicted.empty()) reservations_.NotePlaceable(workload.key);
    return check;
  }
  cached_.erase(workload.key);
  if (!assume_evicted.empty()) {
    // Fits once the assumed victims are gone? The planner's victim search answers
    // that without mutating the state; the plan itself is made after the eviction.
    if (planner_->FindVictims(state_, request, assume_evicted).has_value()) {
      check.fits = true;
      return check;
    }
    // It does not fit: plan again, explained (the same plan: ties break by key).
    request.explain = true;
    planned = planner_->Plan(state_, request);
  }
  const auto& failure = std::get<placement::PlacementFailure>(planned);
  check.reason = failure.reason;
  check.message = failure.message;
  if (assume_evicted.empty()) {
    // Nodes, not quota, stop it now: it may be starving (or kept off a reservation).
    ExplainReservation(workload, request, check);
    reservations_.NoteUnplaceable(workload, assignment, check.reason);
  }
  return check;
}

std::optional<std::vector<std::string>> PlacementBridge::PhysicalVictims(
    const model::Workload& workload, const admission::Assignment& assignment,
    const std::vector<std::string>& candidates) {
  if (planner_ == nullptr) return std::nullopt;
  placement::PlacementRequest request = BuildRequest(workload, assignment);
  request.explain = false;  // only whether a trial plan fits is read
  return planner_->FindVictims(state_, request, candidates);
}

void PlacementBridge::Nominate(const model::Workload& workload,
                               const admission::Assignment& assignment,
                               const std::vector<admission::Victim>& victims) {
  nominated_.erase(workload.key);
  if (planner_ == nullptr) return;
  placement::PlacementRequest request = BuildRequest(workload, assignment);
  request.explain = false;
  const admission::SplitVictims split(victims);
  auto planned = planner_->PlanAssumingShrunk(state_, request, split.evicted, split.shrunk);
  auto* plan = std::get_if<placement::GangPlan>(&planned);
  if (plan == nullptr) return;  // it does not fit even then: nothing to hold
  Nomination n;
  n.priority = workload.priority;
  n.nodes = NodesOf(*plan);
  nominated_.emplace(workload.key, std::move(n));
}

void PlacementBridge::DropStaleNominations(const RecordLookup& find) {
  for (auto it = nominated_.begin(); it != nominated_.end();) {
    const WorkloadRecord* r = find(it->first);
    it = r == nullptr || r->phase != Phase::kPending ? nominated_.erase(it) : std::next(it);
  }
}

void PlacementBridge::Commit(const model::Workload& workload,
                             const admission::Assignment& assignment) {
  if (!nominated_.empty()) nominated_.erase(workload.key);
  if (!commit_errors_.empty()) commit_errors_.erase(workload.key);
  auto it = cached_.find(workload.key);
  if (it != cached_.end()) {
    placement::GangPlan plan = std::move(it->second);
    cached_.erase(it);
    if (state_.Commit(plan, workload).ok()) {
      Bound(workload.key, std::move(plan));
      return;
    }
  }
  // No plan cached, or it went stale when something else was bound: plan again.
  auto placed = PlaceNow(workload, assignment);
  if (auto* plan = std::get_if<placement::GangPlan>(&placed)) {
    Bound(workload.key, std::move(*plan));
  } else {
    commit_errors_[workload.key] = std::get<placement::PlacementFailure>(placed).message;
  }
}

admission::PlacementOracle::Check PlacementBridge::CanPlaceShrinking(
    const model::Workload& workload, const admission::Assignment& assignment,
    const std::vector<std::string>& assume_evicted,
    const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrink_to) {
  if (planner_ == nullptr) return NoPlanner();
  Check check;
  placement::PlacementRequest request = BuildRequest(workload, assignment);
  // Like CanPlace with victims assumed gone: the plan itself is made after the
  // victims gave their pods back, so nothing is cached.
  auto planned = planner_->PlanAssumingShrunk(state_, request, assume_evicted, shrink_to);
  if (std::holds_alternative<placement::GangPlan>(planned)) {
    check.fits = true;
    return check;
  }
  const auto& failure = std::get<placement::PlacementFailure>(planned);
  check.reason = failure.reason;
  check.message = failure.message;
  return check;
}

std::variant<placement::GangPlan, placement::PlacementFailure> PlacementBridge::PlanGrowth(
    const model::Workload& workload, const admission::Assignment& now,
    const admission::Assignment& grown) const {
  if (planner_ == nullptr) {
    return placement::PlacementFailure{"Internal", "no gang planner configured"};
  }
  placement::PlacementRequest request = BuildRequest(workload, grown);
  request.counts.assign(workload.pod_sets.size(), 0);
  std::vector<int32_t> offset(workload.pod_sets.size(), 0);
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    int32_t have = i < now.pod_sets.size() ? now.pod_sets[i].count : 0;
    int32_t want = i < grown.pod_sets.size() ? grown.pod_sets[i].count : have;
    request.counts[i] = std::max(0, want - have);
    offset[i] = have;
  }
  auto planned = planner_->Plan(state_, request);
  if (auto* plan = std::get_if<placement::GangPlan>(&planned)) {
    for (placement::PodPlacement& pod : plan->pods) pod.index += offset[pod.pod_set];
  }
  return planned;
}

std::variant<placement::GangPlan, placement::PlacementFailure> PlacementBridge::PlaceNow(
    const model::Workload& workload, const admission::Assignment& assignment) {
  if (planner_ == nullptr) {
    return placement::PlacementFailure{"Internal", "no gang planner configured"};
  }
  placement::PlacementRequest request = BuildRequest(workload, assignment);
  auto planned = planner_->Plan(state_, request);
  if (auto* plan = std::get_if<placement::GangPlan>(&planned)) {
    Status st = state_.Commit(*plan, workload);
    if (!st.ok()) {
      return placement::PlacementFailure{"Internal",
                                         "planned gang did not commit: " + st.message()};
    }
  }
  return planned;
}

void PlacementBridge::Bound(const std::string& key, placement::GangPlan plan) {
  committed_.push_back(Committed{key, std::move(plan), false});
}

std::optional<placement::GangPlan> PlacementBridge::TakeCommitted(const std::string& key) {
  for (size_t i = first_untaken_; i < committed_.size(); ++i) {
    Committed& c = committed_[i];
    if (c.taken || c.key != key) continue;
    c.taken = true;
    placement::GangPlan plan = std::move(c.plan);
    while (first_untaken_ < committed_.size() && committed_[first_untaken_].taken) {
      ++first_untaken_;
    }
    if (first_untaken_ == committed_.size()) {
      committed_.clear();  // keeps its capacity for the next pass
      first_untaken_ = 0;
    }
    return plan;
  }
  return std::nullopt;
}

std::vector<std::string> PlacementBridge::UntakenKeys() const {
  std::vector<std::string> keys;
  for (size_t i = first_untaken_; i < committed_.size(); ++i) {
    if (!committed_[i].taken) keys.push_back(committed_[i].key);
  }
  std::sort(keys.begin(), keys.end());  // the order the errors are reported in
  return keys;
}

std::string PlacementBridge::CommitError(const std::string& key) const {
  auto it = commit_errors_.find(key);
  return it == commit_errors_.end() ? std::string() : it->second;
}

void PlacementBridge::Reset() {
  cached_.clear();
  commit_errors_.clear();
  reservations_.NewPass();
}

void PlacementBridge::ExplainReservation(const model::Workload& workload,
                                         const placement::PlacementRequest& request,
                                         Check& check) const {
  if (reservations_.IsHolder(workload.key)) {
    check.message += "; " + reservations_.HolderNote();
    return;
  }
  if (request.excluded_nodes.empty()) return;
  // Kept off reserved nodes: is that why it does not fit?
  placement::PlacementRequest unrestricted = request;
  unrestricted.excluded_nodes.clear();
  if (!std::holds_alternative<placement::GangPlan>(planner_->Plan(state_, unrestricted))) return;
  if (reservations_.MustAvoid(workload, now_)) {
    check.reason = kReasonNodesReserved;
    check.message = reservations_.AvoidMessage(workload);
    return;
  }
  check.reason = admission::kReasonNodesNominated;
  check.message = "it fits only on nodes " + request.excluded_why +
                  ", which preempted workloads there and is admitted first";
}

std::vector<LogEntry> PlacementBridge::UpdateReservations(Time now, const RecordLookup& find,
                                                          const admission::Admitter& admitter) {
  now_ = now;
  if (planner_ == nullptr) return {};
  if (!nominated_.empty()) DropStaleNominations(find);
  ReservationInputs in;
  in.now = now;
  in.find = find;
  in.admitter = &admitter;
  in.planner = planner_;
  in.cluster = &state_;
  in.request_for = [this](const model::Workload& w, const admission::Assignment& a) {
    return BuildRequest(w, a);
  };
  return reservations_.Update(in);
}

}  // namespace muster::engine
