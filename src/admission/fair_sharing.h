// Fair sharing (Kueue pkg/cache dominant resource share and
// pkg/scheduler/preemption/fairsharing): a node's share (ClusterQueue or Cohort) is
// the largest fraction, per resource, of what its subtree borrows over what its
// parent can lend, divided by its fairSharing.weight. In a cohort tree, two queues
// are compared by the shares of their ancestors just below their lowest common
// ancestor, so a Cohort's weight scales its whole subtree. Admission prefers the
// lowest share after admission; preemption takes from the highest share.
#pragma once

#include <cstdint>
#include <vector>

#include "admission/cluster_queue.h"
#include "admission/preemptor.h"
#include "admission/quota_tree.h"
#include "model/config.h"

namespace muster::admission {

// Dominant resource share of `node` with `extra` added (per-mille of the lendable
// resource, divided by weight in milli-units, times 1000). 0 when not borrowing or
// without a parent; INT64_MAX with weight 0.
int64_t DominantResourceShare(const QuotaTree& tree, NodeId node, const FrAmounts& extra,
                              int64_t weight_milli, const FrAmounts& removed = {});

// Share of `node` once `usage` is charged at ClusterQueue node `leaf` (usage
// beyond what the leaf keeps for itself propagates up as the tree charges it).
// `sign` -1 uncharges `usage` instead. `weights` by NodeId, in milli-units.
int64_t ShareWith(QuotaTree& tree, const std::vector<int64_t>& weights, NodeId node, NodeId leaf,
                  const FrAmounts& usage, int sign = 1);

// Kueue's fairPreemptions over a cohort tree: target queues are picked by
// descending from the root into the child with the highest share; a candidate of
// another queue is taken when the strategy holds between the preemptor's and the
// target's ancestors below their lowest common ancestor (first strategy, then the
// second on what the first passed over). Empty when no set makes the workload fit.
std::vector<PreemptionTarget> FairSharingTargets(const IncomingWorkload& in, QuotaTree& tree,
                                                 const std::vector<ClusterQueueSpec>& cqs,
                                                 const std::vector<PreemptionCandidate>& admitted,
                                                 const model::FairSharingConfig& config,
                                                 const std::vector<int64_t>& weights);

}  // namespace muster::admission
