#include "admission/preemptor.h"

#include <algorithm>

#include "admission/admission.h"

namespace muster::admission {
namespace {

bool UsesAny(const FrAmounts& usage, const std::vector<FrId>& frs) {
  for (const auto& [fr, v] : usage) {
    if (v > 0 && std::binary_search(frs.begin(), frs.end(), fr)) return true;
  }
  return false;
}

// `frs` sorted, `frs_mask` its FrMask.
bool UsesAny(const PreemptionCandidate& c, const std::vector<FrId>& frs, const FrMask& frs_mask) {
  if (c.uses.exact && frs_mask.exact) return (c.uses.bits & frs_mask.bits) != 0;
  return UsesAny(*c.usage, frs);
}

bool CqIsBorrowing(const QuotaTree& tree, NodeId node, const std::vector<FrId>& frs) {
  if (!tree.HasParent(node)) return false;
  return std::any_of(frs.begin(), frs.end(),
                     [&](FrId fr) { return tree.BorrowingWith(node, fr, 0); });
}

bool UnderNominalInPreemptFrs(const IncomingWorkload& in, const QuotaTree& tree, NodeId node) {
  return std::all_of(in.preempt_frs.begin(), in.preempt_frs.end(), [&](FrId fr) {
    return tree.Usage(node, fr) < tree.QuotaOf(node, fr).nominal;
  });
}

void AddAll(QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
            const std::vector<const PreemptionCandidate*>& ws) {
  for (const auto* w : ws) tree.AddUsage(cqs[w->cq].node, *w->usage);
}

std::vector<PreemptionTarget> MinimalPreemptions(const IncomingWorkload& in, QuotaTree& tree,
                                                 const std::vector<ClusterQueueSpec>& cqs,
                                                 const std::vector<PreemptionCandidate>& cands,
                                                 bool allow_borrowing,
                                                 std::optional<int32_t> borrow_below) {
  std::vector<const PreemptionCandidate*> removed;
  std::vector<std::string> details;
  bool fits = false;
  for (const PreemptionCandidate& c : cands) {
    bool same_cq = c.cq == in.cq;
    std::string detail = kInClusterQueue;
    if (!same_cq) {
      // Reclaim only while the other queue still borrows (re-checked as we remove).
      if (!CqIsBorrowing(tree, cqs[c.cq].node, in.preempt_frs)) continue;
      detail = kInCohortReclamation;
      if (borrow_below) {
        if (c.priority >= *borrow_below) {
          allow_borrowing = false;
        } else {
          detail = kInCohortReclaimWhileBorrowing;
        }
      }
    }
    tree.RemoveUsage(cqs[c.cq].node, *c.usage);
    removed.push_back(&c);
    details.push_back(detail);
    if (WorkloadFits(in, tree, cqs, allow_borrowing)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    AddAll(tree, cqs, removed);
    return {};
  }
  // Add back, newest removal first (the last one is needed), what is not needed.
  std::vector<bool> keep_out(removed.size(), true);
  for (int i = static_cast<int>(removed.size()) - 2; i >= 0; --i) {
    tree.AddUsage(cqs[removed[i]->cq].node, *removed[i]->usage);
    if (WorkloadFits(in, tree, cqs, allow_borrowing)) {
      keep_out[i] = false;
    } else {
      tree.RemoveUsage(cqs[removed[i]->cq].node, *removed[i]->usage);
    }
  }
  std::vector<PreemptionTarget> targets;
  std::vector<const PreemptionCandidate*> still_out;
  for (size_t i = 0; i < removed.size(); ++i) {
    if (!keep_out[i]) continue;
    targets.push_back({std::string(removed[i]->key), details[i]});
    still_out.push_back(removed[i]);
  }
  AddAll(tree, cqs, still_out);
  return targets;
}

}  // namespace

namespace {

// Sets `fr`'s bit; false when it has none (the mask cannot be exact).
bool SetFrBit(FrMask& m, FrId fr) {
  if (fr < 0 || fr >= 64) return false;
  m.bits |= uint64_t{1} << fr;
  return true;
}

}  // namespace

FrMask FrMask::Of(const std::vector<FrId>& frs) {
  FrMask m;
  for (FrId fr : frs) {
    if (!SetFrBit(m, fr)) return FrMask{};
  }
  m.exact = true;
  return m;
}

FrMask FrMask::OfUsage(const FrAmounts& usage) {
  FrMask m;
  for (const auto& [fr, v] : usage) {
    if (v > 0 && !SetFrBit(m, fr)) return FrMask{};
  }
  m.exact = true;
  return m;
}

bool WorkloadFits(const IncomingWorkload& in, const QuotaTree& tree,
                  const std::vector<ClusterQueueSpec>& cqs, bool allow_borrowing) {
  NodeId node = cqs[in.cq].node;
  for (const auto& [fr, v] : *in.usage) {
    if (!allow_borrowing && tree.HasParent(node) && tree.BorrowingWith(node, fr, v)) return false;
    if (v > tree.Available(node, fr)) return false;
  }
  return true;
}

namespace {

// Whether the incoming workload's ClusterQueue policies allow preempting workloads of
// another ClusterQueue `other` (before their priority is looked at): the same answer
// for every workload of `other`, so a search asks it once per queue.
bool OtherQueueReclaimable(const IncomingWorkload& in, const std::vector<FrId>& frs,
                           const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                           int32_t other) {
  const ClusterQueueSpec& cq = cqs[in.cq];
  if (!tree.HasParent(cq.node) ||
      cq.preemption.reclaim_within_cohort == model::PreemptionPolicy::kNever)
    return false;
  if (tree.Root(cqs[other].node) != tree.Root(cq.node)) return false;
  return CqIsBorrowing(tree, cqs[other].node, frs);
}

// OtherQueueReclaimable's answers for the queues of one cohort tree, as (queue,
// answer) pairs: a tree holds a few queues, and a table over every queue cost a
// fill of the whole table per search (growing with the cluster, not the tree).
using ReclaimableMemo = std::vector<std::pair<int32_t, bool>>;

// Whether the incoming workload's ClusterQueue policies allow preempting `c`, which
// uses one of `frs` (sorted; `frs_mask` its FrMask).
bool IsCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs, const FrMask& frs_mask,
                 const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                 const PreemptionCandidate& c, ReclaimableMemo& reclaimable) {
  using model::PreemptionPolicy;
  const ClusterQueueSpec& cq = cqs[in.cq];
  if (c.cq == in.cq) {
    PreemptionPolicy within = cq.preemption.within_cluster_queue;
    if (within == PreemptionPolicy::kNever) return false;
    if (c.priority > in.priority) return false;
    if (c.priority == in.priority) {
      // Equal priority only under LowerOrNewerEqualPriority, and only newer ones.
      bool newer = std::tie(in.created, in.order) < std::tie(c.created, c.order);
      if (within != PreemptionPolicy::kLowerOrNewerEqualPriority || !newer) return false;
    }
    return UsesAny(c, frs, frs_mask);
  }
  PreemptionPolicy reclaim = cq.preemption.reclaim_within_cohort;
  if (reclaim != PreemptionPolicy::kAny && c.priority >= in.priority) return false;
  auto known = std::find_if(reclaimable.begin(), reclaimable.end(),
                            [&c](const auto& entry) { return entry.first == c.cq; });
  bool other =
      known != reclaimable.end()
          ? known->second
          : reclaimable.emplace_back(c.cq, OtherQueueReclaimable(in, frs, tree, cqs, c.cq)).second;
  return other && UsesAny(c, frs, frs_mask);
}

std::vector<FrId> Sorted(std::vector<FrId> frs) {
  std::sort(frs.begin(), frs.end());
  return frs;
}

}  // namespace

bool AnyCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs_unsorted,
                  const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                  const std::vector<PreemptionCandidate>& admitted) {
  const std::vector<FrId> frs = Sorted(frs_unsorted);
  const FrMask frs_mask = FrMask::Of(frs);
  ReclaimableMemo reclaimable;
  return std::any_of(admitted.begin(), admitted.end(), [&](const PreemptionCandidate& c) {
    return IsCandidate(in, frs, frs_mask, tree, cqs, c, reclaimable);
  });
}

