// Classical preemption (kueue pkg/scheduler/preemption): which admitted workloads
// to evict so that an incoming workload fits its ClusterQueue's quota, under the
// queue's withinClusterQueue / reclaimWithinCohort / borrowWithinCohort policies,
// choosing a minimal set (remove in order until it fits, then add back in reverse).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admission/cluster_queue.h"
#include "admission/quota_tree.h"
#include "core/clock.h"

namespace muster::admission {

// A set of FrIds as bits, exact only while every FrId in it is below 64 (a cluster
// has a handful of flavors times resources): lets a candidate answer "uses one of
// these?" from its own bytes, where reading its usage vector is a cache miss per
// candidate once the admitted workloads outgrow the cache.
struct FrMask {
  uint64_t bits = 0;
  bool exact = false;  // false: unknown, read the usage
  static FrMask Of(const std::vector<FrId>& frs);
  static FrMask OfUsage(const FrAmounts& usage);  // the frs it charges (> 0)
};

struct PreemptionCandidate {
  // A view of the admitted workload's key: candidate lists are rebuilt often, and
  // the key outlives them (it belongs to the workload's state).
  std::string_view key;
  int32_t cq = -1;  // index into the ClusterQueue specs
  int32_t priority = 0;
  Time created = 0;
  int64_t order = 0;
  int64_t admit_seq = 0;  // larger = admitted more recently
  const FrAmounts* usage = nullptr;
  FrMask uses;  // FrMask::OfUsage(*usage), or not exact
};

struct PreemptionTarget {
  std::string key;
  std::string detail;  // kInClusterQueue, kInCohortReclamation, ...
};

struct IncomingWorkload {
  int32_t cq = -1;
  int32_t priority = 0;
  Time created = 0;
  int64_t order = 0;
  const FrAmounts* usage = nullptr;  // what it would charge
  std::vector<FrId> preempt_frs;     // the frs short of quota
  // Only workloads admitted at or before this admit_seq are candidates: one admitted
  // in the current cycle never is. Skipped where the list is read, so a cohort's
  // admitted list is not copied without them for every cycle.
  int64_t max_admit_seq = std::numeric_limits<int64_t>::max();
};

// Candidates the policies allow, in Kueue's CandidatesOrdering (other queues first,
// lower priority first, most recently admitted first, then key). `admitted` are the
// admitted workloads of every ClusterQueue in the incoming one's cohort tree; the
// answer points into it (valid while it is unchanged): a cohort's list is read for
// many heads, and sorting 72-byte copies of it cost more than the search.
// `frs` restricts candidates to workloads using one of them (empty: none qualify).
using CandidateList = std::vector<const PreemptionCandidate*>;
CandidateList FindCandidates(const IncomingWorkload& in, const std::vector<FrId>& frs,
                             const QuotaTree& tree, const std::vector<ClusterQueueSpec>& cqs,
                             const std::vector<PreemptionCandidate>& admitted);

// Whether FindCandidates would find any: the same test, without building or sorting
// the list (flavor assignment asks this of every flavor it tries).
bool AnyCandidate(const IncomingWorkload& in, const std::vector<FrId>& frs, const QuotaTree& tree,
                  const std::vector<ClusterQueueSpec>& cqs,
                  const std::vector<PreemptionCandidate>& admitted);

// Kueue's GetTargets for classical preemption: the minimal target set, or empty.
// `tree` is changed while simulating and restored before returning.
std::vector<PreemptionTarget> ClassicalTargets(const IncomingWorkload& in, QuotaTree& tree,
                                               const std::vector<ClusterQueueSpec>& cqs,
                                               const std::vector<PreemptionCandidate>& admitted);

// Whether `in` fits its ClusterQueue now (Kueue's workloadFits).
bool WorkloadFits(const IncomingWorkload& in, const QuotaTree& tree,
                  const std::vector<ClusterQueueSpec>& cqs, bool allow_borrowing);

}  // namespace muster::admission
