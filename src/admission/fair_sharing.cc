#include "admission/fair_sharing.h"

#include <algorithm>
#include <limits>
#include <map>

#include "admission/admission.h"
#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

int64_t AmountOf(const FrAmounts& a, FrId fr) {
  auto it = std::lower_bound(a.begin(), a.end(), std::make_pair(fr, std::numeric_limits<int64_t>::min()));
  return it != a.end() && it->first == fr ? it->second : 0;
}

struct CqCandidates {
  int32_t cq = -1;
  int64_t share = 0;
  std::vector<const PreemptionCandidate*> workloads;  // in candidate order
};

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

int64_t AdmitterImpl::ShareAfter(int32_t cq, const FrAmounts& usage) const {
  return DominantResourceShare(tree_, cqs_[cq].node, usage, cqs_[cq].fair_weight_milli);
}

std::vector<PreemptionTarget> FairSharingTargets(const IncomingWorkload& in, QuotaTree& tree,
                                                 const std::vector<ClusterQueueSpec>& cqs,
                                                 const std::vector<PreemptionCandidate>& admitted,
                                                 const model::FairSharingConfig& config) {
  using Strategy = model::FairSharingPreemptionStrategy;
  std::vector<PreemptionCandidate> cands = FindCandidates(in, in.preempt_frs, tree, cqs, admitted);
  if (cands.empty()) return {};
  auto share_of = [&](int32_t cq, const FrAmounts& extra, const FrAmounts& removed) {
    return DominantResourceShare(tree, cqs[cq].node, extra, cqs[cq].fair_weight_milli, removed);
  };
  auto group = [&](const std::vector<const PreemptionCandidate*>& list) {
    std::map<int32_t, CqCandidates> by_cq;
    for (const auto* c : list) {
      auto& g = by_cq[c->cq];
      g.cq = c->cq;
      g.workloads.push_back(c);
    }
    for (auto& [cq, g] : by_cq) g.share = share_of(cq, {}, {});
    return by_cq;
  };
  // The queue with the highest share goes first; name breaks ties.
  auto pop_max = [&](std::map<int32_t, CqCandidates>& heap) {
    auto best = heap.begin();
    for (auto it = heap.begin(); it != heap.end(); ++it) {
      if (it->second.share > best->second.share ||
          (it->second.share == best->second.share && cqs[it->first].name < cqs[best->first].name)) {
        best = it;
      }
    }
    CqCandidates g = std::move(best->second);
    heap.erase(best);
    return g;
  };
  std::vector<const PreemptionCandidate*> all;
  for (const auto& c : cands) all.push_back(&c);
  std::vector<const PreemptionCandidate*> targets;
  auto remove = [&](const PreemptionCandidate* c) {
    tree.RemoveUsage(cqs[c->cq].node, *c->usage);
    targets.push_back(c);
    return WorkloadFits(in, tree, cqs, true);
  };
  bool fits = false;
  int64_t new_share = share_of(in.cq, *in.usage, {});
  std::vector<const PreemptionCandidate*> retry;
  Strategy first = config.preemption_strategies.empty() ? Strategy::kLessThanOrEqualToFinalShare
                                                        : config.preemption_strategies[0];
  auto heap = group(all);
  while (!heap.empty() && !fits) {
    CqCandidates g = pop_max(heap);
    if (g.cq == in.cq) {
      fits = remove(g.workloads.front());
      new_share = share_of(in.cq, *in.usage, {});
      g.workloads.erase(g.workloads.begin());
      if (!g.workloads.empty()) heap[g.cq] = std::move(g);
      continue;
    }
    for (size_t i = 0; i < g.workloads.size(); ++i) {
      const PreemptionCandidate* c = g.workloads[i];
      int64_t cand_new = share_of(g.cq, {}, *c->usage);
      bool ok = first == Strategy::kLessThanOrEqualToFinalShare ? new_share <= cand_new
                                                                : new_share < g.share;
      if (!ok) {
        retry.push_back(c);
        continue;
      }
      fits = remove(c);
      if (!fits) {
        g.workloads.erase(g.workloads.begin(), g.workloads.begin() + static_cast<long>(i) + 1);
        g.share = share_of(g.cq, {}, {});
        if (!g.workloads.empty() && g.share > 0) heap[g.cq] = std::move(g);
      }
      break;
    }
  }
  if (!fits && config.preemption_strategies.size() > 1) {
    auto retry_heap = group(retry);
    while (!retry_heap.empty() && !fits) {
      CqCandidates g = pop_max(retry_heap);
      if (new_share >= g.share) continue;  // LessThanInitialShare
      fits = remove(g.workloads.front());
      g.workloads.erase(g.workloads.begin());
      if (!g.workloads.empty()) retry_heap[g.cq] = std::move(g);
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
    out.push_back({targets[i]->key, targets[i]->cq == in.cq ? kInClusterQueue : kInCohortFairSharing});
  }
  return out;
}

}  // namespace muster::admission
