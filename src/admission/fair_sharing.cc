#include "admission/fair_sharing.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "admission/admission.h"
#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

int64_t AmountOf(const FrAmounts& a, FrId fr) {
  auto it =
      std::lower_bound(a.begin(), a.end(), std::make_pair(fr, std::numeric_limits<int64_t>::min()));
  return it != a.end() && it->first == fr ? it->second : 0;
}

}  // namespace

int64_t DominantResourceShare(const QuotaTree& tree, NodeId node, const FrAmounts& extra,
                              int64_t weight_milli, const FrAmounts& removed) {
  if (!tree.HasParent(node)) return 0;
  if (weight_milli <= 0) return std::numeric_limits<int64_t>::max();
  std::map<ResourceId, int64_t> borrowing;
  for (FrId fr = 0; fr < tree.FrCount(); ++fr) {
    int64_t b = tree.Usage(node, fr) + AmountOf(extra, fr) - AmountOf(removed, fr) -
                tree.SubtreeQuota(node, fr);
    if (b > 0) borrowing[tree.FrOf(fr).second] += b;
  }
  if (borrowing.empty()) return 0;
  std::map<ResourceId, int64_t> lendable;
  NodeId parent = tree.Parent(node);
  for (FrId fr = 0; fr < tree.FrCount(); ++fr) {
    lendable[tree.FrOf(fr).second] += tree.PotentialAvailable(parent, fr);
  }
  int64_t drs = 0;
  for (const auto& [res, b] : borrowing) {
    int64_t l = lendable[res];
    if (l > 0) drs = std::max(drs, b * 1000 / l);
  }
  return drs * 1000 * 1000 / weight_milli;
}

int64_t ShareWith(QuotaTree& tree, const std::vector<int64_t>& weights, NodeId node, NodeId leaf,
                  const FrAmounts& usage, int sign) {
  if (sign > 0) {
    tree.AddUsage(leaf, usage);
  } else {
    tree.RemoveUsage(leaf, usage);
  }
  int64_t share = DominantResourceShare(tree, node, {}, weights[node]);
  if (sign > 0) {
    tree.RemoveUsage(leaf, usage);
  } else {
    tree.AddUsage(leaf, usage);
  }
  return share;
}

namespace {

// Root first, `node` last.
std::vector<NodeId> PathFromRoot(const QuotaTree& tree, NodeId node) {
  std::vector<NodeId> path;
  for (NodeId n = node; n >= 0; n = tree.Parent(n)) path.push_back(n);
  std::reverse(path.begin(), path.end());
  return path;
}

// The ancestors of `a` and `b` just below their lowest common ancestor.
std::pair<NodeId, NodeId> BelowCommonAncestor(const QuotaTree& tree, NodeId a, NodeId b) {
  std::vector<NodeId> pa = PathFromRoot(tree, a), pb = PathFromRoot(tree, b);
  size_t i = 0;
  while (i + 1 < pa.size() && i + 1 < pb.size() && pa[i] == pb[i]) ++i;
  if (pa[i] == pb[i]) ++i;  // one contains the other (not for two distinct queues)
  return {pa[std::min(i, pa.size() - 1)], pb[std::min(i, pb.size() - 1)]};
}

// Candidates left per ClusterQueue, in candidate order.
using Pool = std::map<int32_t, std::vector<const PreemptionCandidate*>>;

}  // namespace

