#include "admission/admitted_index.h"

#include <algorithm>
#include <limits>
#include <string>

namespace muster::admission {

void AdmittedIndex::Add(int32_t cq, const CandidateRank& rank, const FrAmounts& usage) {
  if (static_cast<size_t>(cq) >= by_cq_.size()) by_cq_.resize(cq + 1);
  for (const auto& [fr, v] : usage) {
    if (v > 0) by_cq_[cq][fr].insert(rank);
  }
}

void AdmittedIndex::Remove(int32_t cq, const CandidateRank& rank, const FrAmounts& usage) {
  if (static_cast<size_t>(cq) >= by_cq_.size()) return;
  for (const auto& [fr, v] : usage) {
    if (v <= 0) continue;
    auto it = by_cq_[cq].find(fr);
    if (it == by_cq_[cq].end()) continue;
    it->second.erase(rank);
    if (it->second.empty()) by_cq_[cq].erase(it);
  }
}

const std::set<CandidateRank>* AdmittedIndex::Find(int32_t cq, FrId fr) const {
  if (static_cast<size_t>(cq) >= by_cq_.size()) return nullptr;
  auto it = by_cq_[cq].find(fr);
  return it == by_cq_[cq].end() ? nullptr : &it->second;
}

// The same policies as FindCandidates (preemptor.cc), asked of the lowest-ranked
// admitted workload per queue and resource instead of each one.
bool AdmittedIndex::AnyCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs_unsorted,
                                 const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                                 const std::vector<int32_t>& root_cqs) const {
  using model::PreemptionPolicy;
  std::vector<FrId> frs = frs_unsorted;
  std::sort(frs.begin(), frs.end());
  frs.erase(std::unique(frs.begin(), frs.end()), frs.end());
  const ClusterQueueSpec& cq = cqs[in.cq];
  const PreemptionPolicy within = cq.preemption.within_cluster_queue;
  if (within != PreemptionPolicy::kNever) {
    for (FrId fr : frs) {
      const std::set<CandidateRank>* s = Find(in.cq, fr);
      if (s == nullptr) continue;
      if (s->begin()->priority < in.priority) return true;
      if (within != PreemptionPolicy::kLowerOrNewerEqualPriority) continue;
      // Equal priority, created after the incoming one: the first rank above
      // (priority, created, order) with a larger (created, order).
      if (in.order == std::numeric_limits<int64_t>::max()) continue;
      auto it = s->lower_bound(CandidateRank{in.priority, in.created, in.order + 1, {}});
      if (it != s->end() && it->priority == in.priority) return true;
    }
  }
  const PreemptionPolicy reclaim = cq.preemption.reclaim_within_cohort;
  if (!tree.HasParent(cq.node) || reclaim == PreemptionPolicy::kNever) return false;
  for (int32_t other : root_cqs) {
    if (other == in.cq) continue;
    const NodeId node = cqs[other].node;
    if (!tree.HasParent(node)) continue;
    bool borrowing = std::any_of(frs.begin(), frs.end(),
                                 [&](FrId fr) { return tree.BorrowingWith(node, fr, 0); });
    if (!borrowing) continue;
    for (FrId fr : frs) {
      const std::set<CandidateRank>* s = Find(other, fr);
      if (s == nullptr) continue;
      if (reclaim == PreemptionPolicy::kAny || s->begin()->priority < in.priority) return true;
    }
  }
  return false;
}

}  // namespace muster::admission
