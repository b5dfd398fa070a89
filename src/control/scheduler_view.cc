// BuildSchedulerView: workloads, the cluster summary, utilisation history and the
// timeline. Queues are built in scheduler_view_queues.cc, nodes in
// scheduler_view_nodes.cc.
#include "control/scheduler_view.h"

#include <algorithm>

#include "control/scheduler_view_parts.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using admission::AdmissionSnapshot;

constexpr char kGpu[] = "nvidia.com/gpu";

DecisionView ToDecision(const engine::LogEntry& e) {
  return {e.time, e.action, e.reason, e.message};
}

// Timeline actions: what changes who holds the cluster.
bool OnTimeline(const std::string& action) { return action != "Submit" && action != "Pending"; }

// Kueue's quota numbers for a pending workload: for each flavor of the groups covering
// what it asks for, the resources where the request exceeds what the queue can still
// use. Empty when some flavor would fit every resource of its group (then the wait is
// about nodes or ordering, and the message says so).
std::vector<ShortfallView> KueueShortfall(const model::Workload& w,
                                          const admission::ClusterQueueSnapshot& cq,
                                          const admission::QuotaNodeSnapshot* node) {
  std::vector<ShortfallView> out;
  if (node == nullptr) return out;
  const ResourceList request = model::TotalRequest(w);
  for (size_t g = 0; g < cq.flavor_groups.size(); ++g) {
    std::vector<ShortfallView> group;
    bool some_flavor_fits = false;
    bool asks = false;
    for (const auto& flavor : cq.flavor_groups[g]) {
      std::vector<ShortfallView> missing;
      for (const auto& resource : cq.covered[g]) {
        int64_t want = request.Get(ResourceNames::Intern(resource));
        if (want <= 0) continue;
        asks = true;
        int64_t available = 0;
        for (const auto& c : node->cells) {
          if (c.flavor == flavor && c.resource == resource) available = c.available;
        }
        if (want > available) missing.push_back({flavor, resource, want, available});
      }
      if (missing.empty()) some_flavor_fits = true;
      group.insert(group.end(), missing.begin(), missing.end());
    }
    if (asks && !some_flavor_fits) out.insert(out.end(), group.begin(), group.end());
  }
  return out;
}

std::vector<ShortfallView> VolcanoShortfall(const model::Workload& w,
                                            const admission::VolcanoQueueSnapshot& q) {
  std::vector<ShortfallView> out;
  model::TotalRequest(w).ForEachNonZero([&](ResourceId id, int64_t want) {
    const std::string& name = ResourceNames::Name(id);
    std::optional<int64_t> limit;
    if (auto it = q.capability.find(name); it != q.capability.end()) limit = it->second;
    int64_t deserved = q.deserved.Get(id);
    if (deserved > 0) limit = limit ? std::min(*limit, deserved) : deserved;
    if (!limit) return;
    int64_t available = std::max<int64_t>(0, *limit - q.allocated.Get(id));
    if (want > available) out.push_back({"", name, want, available});
  });
  return out;
}

