#include "placement/numa_aligner.h"

#include <algorithm>
#include <array>
#include <bit>
#include <span>

#include "placement/gpu_devices.h"

namespace muster::placement {
namespace {

using Policy = model::TopologyManagerPolicy;

// What one alignment unit (the pod, or one container) needs from zones. Only the
// node's zone-accounted resources of `requests` are read, so it points at the
// pod's or container's list instead of copying them (this runs for every node a
// search visits).
struct Need {
  const ResourceList& requests;
  int32_t gpus = 0;
  int32_t gpu_milli = 0;
};

// `free_devices`: CountFreeDevices of zone `z`, counted once by the caller.
bool ZoneFits(const NodeInfo& info, const NodeUsage& usage, int32_t z, const Need& need,
              int32_t free_devices) {
  for (ResourceId r : info.zone_resources) {
    if (ZoneFree(info, usage, z, r) < need.requests.Get(r)) return false;
  }
  if (free_devices < need.gpus) return false;
  if (need.gpu_milli > 0 &&
      !PickSharedDevice(info, usage, std::span<const int32_t>(&z, 1), need.gpu_milli)) {
    return false;
  }
  return true;
}

std::vector<int32_t> ZonesOf(uint32_t mask) {
  std::vector<int32_t> zones;
  for (int32_t z = 0; mask != 0; ++z, mask >>= 1) {
    if (mask & 1u) zones.push_back(z);
  }
  return zones;
}

// Whether the zones in `mask` together cover `need`, from free (now) or
// allocatable (an empty node) amounts.
bool SubsetCovers(const NodeInfo& info, const NodeUsage& usage, uint32_t mask, const Need& need,
                  bool use_free) {
  std::vector<int32_t> zones = ZonesOf(mask);
  for (ResourceId r : info.zone_resources) {
    int64_t sum = 0;
    for (int32_t z : zones) {
      sum += use_free ? ZoneFree(info, usage, z, r) : info.zones[z].allocatable.Get(r);
    }
    if (sum < need.requests.Get(r)) return false;
  }
  int32_t devices = 0;
  for (int32_t z : zones) {
    devices += use_free ? CountFreeDevices(info, usage, z)
                        : static_cast<int32_t>(info.zones[z].gpus.size());
  }
  if (devices < need.gpus) return false;
  if (need.gpu_milli > 0 && use_free && !PickSharedDevice(info, usage, zones, need.gpu_milli)) {
    return false;
  }
  return true;
}

// Fills in devices for `need` from `zones`; false if they are not free.
bool TakeDevices(const NodeInfo& info, const NodeUsage& usage, std::span<const int32_t> zones,
                 const Need& need, PodAlloc& out) {
  if (need.gpu_milli == 0 && need.gpus <= 0) return true;  // no devices to take
  if (need.gpu_milli > 0) {
    auto d = PickSharedDevice(info, usage, zones, need.gpu_milli);
    if (!d) return false;
    out.gpus.assign(1, *d);
    return true;
  }
  return PickWholeDevices(info, usage, zones, need.gpus, out.gpus);
}

// Chooses zone(s) and devices for one unit into `out` (reset first, its storage
// reused); false when the policy rejects it.
bool AlignUnit(const NodeInfo& info, const NodeUsage& usage, const Need& need, PodAlloc& out) {
  out.gpus.clear();
  out.numa_zone = -1;
  out.container_zones.clear();
  const int32_t zone_count = static_cast<int32_t>(info.zones.size());
  // 1. One zone: the fitting zone with the fewest free devices, so emptier zones
  //    stay whole for larger pods.
  // Free whole devices per zone, counted in one pass over the node's devices
  // (CountFreeDevices per zone walks them all for each zone).
  constexpr int32_t kCountedZones = 16;
  std::array<int32_t, kCountedZones> zone_free{};
  if (zone_count <= kCountedZones) {
    for (const auto& d : info.gpus) {
      if (d.numa_zone >= 0 && d.numa_zone < zone_count && usage.gpu_milli_used[d.index] == 0) {
        ++zone_free[d.numa_zone];
      }
    }
  }
  int32_t best = -1;
  int32_t best_free = 0;
  for (int32_t z = 0; z < zone_count; ++z) {
    const int32_t free =
        zone_count <= kCountedZones ? zone_free[z] : CountFreeDevices(info, usage, z);
    if (!ZoneFits(info, usage, z, need, free)) continue;
    if (best < 0 || free < best_free) {
      best = z;
      best_free = free;
    }
  }
  if (best >= 0) {
    out.numa_zone = best;
    return TakeDevices(info, usage, std::span<const int32_t>(&best, 1), need, out);
  }
  if (info.policy == Policy::kSingleNumaNode) return false;
  // best-effort: admitted anyway, unaligned.
  if (info.policy == Policy::kBestEffort) return TakeDevices(info, usage, {}, need, out);
  // restricted: the preferred hint is the narrowest mask that could satisfy the
  // request on an empty node; the pod is admitted only if such a mask is free now.
  if (zone_count > 16) return false;
  const uint32_t limit = 1u << zone_count;
  int32_t k_min = 0;
  for (uint32_t mask = 1; mask < limit; ++mask) {
    int32_t k = std::popcount(mask);
    if ((k_min == 0 || k < k_min) && SubsetCovers(info, usage, mask, need, false)) k_min = k;
  }
  if (k_min <= 1) return false;  // alignable in principle, just not now
  for (uint32_t mask = 1; mask < limit; ++mask) {
    if (std::popcount(mask) != k_min || !SubsetCovers(info, usage, mask, need, true)) continue;
    if (TakeDevices(info, usage, ZonesOf(mask), need, out)) return true;
  }
  return false;
}

}  // namespace

int64_t ZoneFree(const NodeInfo& info, const NodeUsage& usage, int32_t z, ResourceId r) {
  return info.zones[z].allocatable.Get(r) - usage.zone_used[z].Get(r);
}

int32_t LargestZoneFreeGpus(const NodeInfo& info, const NodeUsage& usage) {
  int32_t best = 0;
  for (int32_t z = 0; z < static_cast<int32_t>(info.zones.size()); ++z) {
    best = std::max(best, CountFreeDevices(info, usage, z));
  }
  return best;
}

const char* PolicyName(model::TopologyManagerPolicy policy) {
  switch (policy) {
    case Policy::kNone:
      return "none";
    case Policy::kBestEffort:
      return "best-effort";
    case Policy::kRestricted:
      return "restricted";
    case Policy::kSingleNumaNode:
      return "single-numa-node";
  }
  return "none";
}

bool AlignPod(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, PodAlloc& out) {
  bool container_scope = info.scope == model::TopologyManagerScope::kContainer &&
                         !shape.containers.empty() && shape.gpu_milli == 0;
  if (!container_scope) {
    return AlignUnit(info, usage, Need{shape.requests, shape.gpus, shape.gpu_milli}, out);
  }
  // Container scope: each container is aligned on its own; later containers see the
  // earlier ones' devices and zone charges.
  NodeUsage scratch = usage;
  out.gpus.clear();
  out.numa_zone = -1;
  out.container_zones.clear();
  PodAlloc a;
  bool first = true;
  bool same_zone = true;
  for (const auto& c : shape.containers) {
    Need need{c.requests, c.gpus, 0};
    if (!AlignUnit(info, scratch, need, a)) return false;
    for (int32_t d : a.gpus) scratch.gpu_milli_used[d] = kMilliPerGpu;
    if (a.numa_zone >= 0) {
      for (ResourceId r : info.zone_resources) {
        scratch.zone_used[a.numa_zone].Add(r, need.requests.Get(r));
      }
    } else {
      // Unaligned (best-effort): its cpu/memory come from its GPUs' zones first,
      // as Charge will take them, so later containers see what is left.
      std::vector<int32_t> order;
      for (int32_t d : a.gpus) {
        int32_t z = info.gpus[d].numa_zone;
        if (z >= 0 && std::find(order.begin(), order.end(), z) == order.end()) order.push_back(z);
      }
      for (int32_t z = 0; z < static_cast<int32_t>(info.zones.size()); ++z) {
        if (std::find(order.begin(), order.end(), z) == order.end()) order.push_back(z);
      }
      for (ResourceId r : info.zone_resources) {
        int64_t left = need.requests.Get(r);
        for (int32_t z : order) {
          int64_t t = std::min(left, std::max<int64_t>(0, ZoneFree(info, scratch, z, r)));
          scratch.zone_used[z].Add(r, t);
          left -= t;
        }
      }
    }
    if (first) {
      out.numa_zone = a.numa_zone;
      first = false;
    } else if (a.numa_zone != out.numa_zone) {
      same_zone = false;
    }
    out.container_zones.push_back(a.numa_zone);
    out.gpus.insert(out.gpus.end(), a.gpus.begin(), a.gpus.end());
  }
  if (!same_zone) {
    out.numa_zone = -1;
  } else {
    out.container_zones.clear();  // one zone holds the whole pod
  }
  // Shape GPUs beyond the containers' (none in practice) come from anywhere.
  int32_t extra = shape.gpus - static_cast<int32_t>(out.gpus.size());
  if (extra > 0) {
    for (int32_t d : out.gpus) scratch.gpu_milli_used[d] = kMilliPerGpu;
    std::vector<int32_t> more;
    if (!PickWholeDevices(info, scratch, {}, extra, more)) return false;
    out.gpus.insert(out.gpus.end(), more.begin(), more.end());
  }
  std::sort(out.gpus.begin(), out.gpus.end());
  return true;
}

}  // namespace muster::placement
