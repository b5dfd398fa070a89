// Kubelet Topology Manager semantics for one node: which NUMA zone(s) a pod's GPUs,
// cpus and memory come from under none / best-effort / restricted /
// single-numa-node, with pod or container scope.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "placement/node_info.h"

namespace muster::placement {

// Chooses devices and zone(s) for `shape` into `out` (replacing what it held; its
// storage is reused) on a node whose policy is not none. False when the policy
// rejects the pod: single-numa-node without a zone that fits, or restricted when
// the fewest zones that could ever satisfy it are not free now. Node-level resource
// fit is the caller's job.
bool AlignPod(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, PodAlloc& out);

// Free amount of zone-accounted resource `r` in zone `z`.
int64_t ZoneFree(const NodeInfo& info, const NodeUsage& usage, int32_t z, ResourceId r);

// Largest number of free whole GPUs in one zone (for "why not" messages).
int32_t LargestZoneFreeGpus(const NodeInfo& info, const NodeUsage& usage);

const char* PolicyName(model::TopologyManagerPolicy policy);

}  // namespace muster::placement