// Admitted workloads that `w`'s ClusterQueue policy lets it preempt (Kueue's
// candidate rules: within the queue by priority, in the cohort from queues that
// borrow), in Kueue's preference order: same queue first, lower priority first, then
// the most recently admitted.
std::vector<CandidateView> Candidates(const engine::Engine& engine, const WorkloadView& self,
                                      const admission::ClusterQueueSnapshot& cq,
                                      const PartsIndex& index) {
  std::vector<std::pair<std::tuple<int, int32_t, Time, std::string>, CandidateView>> found;
  const auto& p = cq.preemption;
  auto consider = [&](const std::string& key, const std::string& queue, const char* reason,
                      model::PreemptionPolicy policy, bool same_queue) {
    const engine::WorkloadRecord* r = engine.Find(key);
    if (r == nullptr || !r->Active()) return;
    const int32_t prio = r->workload.priority;
    bool ok = false;
    switch (policy) {
      case model::PreemptionPolicy::kNever:
        break;
      case model::PreemptionPolicy::kLowerPriority:
        ok = prio < self.priority;
        break;
      case model::PreemptionPolicy::kLowerOrNewerEqualPriority:
        ok = prio < self.priority || (prio == self.priority && r->submit_time && self.submitted &&
                                      *r->submit_time > *self.submitted);
        break;
      case model::PreemptionPolicy::kAny:
        ok = true;
        break;
    }
    if (!ok) return;
    CandidateView c{key, queue, prio, reason, false};
    auto it = index.preempted_for->find(key);
    c.preempting = it != index.preempted_for->end() && it->second == self.key;
    Time admitted = r->admit_time.value_or(0);
    found.push_back({{same_queue ? 0 : 1, prio, -admitted, key}, c});
  };
  for (const auto& key : cq.admitted) {
    consider(key, cq.name, admission::kInClusterQueue, p.within_cluster_queue, true);
  }
  if (!cq.cohort.empty() && p.reclaim_within_cohort != model::PreemptionPolicy::kNever) {
    for (const auto* other : index.CohortMembers(cq.cohort)) {
      if (other->name == cq.name || !index.Borrowing(other->name)) continue;
      for (const auto& key : other->admitted) {
        consider(key, other->name, admission::kInCohortReclamation, p.reclaim_within_cohort, false);
      }
    }
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CandidateView> out;
  for (auto& [order, c] : found) {
    if (out.size() == kMaxCandidates) break;
    out.push_back(std::move(c));
  }
  return out;
}

WorkloadView BuildWorkload(const engine::Engine& engine, const engine::WorkloadRecord& r,
                           const PartsIndex& index) {
  const model::Workload& w = r.workload;
  WorkloadView v;
  v.namespace_ = w.meta.namespace_.empty() ? "default" : w.meta.namespace_;
  JobRef job;
  job.kind = w.meta.kind;
  job.name = w.meta.name;
  v.name = WorkloadObjectName(job);
  v.key = w.key;
  v.job_kind = w.meta.kind;
  v.job_name = w.meta.name;
  v.state = std::string(engine::PhaseName(r.phase));
  const admission::QueueInfo q = engine.QueueOf(w.key);
  v.local_queue = q.local_queue;
  v.cluster_queue = q.cluster_queue;
  v.volcano = q.volcano;
  v.priority = w.priority;
  v.priority_class = w.priority_class;
  v.submitted = r.submit_time;
  v.admitted = r.admit_time;
  v.started = r.start_time;
  v.finished = r.finish_time;
  v.pods = w.TotalCount();
  v.min_pods = w.min_available;
  v.requests = ToAmounts(model::TotalRequest(w));
  v.failures = r.failures;
  for (const auto& e : r.evictions) v.evictions.push_back({e.time, e.reason, e.detail, e.by});
  if (auto it = index.preempted_for->find(w.key); it != index.preempted_for->end()) {
    v.preempted_for = it->second;
  }
  for (size_t i = 0; i < r.assignment.pod_sets.size(); ++i) {
    for (const auto& [resource, flavor] : r.assignment.pod_sets[i].flavors) {
      v.flavors[r.assignment.pod_sets[i].pod_set + "/" + resource] = flavor;
    }
  }
  if (r.bound) {
    for (const auto& pod : r.plan.pods) {
      PodView pv;
      pv.pod_set = pod.pod_set < static_cast<int32_t>(w.pod_sets.size())
                       ? w.pod_sets[pod.pod_set].name
                       : std::to_string(pod.pod_set);
      pv.index = pod.index;
      pv.node = pod.node >= 0 && pod.node < engine.cluster().NodeCount()
                    ? engine.cluster().GetNode(pod.node).meta.name
                    : "";
      pv.gpus = pod.gpus;
      pv.numa_zone = pod.numa_zone;
      v.placement.push_back(std::move(pv));
    }
  }
  if (r.phase == engine::Phase::kPending || r.phase == engine::Phase::kAdmitted ||
      r.phase == engine::Phase::kFailed) {
    v.message = engine.PendingMessage(w.key);
    if (auto d = engine.admitter().PendingReason(w.key)) v.reason = d->reason;
    if (r.phase == engine::Phase::kFailed) v.reason = "Failed";
  }
  if (r.phase != engine::Phase::kPending || !r.submitted) return v;

  // Position and the numbers of the wait.
  if (const auto* cq = index.ClusterQueue(v.cluster_queue); cq != nullptr && !v.volcano) {
    v.cohort = cq->cohort;
    auto pos = index.Position(w.key);
    if (pos) {
      v.position_in_cluster_queue = pos->first;
      v.position_in_local_queue = pos->second;
    }
    v.inadmissible = std::binary_search(cq->parked.begin(), cq->parked.end(), w.key);
    v.shortfall = KueueShortfall(w, *cq, index.QuotaNode(cq->name, true));
    if (v.position_in_cluster_queue >= 0 && v.position_in_cluster_queue < kCandidatePositions &&
        !v.shortfall.empty()) {
      v.candidates = Candidates(engine, v, *cq, index);
    }
  } else if (const auto* vq = index.VolcanoQueue(v.cluster_queue); vq != nullptr && v.volcano) {
    auto it = std::find(vq->pending.begin(), vq->pending.end(), w.key);
    if (it != vq->pending.end()) {
      v.position_in_cluster_queue = static_cast<int32_t>(it - vq->pending.begin());
    }
    v.shortfall = VolcanoShortfall(w, *vq);
  }
  return v;
}

void AddSample(UtilizationSeries& s, Time now, const ClusterView& c) {
  auto get = [](const Amounts& a, const std::string& k) {
    auto it = a.find(k);
    return it == a.end() ? int64_t{0} : it->second;
  };
  const int64_t running = get(c.workloads, "Running") + get(c.workloads, "Admitted");
  const int64_t pending = get(c.workloads, "Pending");
  const int64_t values[] = {get(c.used, kGpu),
                            get(c.allocatable, kGpu),
                            get(c.used, "cpu"),
                            get(c.allocatable, "cpu"),
                            running,
                            pending};
  std::vector<int64_t>* columns[] = {&s.gpus_used, &s.gpus_total, &s.cpu_used,
                                     &s.cpu_total, &s.running,    &s.pending};
  if (s.size() > 0) {
    bool same = true;
    for (size_t i = 0; i < 6; ++i) same = same && columns[i]->back() == values[i];
    if (same) return;            // a step series: the last sample still holds
    if (s.time.back() >= now) {  // two changes in one instant: the later one wins
      for (size_t i = 0; i < 6; ++i) columns[i]->back() = values[i];
      return;
    }
  }
  if (s.size() >= kMaxUtilizationSamples) {
    // Thin the older half (every other sample), so the history keeps its whole span
    // at a coarser grain instead of forgetting its start.
    const size_t half = s.size() / 2;
    auto thin = [half](auto& col) {
      size_t out = 0;
      for (size_t i = 0; i < col.size(); ++i) {
        if (i < half && i % 2 == 1) continue;
        col[out++] = col[i];
      }
      col.resize(out);
    };
    thin(s.time);
    for (auto* col : columns) thin(*col);
  }
  s.time.push_back(now);
  for (size_t i = 0; i < 6; ++i) columns[i]->push_back(values[i]);
}

}  // namespace

