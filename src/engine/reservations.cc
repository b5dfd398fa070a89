#include "engine/reservations.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

namespace muster::engine {
namespace {

// "a, b, c and 2 more": enough to find the nodes, short enough for one line.
std::string FewNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 3;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

std::string Nodes(size_t n) { return fmt::format("{} node{}", n, n == 1 ? "" : "s"); }

int64_t PodsAsked(const model::Workload& workload, const admission::Assignment& assignment) {
  int64_t pods = 0;
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    int32_t count = workload.pod_sets[i].count;
    if (i < assignment.pod_sets.size() && assignment.pod_sets[i].count > 0) {
      count = assignment.pod_sets[i].count;
    }
    pods += count;
  }
  return pods;
}

bool Fits(const std::variant<placement::GangPlan, placement::PlacementFailure>& planned) {
  return std::holds_alternative<placement::GangPlan>(planned);
}

}  // namespace

std::optional<Time> ExpectedFinish(const WorkloadRecord& record) {
  if (record.phase != Phase::kRunning || !record.start_time || !record.workload.sim.duration) {
    return std::nullopt;
  }
  return *record.start_time + *record.workload.sim.duration;
}

Time PendingSince(const WorkloadRecord& record) {
  Time since = record.submit_time.value_or(0);
  if (record.start_time) since = std::max(since, *record.start_time);
  if (!record.evictions.empty()) since = std::max(since, record.evictions.back().time);
  return since;
}

std::variant<ReservedNodes, std::string> PlanReservation(const placement::GangPlanner& planner,
                                                         const placement::ClusterState& cluster,
                                                         const placement::PlacementRequest& request,
                                                         const RecordLookup& find) {
  std::set<std::string> bound;
  for (placement::NodeIndex i = 0; i < cluster.NodeCount(); ++i) {
    for (std::string& key : cluster.WorkloadsOnNode(i)) bound.insert(std::move(key));
  }
  // Soonest expected finish first: the search below keeps the gang waiting on
  // the workloads that go first.
  std::vector<std::tuple<bool, Time, std::string>> order;
  for (const std::string& key : bound) {
    const WorkloadRecord* r = find(key);
    std::optional<Time> finish = r != nullptr ? ExpectedFinish(*r) : std::nullopt;
    Time start = r != nullptr ? r->start_time.value_or(0) : 0;
    order.emplace_back(!finish.has_value(), finish.value_or(start), key);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> keys;
  for (auto& [unknown, when, key] : order) keys.push_back(std::move(key));

  auto everything_gone = planner.PlanAssumingEvicted(cluster, request, keys);
  if (!Fits(everything_gone)) {
    return "it does not fit even with every running workload gone: " +
           std::get<placement::PlacementFailure>(everything_gone).message;
  }
  // Shortest prefix that lets it fit (binary search; the whole list fits).
  auto prefix = [&](size_t k) { return std::vector<std::string>(keys.begin(), keys.begin() + k); };
  size_t lo = 0, hi = keys.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (Fits(planner.PlanAssumingEvicted(cluster, request, prefix(mid)))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  std::vector<std::string> needed = prefix(hi);
  if (auto victims = planner.FindVictims(cluster, request, needed)) needed = std::move(*victims);
  auto planned = planner.PlanAssumingEvicted(cluster, request, needed);
  if (!Fits(planned)) {
    needed = keys;  // the planner is not monotone here; fall back to what fitted
    planned = std::move(everything_gone);
  }
  ReservedNodes out;
  for (const auto& pod : std::get<placement::GangPlan>(planned).pods) out.nodes.push_back(pod.node);
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  std::set<std::string> in_the_way(needed.begin(), needed.end());
  for (placement::NodeIndex i : out.nodes) {
    for (std::string& key : cluster.WorkloadsOnNode(i)) {
      if (in_the_way.count(key) != 0) {
        out.waits_for.push_back(key);
      } else {
        out.beside.insert(std::move(key));
      }
    }
  }
  std::sort(out.waits_for.begin(), out.waits_for.end());
  out.waits_for.erase(std::unique(out.waits_for.begin(), out.waits_for.end()), out.waits_for.end());
  return out;
}

void ReservationBook::NoteUnplaceable(const model::Workload& workload,
                                      const admission::Assignment& assignment,
                                      const std::string& reason) {
  int64_t pods = PodsAsked(workload, assignment);
  auto it = unplaceable_.find(workload.key);
  if (it != unplaceable_.end() && it->second.pass == pass_ && it->second.pods > pods) return;
  unplaceable_[workload.key] = Unplaceable{assignment, reason, pods, pass_};
}

std::vector<ReservationBook::Candidate> ReservationBook::Candidates(const ReservationInputs& in) {
  std::vector<Candidate> out;
  for (auto it = unplaceable_.begin(); it != unplaceable_.end();) {
    const WorkloadRecord* r = in.find(it->first);
    if (r == nullptr || !r->submitted || r->phase != Phase::kPending) {
      it = unplaceable_.erase(it);
      continue;
    }
    // Physical only while admission still reports the placement failure: a quota
    // wait or a preemption in progress is not starvation on nodes.
    std::optional<admission::Decision> pending = in.admitter->PendingReason(it->first);
    Time since = PendingSince(*r);
    std::string why;
    if (after_ && in.now - since >= *after_) {
      why = fmt::format("reservationAfter {}s", *after_);
    } else if (auto sla = SlaWait(r->workload);
               sla && r->submit_time && in.now - *r->submit_time >= *sla) {
      // Volcano counts the SLA from the job's creation, not from its latest requeue.
      why = fmt::format("sla-waiting-time {}s", *sla);
    }
    if (pending && pending->reason == it->second.reason && !why.empty()) {
      out.push_back(Candidate{r->workload.priority, since, it->first, std::move(why)});
    }
    ++it;
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.since != b.since) return a.since < b.since;
    return a.key < b.key;
  });
  return out;
}