// Kueue's fair-sharing entry order as a tournament: at every Cohort, each child
// subtree proposes its own winner and the child whose share would be lowest with
// that workload admitted wins (then not borrowing, then queue order). Entries of
// different cohort trees, Volcano and queue-less ones meet at a virtual root where
// a tree's proposal counts with the share of the tree's top-level child.
void AdmitterImpl::FairSharingOrder(std::vector<Entry>& entries) {
  struct Key {
    int64_t share;
    bool borrows;
    const QueueKey* qkey;
    bool operator<(const Key& o) const {
      if (share != o.share) return share < o.share;
      if (borrows != o.borrows) return !borrows;
      return *qkey < *o.qkey;
    }
  };
  std::vector<bool> taken(entries.size(), false);
  std::map<NodeId, size_t> entry_of_cq_node;  // at most one head per ClusterQueue
  std::map<NodeId, std::vector<size_t>> by_root;
  std::vector<size_t> others;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].route != Route::kKueue) {
      others.push_back(i);
      continue;
    }
    entry_of_cq_node[cqs_[entries[i].queue].node] = i;
    by_root[RootOf(entries[i].queue)].push_back(i);
  }
  auto usage_of = [&](size_t i) -> const FrAmounts& { return FlavorsFor(*entries[i].ws).usage; };
  // Winner of `node`'s subtree among entries not taken yet; nullopt if none.
  std::function<std::optional<size_t>(NodeId)> winner = [&](NodeId node) -> std::optional<size_t> {
    if (tree_.IsClusterQueue(node)) {
      auto it = entry_of_cq_node.find(node);
      if (it == entry_of_cq_node.end() || taken[it->second]) return std::nullopt;
      return it->second;
    }
    std::optional<size_t> best;
    Key best_key{};
    for (NodeId child : tree_.Children(node)) {
      std::optional<size_t> w = winner(child);
      if (!w) continue;
      const Entry& e = entries[*w];
      Key k{ShareWith(tree_, node_weight_, child, cqs_[e.queue].node, usage_of(*w)), e.borrows,
            &e.ws->qkey};
      if (!best || k < best_key) {
        best = w;
        best_key = k;
      }
    }
    return best;
  };
  std::vector<Entry> ordered;
  for (;;) {
    std::optional<size_t> pick;
    Key pick_key{};
    auto offer = [&](size_t i, int64_t share) {
      Key k{share, entries[i].borrows, &entries[i].ws->qkey};
      if (!pick || k < pick_key) {
        pick = i;
        pick_key = k;
      }
    };
    for (const auto& [root, members] : by_root) {
      std::optional<size_t> w = winner(root);
      if (!w) continue;
      NodeId leaf = cqs_[entries[*w].queue].node;
      std::vector<NodeId> path = PathFromRoot(tree_, leaf);
      offer(*w, path.size() < 2 ? 0 : ShareWith(tree_, node_weight_, path[1], leaf, usage_of(*w)));
    }
    for (size_t i : others) {
      if (!taken[i]) offer(i, 0);
    }
    if (!pick) break;
    taken[*pick] = true;
    ordered.push_back(entries[*pick]);
  }
  entries = std::move(ordered);
}