Amounts ToAmounts(const ResourceList& list) {
  Amounts out;
  list.ForEachNonZero([&](ResourceId id, int64_t v) { out[ResourceNames::Name(id)] = v; });
  return out;
}

SchedulerView BuildSchedulerView(const ViewInputs& in, const SchedulerView* previous) {
  SchedulerView view;
  view.generation = previous != nullptr ? previous->generation + 1 : 1;
  ClusterView& c = view.cluster;
  c.updated = in.now;
  c.engine_error = in.engine_error;
  if (previous != nullptr) {
    c.utilization = previous->cluster.utilization;
    c.timeline = previous->cluster.timeline;
    view.log_seen = previous->log_seen;
    view.log_first = previous->log_first;
  }
  if (in.engine == nullptr) return view;
  const engine::Engine& engine = *in.engine;

  const AdmissionSnapshot snapshot = engine.admitter().Snapshot();
  PartsIndex index(snapshot, engine);
  view.queues = BuildQueueViews(engine, snapshot, index);
  view.nodes = BuildNodeViews(engine, in.config);

  for (const auto& r : engine.workloads()) {
    if (!r.submitted) continue;
    view.workloads.push_back(BuildWorkload(engine, r, index));
  }
  std::sort(view.workloads.begin(), view.workloads.end(), [](const auto& a, const auto& b) {
    return std::tie(a.namespace_, a.name) < std::tie(b.namespace_, b.name);
  });
  for (const auto& w : view.workloads) ++c.workloads[w.state];

  // Decision log: per-workload entries and the cluster timeline. Only the entries
  // after the ones the previous view saw are read (the log only grows), unless the
  // engine was rebuilt and started a new log.
  const std::vector<engine::LogEntry>* drained = in.new_decisions;
  std::map<std::string, std::vector<DecisionView>> decisions;
  // The drained entries (a vector) or the engine's log (a deque).
  auto read = [&](const auto& entries) {
    const bool same_log = drained != nullptr
                              ? previous != nullptr
                              : previous != nullptr && !entries.empty() && view.log_first &&
                                    *view.log_first == ToDecision(entries.front()) &&
                                    view.log_seen <= entries.size();
    if (!same_log || drained != nullptr) view.log_seen = 0;
    if (same_log) {
      for (const auto& w : previous->workloads) {
        if (!w.decisions.empty()) decisions[w.key] = w.decisions;
      }
    }
    for (size_t i = view.log_seen; i < entries.size(); ++i) {
      const engine::LogEntry& e = entries[i];
      auto& list = decisions[e.workload];
      list.push_back(ToDecision(e));
      if (list.size() > 2 * kMaxDecisionsPerWorkload) {
        list.erase(list.begin(),
                   list.end() - static_cast<std::ptrdiff_t>(kMaxDecisionsPerWorkload));
      }
      if (!OnTimeline(e.action)) continue;
      c.timeline.push_back({e.time, e.action, e.workload, engine.QueueOf(e.workload).cluster_queue,
                            e.reason, e.message});
    }
    if (drained == nullptr) {
      view.log_first = entries.empty() ? std::nullopt : std::optional(ToDecision(entries.front()));
      view.log_seen = entries.size();
    }
  };
  if (drained != nullptr) {
    read(*drained);
  } else {
    read(engine.log().entries());
  }
  for (auto& w : view.workloads) {
    auto it = decisions.find(w.key);
    if (it == decisions.end()) continue;
    auto& list = it->second;
    if (list.size() > kMaxDecisionsPerWorkload) {
      list.erase(list.begin(), list.end() - static_cast<std::ptrdiff_t>(kMaxDecisionsPerWorkload));
    }
    w.decisions = std::move(list);
  }
  if (c.timeline.size() > kMaxTimelineEntries) {
    c.timeline.erase(c.timeline.begin(),
                     c.timeline.end() - static_cast<std::ptrdiff_t>(kMaxTimelineEntries));
  }

  c.cycles = engine.cycles();
  for (const auto& n : view.nodes) {
    ++c.nodes;
    if (!n.ready) continue;
    ++c.ready_nodes;
    for (const auto& [k, v] : n.allocatable) c.allocatable[k] += v;
    for (const auto& [k, v] : n.used) c.used[k] += v;
    int32_t free = 0;
    for (const auto& g : n.gpus) free += g.milli_used == 0 ? 1 : 0;
    if (!n.unschedulable) c.largest_free_gpus = std::max(c.largest_free_gpus, free);
  }
  AddSample(c.utilization, in.now, c);
  return view;
}

}  // namespace muster::control