std::string ReservationBook::EndReason(const ReservationInputs& in,
                                       const std::vector<Candidate>& candidates) const {
  const std::string& holder = current_->holder;
  const WorkloadRecord* r = in.find(holder);
  if (r == nullptr || r->Finished()) return "Removed";
  if (r->Active()) return "Admitted";
  bool starving = std::any_of(candidates.begin(), candidates.end(),
                              [&](const Candidate& c) { return c.key == holder; });
  if (!starving) return "NoLongerStarving";
  if (candidates.front().priority > current_->priority) return "Superseded";
  for (placement::NodeIndex i : current_->nodes) {
    if (!in.cluster->NodeReady(i)) return "NodesLost";
  }
  return "";
}

std::optional<Reservation> ReservationBook::Make(const ReservationInputs& in, const Candidate& c) {
  const WorkloadRecord* r = in.find(c.key);
  auto it = unplaceable_.find(c.key);
  if (r == nullptr || it == unplaceable_.end()) return std::nullopt;
  placement::PlacementRequest request = in.request_for(r->workload, it->second.assignment);
  request.excluded_nodes.clear();  // a holder is never kept off its own nodes
  request.excluded_why.clear();
  auto planned = PlanReservation(*in.planner, *in.cluster, request, in.find);
  if (std::holds_alternative<std::string>(planned)) {
    failed_at_[c.key] = in.now;
    return std::nullopt;
  }
  ReservedNodes& reserved = std::get<ReservedNodes>(planned);
  Reservation res;
  res.holder = c.key;
  res.priority = c.priority;
  res.pending_since = c.since;
  res.why = c.why;
  res.made_at = in.now;
  res.nodes = std::move(reserved.nodes);
  for (placement::NodeIndex i : res.nodes)
    res.node_names.push_back(in.cluster->GetNode(i).meta.name);
  std::sort(res.node_names.begin(), res.node_names.end());
  res.beside = std::move(reserved.beside);
  res.waits_for = std::move(reserved.waits_for);
  return res;
}

void ReservationBook::Refresh(const ReservationInputs& in) {
  Reservation& res = *current_;
  std::set<std::string> on_nodes;
  for (placement::NodeIndex i : res.nodes) {
    for (std::string& key : in.cluster->WorkloadsOnNode(i)) on_nodes.insert(std::move(key));
  }
  // One that left and came back (backfill, a restart) may be in the way now.
  for (auto it = res.beside.begin(); it != res.beside.end();) {
    it = on_nodes.count(*it) != 0 ? std::next(it) : res.beside.erase(it);
  }
  res.waits_for.clear();
  Time earliest = in.now;
  bool known = true;
  for (const std::string& key : on_nodes) {
    if (key == res.holder || res.beside.count(key) != 0) continue;
    res.waits_for.push_back(key);
    const WorkloadRecord* r = in.find(key);
    std::optional<Time> finish = r != nullptr ? ExpectedFinish(*r) : std::nullopt;
    if (finish) {
      earliest = std::max(earliest, *finish);
    } else {
      known = false;
    }
  }
  res.earliest_start = known ? std::optional<Time>(earliest) : std::nullopt;
}

