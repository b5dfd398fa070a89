// The queue tree of the scheduler view: Cohorts and ClusterQueues from admission's
// quota tree, Volcano queues from proportion, and the lookups the workload half uses.
#include <algorithm>
#include <functional>
#include <set>

#include "control/scheduler_view_parts.h"
#include "model/kueue_names.h"

namespace muster::control {
namespace {

std::string CohortObject(const std::string& name) { return "cohort." + name; }
std::string ClusterQueueObject(const std::string& name) { return "clusterqueue." + name; }
std::string VolcanoObject(const std::string& name) { return "volcanoqueue." + name; }

const char* PolicyName(model::PreemptionPolicy p) {
  switch (p) {
    case model::PreemptionPolicy::kNever:
      return "Never";
    case model::PreemptionPolicy::kLowerPriority:
      return "LowerPriority";
    case model::PreemptionPolicy::kLowerOrNewerEqualPriority:
      return "LowerOrNewerEqualPriority";
    case model::PreemptionPolicy::kAny:
      return "Any";
  }
  return "Never";
}

void AddRequest(Amounts& into, const model::Workload& w) {
  for (const auto& ps : w.pod_sets) {
    ps.requests.ForEachNonZero(
        [&](ResourceId id, int64_t v) { into[ResourceNames::Name(id)] += v * ps.count; });
  }
}

// Quota a node keeps unused and may lend: its lendable part not taken by itself.
int64_t UnusedLendable(const admission::QuotaCellSnapshot& c) {
  int64_t lendable = c.subtree - c.guaranteed;
  return std::max<int64_t>(0, std::min(lendable, c.subtree - c.usage));
}

// Kueue pools lent quota in the cohort, so who lent what is not recorded anywhere. The
// view attributes what the cohort's members borrow to the members' unused lendable
// quota (and the cohort's own quota) pro rata, rounding down: a queue's `lent` is its
// share of the borrowing its cohort sees now.
void AttributeLending(std::vector<QueueView>& views,
                      const std::map<std::string, const admission::QuotaNodeSnapshot*>& nodes) {
  std::map<std::string, std::vector<QueueView*>> by_parent;
  for (auto& v : views) {
    if (!v.parent.empty() && v.kind != "VolcanoQueue") by_parent[v.parent].push_back(&v);
  }
  for (auto& [parent, members] : by_parent) {
    auto pn = nodes.find(parent);
    // (flavor, resource) -> borrowed by members, unused lendable per member, cohort's own.
    std::map<std::pair<std::string, std::string>, int64_t> borrowed, pool;
    for (QueueView* m : members) {
      const auto* n = nodes.at(m->name);
      for (const auto& c : n->cells) {
        borrowed[{c.flavor, c.resource}] += std::max<int64_t>(0, c.usage - c.subtree);
        pool[{c.flavor, c.resource}] += UnusedLendable(c);
      }
    }
    if (pn != nodes.end()) {
      for (const auto& c : pn->second->cells) pool[{c.flavor, c.resource}] += c.nominal;
    }
    for (QueueView* m : members) {
      const auto* n = nodes.at(m->name);
      for (auto& q : m->quota) {
        const auto key = std::make_pair(q.flavor, q.resource);
        const int64_t b = borrowed[key], total = pool[key];
        if (b <= 0 || total <= 0) continue;
        for (const auto& c : n->cells) {
          if (c.flavor != q.flavor || c.resource != q.resource) continue;
          const int64_t mine = UnusedLendable(c);
          const __int128 share = static_cast<__int128>(std::min(b, total)) * mine / total;
          q.lent = static_cast<int64_t>(std::min<__int128>(share, mine));
        }
      }
    }
  }
}

}  // namespace

PartsIndex::PartsIndex(const admission::AdmissionSnapshot& snapshot, const engine::Engine& engine)
    : preempted_for(&snapshot.preempted_for), snapshot_(snapshot) {
  for (size_t i = 0; i < snapshot.cluster_queues.size(); ++i) {
    const auto& cq = snapshot.cluster_queues[i];
    cqs_[cq.name] = i;
    // Pending so far per LocalQueue, by "<namespace>/<name>": LocalQueues of two
    // namespaces may share a name and a ClusterQueue.
    std::map<std::string, int32_t> local;
    for (size_t p = 0; p < cq.pending.size(); ++p) {
      const std::string& key = cq.pending[p];
      const std::string lq = key.substr(0, key.find('/') + 1) + engine.QueueOf(key).local_queue;
      positions_[key] = {static_cast<int32_t>(p), local[lq]++};
    }
  }
  for (size_t i = 0; i < snapshot.volcano_queues.size(); ++i) {
    vqs_[snapshot.volcano_queues[i].name] = i;
  }
  for (size_t i = 0; i < snapshot.quota_nodes.size(); ++i) {
    nodes_[{snapshot.quota_nodes[i].cluster_queue, snapshot.quota_nodes[i].name}] = i;
  }
}

const admission::ClusterQueueSnapshot* PartsIndex::ClusterQueue(const std::string& name) const {
  auto it = cqs_.find(name);
  return it == cqs_.end() ? nullptr : &snapshot_.cluster_queues[it->second];
}

const admission::VolcanoQueueSnapshot* PartsIndex::VolcanoQueue(const std::string& name) const {
  auto it = vqs_.find(name);
  return it == vqs_.end() ? nullptr : &snapshot_.volcano_queues[it->second];
}

const admission::QuotaNodeSnapshot* PartsIndex::QuotaNode(const std::string& name,
                                                          bool cluster_queue) const {
  auto it = nodes_.find({cluster_queue, name});
  return it == nodes_.end() ? nullptr : &snapshot_.quota_nodes[it->second];
}

std::optional<std::pair<int32_t, int32_t>> PartsIndex::Position(const std::string& key) const {
  auto it = positions_.find(key);
  if (it == positions_.end()) return std::nullopt;
  return it->second;
}

std::string PartsIndex::RootOf(const std::string& name, bool cluster_queue) const {
  std::string current = name;
  const auto* node = QuotaNode(name, cluster_queue);
  for (int depth = 0; node != nullptr && !node->parent.empty() && depth < 64; ++depth) {
    current = node->parent;
    node = QuotaNode(current, false);
  }
  return current;
}

std::vector<const admission::ClusterQueueSnapshot*> PartsIndex::CohortMembers(
    const std::string& cohort) const {
  std::vector<const admission::ClusterQueueSnapshot*> out;
  const std::string root = RootOf(cohort, false);
  for (const auto& cq : snapshot_.cluster_queues) {
    if (!cq.cohort.empty() && RootOf(cq.name, true) == root) out.push_back(&cq);
  }
  return out;
}

bool PartsIndex::Borrowing(const std::string& cluster_queue) const {
  const auto* node = QuotaNode(cluster_queue, true);
  if (node == nullptr) return false;
  return std::any_of(node->cells.begin(), node->cells.end(),
                     [](const auto& c) { return c.usage > c.subtree; });
}

std::vector<QueueView> BuildQueueViews(const engine::Engine& engine,
                                       const admission::AdmissionSnapshot& snapshot,
                                       const PartsIndex& index) {
  std::vector<QueueView> views;
  std::map<std::string, const admission::QuotaNodeSnapshot*> nodes;  // by object name
  for (const auto& n : snapshot.quota_nodes) {
    QueueView v;
    v.kind = n.cluster_queue ? "ClusterQueue" : "Cohort";
    v.name = n.cluster_queue ? ClusterQueueObject(n.name) : CohortObject(n.name);
    v.queue = n.name;
    if (!n.parent.empty()) v.parent = CohortObject(n.parent);
    v.weight_milli = n.weight_milli;
    v.weighted_share = n.weighted_share;
    for (const auto& c : n.cells) {
      QuotaView q;
      q.flavor = c.flavor;
      q.resource = c.resource;
      // A Cohort's quota is its own plus its members': what its subtree holds.
      q.nominal = n.cluster_queue ? c.nominal : c.total_nominal;
      q.borrowing_limit = c.borrowing_limit;
      q.lending_limit = c.lending_limit;
      q.used = c.usage;
      q.borrowed = std::max<int64_t>(0, c.usage - (n.cluster_queue ? c.subtree : c.total_nominal));
      q.available = c.available;
      v.quota.push_back(std::move(q));
    }
    if (const auto* cq = n.cluster_queue ? index.ClusterQueue(n.name) : nullptr) {
      v.pending = static_cast<int64_t>(cq->pending.size());
      v.inadmissible = static_cast<int64_t>(cq->parked.size());
      v.admitted = static_cast<int64_t>(cq->admitted.size());
      for (const auto& key : cq->pending) {
        if (const auto* r = engine.Find(key)) AddRequest(v.pending_requests, r->workload);
      }
      v.queueing_strategy =
          cq->strategy == model::QueueingStrategy::kStrictFIFO ? "StrictFIFO" : "BestEffortFIFO";
      v.stop_policy = model::StopPolicyName(cq->stop_policy);
      v.preemption =
          std::string("withinClusterQueue=") + PolicyName(cq->preemption.within_cluster_queue) +
          ", reclaimWithinCohort=" + PolicyName(cq->preemption.reclaim_within_cohort) +
          ", borrowWithinCohort=" + PolicyName(cq->preemption.borrow_within_cohort.policy);
      v.inactive_message = cq->inactive_message;
    }
    nodes[v.name] = &n;
    views.push_back(std::move(v));
  }
  AttributeLending(views, nodes);

  // Volcano queues: shown when configured or used (admission always has "default").
  for (const auto& q : snapshot.volcano_queues) {
    const bool used = !q.pending.empty() || !q.admitted.empty();
    const bool configured = q.name != "default" || q.weight != 1 || !q.capability.empty() ||
                            !q.guarantee.IsZero() || !q.parent.empty();
    bool is_parent = false;
    for (const auto& other : snapshot.volcano_queues) is_parent |= other.parent == q.name;
    if (!used && !configured && !is_parent) continue;
    QueueView v;
    v.kind = "VolcanoQueue";
    v.name = VolcanoObject(q.name);
    v.queue = q.name;
    if (!q.parent.empty()) v.parent = VolcanoObject(q.parent);
    v.weight_milli = int64_t{q.weight} * 1000;
    v.capability = q.capability;
    v.guarantee = ToAmounts(q.guarantee);
    v.deserved = ToAmounts(q.deserved);
    v.allocated = ToAmounts(q.allocated);
    v.reclaimable = q.reclaimable;
    v.pending = static_cast<int64_t>(q.pending.size());
    v.admitted = static_cast<int64_t>(q.admitted.size());
    for (const auto& key : q.pending) {
      if (const auto* r = engine.Find(key)) AddRequest(v.pending_requests, r->workload);
    }
    std::set<std::string> resources;
    for (const auto& [k, _] : v.deserved) resources.insert(k);
    for (const auto& [k, _] : v.allocated) resources.insert(k);
    for (const auto& [k, _] : v.capability) resources.insert(k);
    for (const auto& r : resources) {
      QuotaView c;
      c.resource = r;
      c.nominal = v.deserved.count(r) ? v.deserved[r] : 0;
      c.used = v.allocated.count(r) ? v.allocated[r] : 0;
      c.borrowed = std::max<int64_t>(0, c.used - c.nominal);
      int64_t limit = c.nominal;
      if (auto it = v.capability.find(r); it != v.capability.end()) {
        c.borrowing_limit = it->second - c.nominal;
        limit = c.nominal > 0 ? std::min(limit, it->second) : it->second;
      }
      c.available = std::max<int64_t>(0, limit - c.used);
      v.quota.push_back(std::move(c));
    }
    views.push_back(std::move(v));
  }

  std::sort(views.begin(), views.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < views.size(); ++i) by_name[views[i].name] = i;
  for (const auto& v : views) {
    if (v.parent.empty()) continue;
    if (auto it = by_name.find(v.parent); it != by_name.end()) {
      views[it->second].children.push_back(v.name);
    }
  }
  // Cohorts count what their subtrees hold.
  std::function<void(QueueView&)> total = [&](QueueView& v) {
    if (v.kind != "Cohort") return;
    for (const auto& child : v.children) {
      QueueView& c = views[by_name[child]];
      total(c);
      v.pending += c.pending;
      v.inadmissible += c.inadmissible;
      v.admitted += c.admitted;
      for (const auto& [k, n] : c.pending_requests) v.pending_requests[k] += n;
    }
  };
  for (auto& v : views) {
    if (v.kind == "Cohort" && v.parent.empty()) total(v);
  }
  return views;
}

}  // namespace muster::control
