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
                                                 const CandidateList& cands, bool allow_borrowing,
                                                 std::optional<int32_t> borrow_below) {
  std::vector<const PreemptionCandidate*> removed;
  std::vector<const char*> details;
  bool fits = false;
  for (const PreemptionCandidate* cp : cands) {
    const PreemptionCandidate& c = *cp;
    bool same_cq = c.cq == in.cq;
    const char* detail = kInClusterQueue;
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
    removed.push_back(cp);
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

// Calls `take` with every workload of `admitted` the incoming workload's ClusterQueue
// policies allow it to preempt that uses one of `frs` (sorted; `frs_mask` its
// FrMask), in list order, until `take` answers true. The tree's candidate lists hold
// each ClusterQueue's workloads together (AdmittedInRoot's order), so whether another
// queue may be reclaimed from is asked once per run of its workloads, and a run it may
// not is passed over whole. Any other order gives the same answers, asked more often.
template <typename Take>
void ForEachCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs,
                      const FrMask& frs_mask, const QuotaTree& tree,
                      const std::vector<ClusterQueueSpec>& cqs,
                      const std::vector<PreemptionCandidate>& admitted, Take take) {
  using model::PreemptionPolicy;
  const ClusterQueueSpec& cq = cqs[in.cq];
  const PreemptionPolicy within = cq.preemption.within_cluster_queue;
  const PreemptionPolicy reclaim = cq.preemption.reclaim_within_cohort;
  for (size_t i = 0; i < admitted.size();) {
    const int32_t queue = admitted[i].cq;
    size_t end = i + 1;
    while (end < admitted.size() && admitted[end].cq == queue) ++end;
    const bool own = queue == in.cq;
    if (own ? within == PreemptionPolicy::kNever
            : !OtherQueueReclaimable(in, frs, tree, cqs, queue)) {
      i = end;
      continue;
    }
    for (; i < end; ++i) {
      const PreemptionCandidate& c = admitted[i];
      if (c.admit_seq > in.max_admit_seq) continue;
      if (own) {
        if (c.priority > in.priority) continue;
        // Equal priority only under LowerOrNewerEqualPriority, and only newer ones.
        if (c.priority == in.priority &&
            (within != PreemptionPolicy::kLowerOrNewerEqualPriority ||
             !(std::tie(in.created, in.order) < std::tie(c.created, c.order)))) {
          continue;
        }
      } else if (reclaim != PreemptionPolicy::kAny && c.priority >= in.priority) {
        continue;
      }
      if (UsesAny(c, frs, frs_mask) && take(c)) return;
    }
  }
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
  bool any = false;
  ForEachCandidate(in, frs, frs_mask, tree, cqs, admitted,
                   [&any](const PreemptionCandidate&) { return any = true; });
  return any;
}

CandidateList FindCandidates(const IncomingWorkload& in, const std::vector<FrId>& frs_unsorted,
                             const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                             const std::vector<PreemptionCandidate>& admitted) {
  const std::vector<FrId> frs = Sorted(frs_unsorted);
  const FrMask frs_mask = FrMask::Of(frs);
  CandidateList out;
  out.reserve(admitted.size());  // at most all of them
  ForEachCandidate(in, frs, frs_mask, tree, cqs, admitted, [&out](const PreemptionCandidate& c) {
    out.push_back(&c);
    return false;
  });
  std::sort(out.begin(), out.end(),
            [&](const PreemptionCandidate* a, const PreemptionCandidate* b) {
              bool a_in = a->cq == in.cq, b_in = b->cq == in.cq;
              if (a_in != b_in) return !a_in;
              if (a->priority != b->priority) return a->priority < b->priority;
              if (a->admit_seq != b->admit_seq) return a->admit_seq > b->admit_seq;
              return a->key < b->key;
            });
  return out;
}

std::vector<PreemptionTarget> ClassicalTargets(const IncomingWorkload& in, QuotaTree& tree,
                                               const std::vector<ClusterQueueSpec>& cqs,
                                               const std::vector<PreemptionCandidate>& admitted) {
  CandidateList cands = FindCandidates(in, in.preempt_frs, tree, cqs, admitted);
  if (cands.empty()) return {};
  const ClusterQueueSpec& cq = cqs[in.cq];
  CandidateList same_queue;
  for (const PreemptionCandidate* c : cands) {
    if (c->cq == in.cq) same_queue.push_back(c);
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
      CandidateList filtered;
      for (const PreemptionCandidate* c : cands) {
        if (c->cq == in.cq || c->priority < limit) filtered.push_back(c);
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