std::vector<LogEntry> ReservationBook::Update(const ReservationInputs& in) {
  std::vector<LogEntry> log;
  for (auto it = failed_at_.begin(); it != failed_at_.end();) {
    it = it->second == in.now ? std::next(it) : failed_at_.erase(it);
  }
  if (!after_ && !sla_) {
    if (current_) {
      log.push_back({in.now, current_->holder, "ReservationEnd", "Disabled",
                     "reservationAfter is unset: " + Nodes(current_->nodes.size()) + " released"});
      current_.reset();
    }
    return log;
  }
  if (!after_ && current_ && current_->why.rfind("reservationAfter", 0) == 0) {
    // Held by reservationAfter, which is unset now (an sla holder keeps its own).
    log.push_back({in.now, current_->holder, "ReservationEnd", "Disabled",
                   "reservationAfter is unset: " + Nodes(current_->nodes.size()) + " released"});
    current_.reset();
  }
  std::vector<Candidate> candidates = Candidates(in);
  if (current_) {
    std::string why = EndReason(in, candidates);
    if (!why.empty()) {
      std::string message = Nodes(current_->nodes.size()) + " released";
      if (why == "Superseded") message += ": " + candidates.front().key + " has a higher priority";
      if (why == "NodesLost") message += ": a reserved node is not ready, re-planning";
      log.push_back({in.now, current_->holder, "ReservationEnd", why, message});
      current_.reset();
    }
  }
  if (!current_) {
    for (const Candidate& c : candidates) {
      auto failed = failed_at_.find(c.key);
      if (failed != failed_at_.end() && failed->second == in.now) continue;
      current_ = Make(in, c);
      if (current_) break;
    }
    if (!current_) return log;
    Refresh(in);
    const Reservation& res = *current_;
    std::string message = fmt::format(
        "pending since t={} ({}): reserved {} ({}), waiting for {} running "
        "workload{}",
        res.pending_since, res.why, Nodes(res.nodes.size()), FewNames(res.node_names),
        res.waits_for.size(), res.waits_for.size() == 1 ? "" : "s");
    message += res.earliest_start ? fmt::format(", earliest start t={}", *res.earliest_start)
                                  : std::string(", earliest start unknown");
    log.push_back({in.now, res.holder, "Reserve", "Starving", message});
    return log;
  }
  Refresh(in);
  return log;
}

std::optional<double> ReservationBook::SlaWait(const model::Workload& workload) const {
  if (!sla_ || !workload.local_queue.empty()) return std::nullopt;  // Kueue's queues: no sla
  return workload.sla_waiting_seconds ? workload.sla_waiting_seconds : sla_default_;
}

bool ReservationBook::MustAvoid(const model::Workload& workload, Time now) const {
  if (!current_ || workload.key == current_->holder) return false;
  // A higher priority would win the election anyway and may preempt the gang.
  if (workload.priority > current_->priority) return false;
  const auto& duration = workload.sim.duration;
  const auto& earliest = current_->earliest_start;
  bool backfills = duration && earliest && now + *duration <= *earliest;
  return !backfills;
}

std::string ReservationBook::AvoidMessage(const model::Workload& workload) const {
  if (!current_) return "";
  const Reservation& res = *current_;
  std::string message =
      fmt::format("fits only on nodes reserved for {} (starving since t={}): {}; ", res.holder,
                  res.pending_since, FewNames(res.node_names));
  if (!workload.sim.duration) {
    message += "its duration is unknown, so it cannot backfill before the gang starts";
  } else if (!res.earliest_start) {
    message += "the gang's earliest start is unknown, so nothing backfills there";
  } else {
    // No time of its own in it: the message stays the same while the gang waits.
    message += fmt::format("its {}s would end after the gang's earliest start t={}",
                           *workload.sim.duration, *res.earliest_start);
  }
  return message;
}

std::string ReservationBook::HolderNote() const {
  if (!current_) return "";
  const Reservation& res = *current_;
  // What it waits for is left out: it changes with every finish and would churn
  // the decision log.
  std::string note = fmt::format("holds a reservation on {} ({}) since t={}",
                                 Nodes(res.nodes.size()), FewNames(res.node_names), res.made_at);
  if (res.earliest_start) note += fmt::format(", earliest start t={}", *res.earliest_start);
  return note;
}

}  // namespace muster::engine
