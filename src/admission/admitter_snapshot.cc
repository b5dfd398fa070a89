// AdmitterImpl::Snapshot: admission's numbers as plain values (admission_snapshot.h).
#include <algorithm>

#include "admission/admitter_impl.h"
#include "admission/fair_sharing.h"

namespace muster::admission {
namespace {

std::vector<std::string> Keys(const std::vector<QueueKey>& keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.emplace_back(k.key);
  return out;
}

// Pending keys in queue order: PendingQueue::All lists active then parked, each
// sorted; a person reading a position expects one order over both.
std::vector<QueueKey> QueueOrder(const PendingQueue& q) {
  std::vector<QueueKey> all = q.All();
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

AdmissionSnapshot AdmitterImpl::Snapshot() const {
  AdmissionSnapshot s;
  s.fair_sharing = fair_sharing_;
  s.preempted_for = held_for_preemptor_;

  // Admitted usage of each node's whole subtree (a Cohort's own Usage counts only what
  // its children store in it beyond what they keep).
  const int32_t frs = tree_.FrCount();
  // Likewise the nominal quota of each subtree (a Cohort's own plus its members').
  std::vector<std::vector<int64_t>> subtree_usage(tree_.NodeCount(), std::vector<int64_t>(frs, 0));
  std::vector<std::vector<int64_t>> total_nominal = subtree_usage;
  for (NodeId n = 0; n < tree_.NodeCount(); ++n) {
    for (NodeId a = n; a >= 0; a = tree_.HasParent(a) ? tree_.Parent(a) : -1) {
      for (FrId fr = 0; fr < frs; ++fr) {
        if (tree_.IsClusterQueue(n)) subtree_usage[a][fr] += tree_.Usage(n, fr);
        total_nominal[a][fr] += tree_.QuotaOf(n, fr).nominal;
      }
    }
  }
  for (NodeId n = 0; n < tree_.NodeCount(); ++n) {
    QuotaNodeSnapshot node;
    node.name = tree_.Name(n);
    node.cluster_queue = tree_.IsClusterQueue(n);
    if (tree_.HasParent(n)) node.parent = tree_.Name(tree_.Parent(n));
    node.weight_milli = node_weight_[n];
    int64_t share = DominantResourceShare(tree_, n, {}, node_weight_[n]);
    // DominantResourceShare scales by 1000 / weight(milli); weightedShare is per mille
    // over the weight.
    node.weighted_share = share == INT64_MAX ? share : share / 1000;
    for (FrId fr = 0; fr < frs; ++fr) {
      const Quota& q = tree_.QuotaOf(n, fr);
      const int64_t sub = tree_.SubtreeQuota(n, fr);
      if (sub == 0 && q.nominal == 0 && subtree_usage[n][fr] == 0 && !q.borrowing_limit &&
          !q.lending_limit) {
        continue;  // a pair of another part of the tree
      }
      auto [flavor, resource] = tree_.FrOf(fr);
      QuotaCellSnapshot cell;
      cell.flavor = flavors_.flavors.size() > static_cast<size_t>(flavor)
                        ? flavors_.flavors[flavor].meta.name
                        : std::string();
      cell.resource = ResourceNames::Name(resource);
      cell.nominal = q.nominal;
      cell.borrowing_limit = q.borrowing_limit;
      cell.lending_limit = q.lending_limit;
      cell.subtree = sub;
      cell.total_nominal = total_nominal[n][fr];
      cell.guaranteed = tree_.GuaranteedQuota(n, fr);
      cell.usage = subtree_usage[n][fr];
      cell.available = std::max<int64_t>(0, tree_.Available(n, fr));
      node.cells.push_back(std::move(cell));
    }
    std::sort(node.cells.begin(), node.cells.end(), [](const auto& a, const auto& b) {
      return std::tie(a.flavor, a.resource) < std::tie(b.flavor, b.resource);
    });
    s.quota_nodes.push_back(std::move(node));
  }
  std::sort(s.quota_nodes.begin(), s.quota_nodes.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.cluster_queue, a.name) < std::make_pair(b.cluster_queue, b.name);
  });

  for (int32_t i : cq_by_name_) {
    const ClusterQueueSpec& spec = cqs_[i];
    ClusterQueueSnapshot cq;
    cq.name = spec.name;
    if (tree_.HasParent(spec.node)) cq.cohort = tree_.Name(tree_.Parent(spec.node));
    for (const auto& g : spec.groups) {
      std::vector<std::string> flavors, covered;
      for (int32_t f : g.flavors) flavors.push_back(flavors_.flavors[f].meta.name);
      for (ResourceId r : g.covered) covered.push_back(ResourceNames::Name(r));
      cq.flavor_groups.push_back(std::move(flavors));
      cq.covered.push_back(std::move(covered));
    }
    cq.strategy = spec.strategy;
    cq.preemption = spec.preemption;
    cq.stop_policy = spec.stop_policy;
    cq.inactive_message = spec.inactive_message;
    cq.pending = Keys(QueueOrder(cq_pending_[i]));
    // A deferred unpark (NotifyCapacityChanged) reads as done.
    bool due = UnparkDue(cq_root_[i]);
    for (const auto& k : cq_pending_[i].Parked()) {
      if (!due) cq.parked.emplace_back(k.key);
    }
    std::sort(cq.parked.begin(), cq.parked.end());
    for (const auto& [key, state] : cq_admitted_[i]) cq.admitted.emplace_back(key);
    s.cluster_queues.push_back(std::move(cq));
  }

  for (int32_t q = 0; q < volcano_.size(); ++q) {
    const VolcanoProportion::Queue& vq = volcano_.queue(q);
    VolcanoQueueSnapshot v;
    v.name = vq.name;
    if (vq.parent >= 0) v.parent = volcano_.queue(vq.parent).name;
    v.weight = vq.weight;
    for (const auto& [id, amount] : vq.capability) v.capability[ResourceNames::Name(id)] = amount;
    v.guarantee = vq.guarantee;
    vq.deserved.ForEachNonZero([&](ResourceId id, int64_t amount) {
      v.deserved.Set(id, amount / VolcanoProportion::kScale);
    });
    v.allocated = vq.allocated;
    v.request = vq.request;
    v.reclaimable = vq.reclaimable;
    v.pending = Keys(QueueOrder(vq_pending_[q]));
    v.admitted.assign(vq_admitted_[q].begin(), vq_admitted_[q].end());
    s.volcano_queues.push_back(std::move(v));
  }
  std::sort(s.volcano_queues.begin(), s.volcano_queues.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return s;
}

}  // namespace muster::admission
