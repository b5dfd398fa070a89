// Domain-at-a-time search for gangs confined to one topology domain. Per-domain
// aggregates (nodes with >= k free GPUs, free cpu and memory), corrected for the
// plan's overlay, give an upper bound on how many pods of a shape each domain can
// take; a gang then scans only the nodes of the domains whose bound holds it,
// best fit first, instead of every node of the cluster.
#pragma once

#include <cstdint>
#include <vector>

#include "placement/node_info.h"
#include "placement/overlay.h"

namespace muster::placement {

struct DomainBound {
  int32_t domain = -1;
  int64_t pods = 0;  // at most this many pods of the shape fit in the domain
};

// Bounds for `domains` (ids of one level), keeping those whose bound is at least
// `count`, in the given order. Exact when GPUs, cpu or memory are what binds and
// every node passes the filters; otherwise an over-estimate the caller verifies by
// scanning the domain's nodes.
std::vector<DomainBound> DomainsThatMayHold(const Overlay& overlay,
                                            const std::vector<int32_t>& domains,
                                            const PodShape& shape, int32_t count);

// The largest bound below `count` among `domains` (for "why not" messages).
int64_t LargestDomainBoundBelow(const Overlay& overlay, const std::vector<int32_t>& domains,
                                const PodShape& shape, int32_t count);

}  // namespace muster::placement
