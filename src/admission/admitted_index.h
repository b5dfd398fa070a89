// AdmittedIndex: the admitted workloads of each ClusterQueue, per flavor-resource
// they are charged for, ordered by (priority, creation, input order). Flavor
// assignment asks, for every flavor it tries, whether any preemption candidate
// exists (Kueue's "preemption possible" check); a scan of every admitted workload
// of the cohort tree made that O(admitted) per pending head, O(pending x admitted)
// per cycle. The index answers from the front of at most (queues x resources) sets.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "admission/cluster_queue.h"
#include "admission/preemptor.h"
#include "admission/quota_tree.h"

namespace muster::admission {

// What preemption policies compare, plus the key to tell equals apart (a view of
// the workload's key, which outlives its entry).
struct CandidateRank {
  int32_t priority = 0;
  Time created = 0;
  int64_t order = 0;
  std::string_view key;
  friend bool operator<(const CandidateRank& a, const CandidateRank& b) {
    return std::tie(a.priority, a.created, a.order, a.key) <
           std::tie(b.priority, b.created, b.order, b.key);
  }
};

class AdmittedIndex {
 public:
  // `usage` is what the workload is charged; only amounts above zero are indexed
  // (a candidate must use one of the resources short of quota).
  void Add(int32_t cq, const CandidateRank& rank, const FrAmounts& usage);
  void Remove(int32_t cq, const CandidateRank& rank, const FrAmounts& usage);

  // Whether FindCandidates over the admitted workloads of `root_cqs` (the
  // incoming workload's cohort tree) would find any, for the resources `frs`.
  bool AnyCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs, const QuotaTree& tree,
                    const std::vector<ClusterQueueSpec>& cqs,
                    const std::vector<int32_t>& root_cqs) const;

 private:
  using ByFr = std::map<FrId, std::set<CandidateRank>>;
  const std::set<CandidateRank>* Find(int32_t cq, FrId fr) const;
  std::vector<ByFr> by_cq_;
};

}  // namespace muster::admission