std::vector<PreemptionCandidate> FindCandidates(const IncomingWorkload& in,
                                                const std::vector<FrId>& frs_unsorted,
                                                const QuotaTree& tree,
                                                const std::vector<ClusterQueueSpec>& cqs,
                                                const std::vector<PreemptionCandidate>& admitted) {
  const std::vector<FrId> frs = Sorted(frs_unsorted);
  const FrMask frs_mask = FrMask::Of(frs);
  std::vector<PreemptionCandidate> out;
  ReclaimableMemo reclaimable;
  for (const PreemptionCandidate& c : admitted) {
    if (IsCandidate(in, frs, frs_mask, tree, cqs, c, reclaimable)) out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    bool a_in = a.cq == in.cq, b_in = b.cq == in.cq;
    if (a_in != b_in) return !a_in;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.admit_seq != b.admit_seq) return a.admit_seq > b.admit_seq;
    return a.key < b.key;
  });
  return out;
}

std::vector<PreemptionTarget> ClassicalTargets(const IncomingWorkload& in, QuotaTree& tree,
                                               const std::vector<ClusterQueueSpec>& cqs,
                                               const std::vector<PreemptionCandidate>& admitted) {
  std::vector<PreemptionCandidate> cands = FindCandidates(in, in.preempt_frs, tree, cqs, admitted);
  if (cands.empty()) return {};
  const ClusterQueueSpec& cq = cqs[in.cq];
  std::vector<PreemptionCandidate> same_queue;
  for (const auto& c : cands) {
    if (c.cq == in.cq) same_queue.push_back(c);
  }
  // Only own workloads: borrowing while preempting them cannot cause flapping.
  if (same_queue.size() == cands.size()) {
    return MinimalPreemptions(in, tree, cqs, cands, true, std::nullopt);
  }
  const auto& bwc = cq.preemption.borrow_within_cohort;
  if (bwc.policy != model::PreemptionPolicy::kNever) {
    // Borrowing stays allowed only while every reclaimed workload is below this
    // priority: the preemptor's, or maxPriorityThreshold+1 when that is lower.
    int32_t limit = in.priority;
    const auto& threshold = bwc.max_priority_threshold;
    if (threshold && *threshold < limit) limit = *threshold + 1;
    if (!UnderNominalInPreemptFrs(in, tree, cq.node)) {
      std::vector<PreemptionCandidate> filtered;
      for (const auto& c : cands) {
        if (c.cq == in.cq || c.priority < limit) filtered.push_back(c);
      }
      cands.swap(filtered);
    }
    return MinimalPreemptions(in, tree, cqs, cands, true, limit);
  }
  // Reclaim from the cohort without borrowing only while under nominal quota.
  if (UnderNominalInPreemptFrs(in, tree, cq.node)) {
    auto targets = MinimalPreemptions(in, tree, cqs, cands, false, std::nullopt);
    if (!targets.empty()) return targets;
  }
  return MinimalPreemptions(in, tree, cqs, same_queue, true, std::nullopt);
}

}  // namespace muster::admission
