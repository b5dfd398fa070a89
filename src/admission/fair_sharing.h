// Fair sharing (Kueue pkg/cache dominant resource share and
// pkg/scheduler/preemption/fairsharing): a ClusterQueue's share is the largest
// fraction, per resource, of what it borrows over what its cohort can lend,
// divided by its fairSharing.weight. Admission prefers the lowest share after
// admission; preemption takes from the queues with the highest share.
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

// Kueue's fairPreemptions: strategies in order; targets from the queue with the
// highest share first. Empty when no set makes the workload fit.
std::vector<PreemptionTarget> FairSharingTargets(const IncomingWorkload& in, QuotaTree& tree,
                                                 const std::vector<ClusterQueueSpec>& cqs,
                                                 const std::vector<PreemptionCandidate>& admitted,
                                                 const model::FairSharingConfig& config);

}  // namespace muster::admission
