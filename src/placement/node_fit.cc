#include "placement/node_fit.h"

#include <algorithm>

#include "placement/gpu_devices.h"
#include "placement/numa_aligner.h"

namespace muster::placement {
namespace {

// A plain loop, not ForEachNonZero: this runs for every node a search visits, and
// the std::function call per resource was the planner's largest single cost.
bool ResourcesFit(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape) {
  const auto n = static_cast<ResourceId>(shape.requests.size());
  for (ResourceId id = 0; id < n; ++id) {
    int64_t amount = shape.requests.Get(id);
    if (amount != 0 && usage.used.Get(id) + amount > info.allocatable.Get(id)) return false;
  }
  return true;
}

bool Aligned(const NodeInfo& info) {
  return info.policy != model::TopologyManagerPolicy::kNone && !info.zones.empty();
}

// Adds `take` of zone `z` to the charges, merging with an earlier entry.
void AddCharge(ZoneCharges& out, int32_t z, const ResourceList& take) {
  for (auto& [zone, rl] : out) {
    if (zone == z) {
      rl += take;
      return;
    }
  }
  out.emplace_back(z, take);
}

int64_t Charged(const ZoneCharges& out, int32_t z, ResourceId r) {
  for (const auto& [zone, rl] : out) {
    if (zone == z) return rl.Get(r);
  }
  return 0;
}

// Zone charges of one pod: everything to its zone when aligned; under container
// scope each aligned container's requests to that container's zone; whatever is
// left (unaligned containers, pod overhead) fills zones greedily, starting with
// those holding the pod's GPUs.
ZoneCharges ComputeZoneCharges(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape,
                               const PodAlloc& alloc) {
  ZoneCharges out;
  if (!Aligned(info) || info.zone_resources.empty()) return out;
  ResourceList need;
  for (ResourceId r : info.zone_resources) need.Set(r, shape.requests.Get(r));
  if (need.IsZero()) return out;
  if (alloc.numa_zone >= 0) {
    out.emplace_back(alloc.numa_zone, need);
    return out;
  }
  if (alloc.container_zones.size() == shape.containers.size()) {
    for (size_t c = 0; c < shape.containers.size(); ++c) {
      int32_t z = alloc.container_zones[c];
      if (z < 0 || z >= static_cast<int32_t>(info.zones.size())) continue;
      ResourceList take;
      for (ResourceId r : info.zone_resources) {
        int64_t t = std::min(need.Get(r), shape.containers[c].requests.Get(r));
        take.Set(r, t);
        need.Add(r, -t);
      }
      if (!take.IsZero()) AddCharge(out, z, take);
    }
  }
  if (need.IsZero()) return out;
  std::vector<int32_t> order;
  for (int32_t d : alloc.gpus) {
    int32_t z = info.gpus[d].numa_zone;
    if (z >= 0 && std::find(order.begin(), order.end(), z) == order.end()) order.push_back(z);
  }
  for (int32_t z = 0; z < static_cast<int32_t>(info.zones.size()); ++z) {
    if (std::find(order.begin(), order.end(), z) == order.end()) order.push_back(z);
  }
  for (int32_t z : order) {
    ResourceList take;
    for (ResourceId r : info.zone_resources) {
      int64_t free = ZoneFree(info, usage, z, r) - Charged(out, z, r);
      int64_t t = std::min(need.Get(r), std::max<int64_t>(0, free));
      take.Set(r, t);
      need.Add(r, -t);
    }
    if (!take.IsZero()) AddCharge(out, z, take);
  }
  return out;
}

}  // namespace

bool TryAllocate(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, PodAlloc& out,
                 FitFailure* why) {
  auto fail = [why](FitFailure f) {
    if (why != nullptr) *why = f;
    return false;
  };
  if (!ResourcesFit(info, usage, shape)) return fail(FitFailure::kResources);
  if (shape.gpus > usage.FreeWholeGpus()) return fail(FitFailure::kGpus);
  std::optional<int32_t> shared;
  if (shape.gpu_milli > 0) {
    shared = PickSharedDevice(info, usage, {}, shape.gpu_milli);
    if (!shared) return fail(FitFailure::kGpus);
  }
  if (Aligned(info)) {
    if (!AlignPod(info, usage, shape, out)) return fail(FitFailure::kNuma);
    if (why != nullptr) *why = FitFailure::kNone;
    return true;
  }
  out.numa_zone = -1;
  out.container_zones.clear();
  if (shape.gpu_milli > 0) {
    out.gpus.assign(1, *shared);
  } else if (!PickWholeDevices(info, usage, {}, shape.gpus, out.gpus)) {
    return fail(FitFailure::kGpus);
  }
  if (why != nullptr) *why = FitFailure::kNone;
  return true;
}

std::optional<PodAlloc> TryAllocate(const NodeInfo& info, const NodeUsage& usage,
                                    const PodShape& shape, FitFailure* why) {
  PodAlloc out;
  if (!TryAllocate(info, usage, shape, out, why)) return std::nullopt;
  return out;
}

bool AllocStillFits(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape,
                    const PodAlloc& alloc) {
  if (!ResourcesFit(info, usage, shape)) return false;
  const int32_t n = static_cast<int32_t>(info.gpus.size());
  int32_t expect = shape.gpu_milli > 0 ? 1 : shape.gpus;
  if (static_cast<int32_t>(alloc.gpus.size()) < expect) return false;
  for (size_t i = 0; i < alloc.gpus.size(); ++i) {
    int32_t d = alloc.gpus[i];
    if (d < 0 || d >= n) return false;
    if (i > 0 && alloc.gpus[i - 1] >= d) return false;  // ascending, no duplicates
    int32_t need = shape.gpu_milli > 0 ? shape.gpu_milli : kMilliPerGpu;
    if (usage.gpu_milli_used[d] + need > kMilliPerGpu) return false;
  }
  const auto zones = static_cast<int32_t>(info.zones.size());
  if (alloc.numa_zone >= 0) {
    if (alloc.numa_zone >= zones) return false;
    for (ResourceId r : info.zone_resources) {
      if (ZoneFree(info, usage, alloc.numa_zone, r) < shape.requests.Get(r)) return false;
    }
  } else if (!alloc.container_zones.empty()) {
    if (alloc.container_zones.size() != shape.containers.size()) return false;
    // Each zone must still hold the containers aligned to it.
    for (int32_t z = 0; z < zones; ++z) {
      for (ResourceId r : info.zone_resources) {
        int64_t sum = 0;
        for (size_t c = 0; c < shape.containers.size(); ++c) {
          if (alloc.container_zones[c] == z) sum += shape.containers[c].requests.Get(r);
        }
        if (sum > 0 && ZoneFree(info, usage, z, r) < sum) return false;
      }
    }
    for (int32_t z : alloc.container_zones) {
      if (z >= zones) return false;
    }
  }
  return true;
}

ZoneCharges Charge(const NodeInfo& info, NodeUsage& usage, const PodShape& shape,
                   const PodAlloc& alloc) {
  ZoneCharges charges = ComputeZoneCharges(info, usage, shape, alloc);
  for (const auto& [z, rl] : charges) usage.zone_used[z] += rl;
  usage.used += shape.requests;
  int32_t per_device = shape.gpu_milli > 0 ? shape.gpu_milli : kMilliPerGpu;
  for (int32_t d : alloc.gpus) usage.gpu_milli_used[d] += per_device;
  return charges;
}

void ChargeUsage(const NodeInfo& info, NodeUsage& usage, const PodShape& shape,
                 const PodAlloc& alloc) {
  if (alloc.numa_zone >= 0 && Aligned(info)) {
    // Everything to the pod's zone, as ComputeZoneCharges charges it, without
    // building the list.
    ResourceList& zone = usage.zone_used[alloc.numa_zone];
    for (ResourceId r : info.zone_resources) {
      const int64_t amount = shape.requests.Get(r);
      if (amount != 0) zone.Add(r, amount);
    }
  } else {
    for (const auto& [z, rl] : ComputeZoneCharges(info, usage, shape, alloc)) {
      usage.zone_used[z] += rl;
    }
  }
  usage.used += shape.requests;
  int32_t per_device = shape.gpu_milli > 0 ? shape.gpu_milli : kMilliPerGpu;
  for (int32_t d : alloc.gpus) usage.gpu_milli_used[d] += per_device;
}

void Refund(NodeUsage& usage, const PodShape& shape, const PodAlloc& alloc,
            const ZoneCharges& charges) {
  for (const auto& [z, rl] : charges) usage.zone_used[z] -= rl;
  usage.used -= shape.requests;
  int32_t per_device = shape.gpu_milli > 0 ? shape.gpu_milli : kMilliPerGpu;
  for (int32_t d : alloc.gpus) usage.gpu_milli_used[d] -= per_device;
}

int32_t PodsFit(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, int32_t cap) {
  if (cap <= 0) return 0;
  PodAlloc a;
  if (!TryAllocate(info, usage, shape, a)) return 0;
  if (cap == 1) return 1;
  NodeUsage scratch = usage;
  ChargeUsage(info, scratch, shape, a);
  int32_t n = 1;
  while (n < cap && TryAllocate(info, scratch, shape, a)) {
    ChargeUsage(info, scratch, shape, a);
    ++n;
  }
  return n;
}

}  // namespace muster::placement