std::vector<PreemptionTarget> FairSharingTargets(const IncomingWorkload& in, QuotaTree& tree,
                                                 const std::vector<ClusterQueueSpec>& cqs,
                                                 const std::vector<PreemptionCandidate>& admitted,
                                                 const model::FairSharingConfig& config,
                                                 const std::vector<int64_t>& weights) {
  using Strategy = model::FairSharingPreemptionStrategy;
  CandidateList cands = FindCandidates(in, in.preempt_frs, tree, cqs, admitted);
  if (cands.empty()) return {};
  NodeId own = cqs[in.cq].node;
  std::map<NodeId, int32_t> cq_of_node;
  for (const PreemptionCandidate* c : cands) cq_of_node[cqs[c->cq].node] = c->cq;
  auto share = [&](NodeId n) { return DominantResourceShare(tree, n, {}, weights[n]); };
  // The next target queue: from the root, into the child with the highest share
  // that still holds candidates (name breaks ties), down to a ClusterQueue.
  std::function<bool(NodeId, const Pool&)> holds = [&](NodeId n, const Pool& pool) {
    if (tree.IsClusterQueue(n)) {
      auto it = cq_of_node.find(n);
      return it != cq_of_node.end() && pool.count(it->second) > 0;
    }
    for (NodeId c : tree.Children(n)) {
      if (holds(c, pool)) return true;
    }
    return false;
  };
  auto next_target = [&](const Pool& pool) -> std::optional<int32_t> {
    NodeId n = tree.Root(own);
    if (!holds(n, pool)) return std::nullopt;
    while (!tree.IsClusterQueue(n)) {
      NodeId best = -1;
      int64_t best_share = 0;
      for (NodeId c : tree.Children(n)) {
        if (!holds(c, pool)) continue;
        int64_t s = share(c);
        if (best < 0 || s > best_share || (s == best_share && tree.Name(c) < tree.Name(best))) {
          best = c;
          best_share = s;
        }
      }
      n = best;
    }
    return cq_of_node.at(n);
  };
  auto rule = [&](Strategy st, int32_t target_cq, const PreemptionCandidate& c) {
    auto [p, t] = BelowCommonAncestor(tree, own, cqs[target_cq].node);
    int64_t preemptor_new = ShareWith(tree, weights, p, own, *in.usage);
    if (st == Strategy::kLessThanInitialShare) return preemptor_new < share(t);
    return preemptor_new <= ShareWith(tree, weights, t, cqs[target_cq].node, *c.usage, -1);
  };
  std::vector<const PreemptionCandidate*> targets;
  auto remove = [&](const PreemptionCandidate* c) {
    tree.RemoveUsage(cqs[c->cq].node, *c->usage);
    targets.push_back(c);
    return WorkloadFits(in, tree, cqs, true);
  };
  auto still_borrowing = [&](int32_t cq) {
    return tree.HasParent(cqs[cq].node) &&
           std::any_of(in.preempt_frs.begin(), in.preempt_frs.end(),
                       [&](FrId fr) { return tree.BorrowingWith(cqs[cq].node, fr, 0); });
  };
  std::vector<Strategy> strategies = config.preemption_strategies;
  if (strategies.empty()) strategies = {Strategy::kLessThanOrEqualToFinalShare};
  Pool pool;
  for (const PreemptionCandidate* c : cands) pool[c->cq].push_back(c);
  bool fits = false;
  std::vector<const PreemptionCandidate*> retry;
  while (!fits) {
    std::optional<int32_t> t = next_target(pool);
    if (!t) break;
    std::vector<const PreemptionCandidate*>& list = pool[*t];
    if (*t == in.cq) {
      fits = remove(list.front());
      list.erase(list.begin());
      if (list.empty()) pool.erase(*t);
      continue;
    }
    size_t i = 0;
    bool removed = false;
    for (; i < list.size() && !removed; ++i) {
      if (rule(strategies[0], *t, *list[i])) {
        fits = remove(list[i]);
        removed = true;
      } else {
        retry.push_back(list[i]);
      }
    }
    list.erase(list.begin(), list.begin() + static_cast<long>(i));
    // Candidates go on being taken from a queue only while it still borrows.
    if (list.empty() || !removed || !still_borrowing(*t)) pool.erase(*t);
  }
  if (!fits && strategies.size() > 1) {
    Pool again;
    for (const auto* c : retry) again[c->cq].push_back(c);
    while (!fits) {
      std::optional<int32_t> t = next_target(again);
      if (!t) break;
      // The rule does not depend on which workload goes: try the first only.
      const PreemptionCandidate* c = again[*t].front();
      again.erase(*t);
      if (rule(strategies[1], *t, *c)) fits = remove(c);
    }
  }
  if (!fits) {
    for (const auto* c : targets) tree.AddUsage(cqs[c->cq].node, *c->usage);
    return {};
  }
  // Add back what is not needed, newest removal first.
  std::vector<bool> keep_out(targets.size(), true);
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    tree.AddUsage(cqs[targets[i]->cq].node, *targets[i]->usage);
    if (WorkloadFits(in, tree, cqs, true)) {
      keep_out[i] = false;
    } else {
      tree.RemoveUsage(cqs[targets[i]->cq].node, *targets[i]->usage);
    }
  }
  std::vector<PreemptionTarget> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!keep_out[i]) continue;
    tree.AddUsage(cqs[targets[i]->cq].node, *targets[i]->usage);
    out.push_back({std::string(targets[i]->key),
                   targets[i]->cq == in.cq ? kInClusterQueue : kInCohortFairSharing});
  }
  return out;
}

}  // namespace muster::admission
