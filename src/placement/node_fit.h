// Resource fit of one pod on one node, device and zone choice included, and the
// bookkeeping that charges or refunds a pod. Plan and Commit share these so a
// committed plan charges exactly what was planned.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "placement/node_info.h"

namespace muster::placement {

enum class FitFailure { kNone, kResources, kGpus, kNuma };

// Chooses devices (and a NUMA zone when the node's policy asks) for one pod into
// `out`, replacing what it held and reusing its storage (a search calls this for
// every node it visits). False with `why` set when it does not fit (`out` is then
// unspecified).
bool TryAllocate(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, PodAlloc& out,
                 FitFailure* why = nullptr);
// The same, returning a fresh allocation; nullopt when it does not fit.
std::optional<PodAlloc> TryAllocate(const NodeInfo& info, const NodeUsage& usage,
                                    const PodShape& shape, FitFailure* why = nullptr);

// True when `alloc` (devices and zone chosen earlier) still fits `usage`.
bool AllocStillFits(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape,
                    const PodAlloc& alloc);

// Per-zone amounts charged for one pod; kept with a bound pod so its refund is exact.
using ZoneCharges = std::vector<std::pair<int32_t, ResourceList>>;

// Charges a pod. Zone charges follow the pod's zone when aligned, else fill zones
// greedily starting with those holding its GPUs. Returns the zone charges made.
ZoneCharges Charge(const NodeInfo& info, NodeUsage& usage, const PodShape& shape,
                   const PodAlloc& alloc);
// Charges a pod as Charge does, leaving out the list of zone charges: for usage
// that is never refunded pod by pod (a plan's overlay, trial fits, Commit's
// validation copies), where building the list was an allocation or two per pod.
void ChargeUsage(const NodeInfo& info, NodeUsage& usage, const PodShape& shape,
                 const PodAlloc& alloc);
// Refunds what Charge charged.
void Refund(NodeUsage& usage, const PodShape& shape, const PodAlloc& alloc,
            const ZoneCharges& charges);

// How many pods of `shape` fit on the node, at most `cap` (simulated one by one,
// so NUMA and device constraints count exactly).
int32_t PodsFit(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, int32_t cap);

}  // namespace muster::placement
