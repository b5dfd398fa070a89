#include "placement/node_info.h"

#include <algorithm>
#include <map>

#include "core/quantity_bounds.h"

namespace muster::placement {

ResourceId GpuMilliId() {
  static const ResourceId kId = ResourceNames::Intern(kGpuMilliResourceName);
  return kId;
}

int32_t NodeUsage::FreeWholeGpus() const {
  int32_t n = 0;
  for (int32_t m : gpu_milli_used) n += (m == 0);
  return n;
}

int64_t NodeUsage::FreeGpuMilli() const {
  int64_t n = 0;
  for (int32_t m : gpu_milli_used) n += kMilliPerGpu - m;
  return n;
}

NodeUsage EmptyUsage(const NodeInfo& info) {
  NodeUsage u;
  u.gpu_milli_used.assign(info.gpus.size(), 0);
  u.zone_used.assign(info.zones.size(), ResourceList());
  return u;
}

namespace {

// Splits GPU amounts out of a request list into whole devices and a shared fraction.
void SplitGpus(ResourceList& requests, int32_t& gpus, int32_t& milli) {
  int64_t whole = requests.Get(kNvidiaGpu);
  int64_t m = requests.Get(GpuMilliId());
  requests.Set(kNvidiaGpu, 0);
  requests.Set(GpuMilliId(), 0);
  // Amounts are bounded where objects enter (core/quantity_bounds.h); clamp anyway so
  // that a count from elsewhere cannot wrap int32 into a negative device index. The
  // clamped request is still more than any node has: it stays unschedulable.
  whole = std::clamp<int64_t>(whole, 0, kMaxWholeUnits);
  m = std::clamp<int64_t>(m, 0, kMaxWholeUnits);
  if (m >= kMilliPerGpu) {
    // A request of a whole GPU or more cannot share a device: round up to devices.
    whole = std::min<int64_t>(whole + (m + kMilliPerGpu - 1) / kMilliPerGpu, kMaxWholeUnits);
    m = 0;
  }
  gpus = static_cast<int32_t>(whole);
  milli = static_cast<int32_t>(m);
}

}  // namespace

PodShape MakePodShape(const model::PodSet& pod_set) {
  PodShape s;
  s.requests = pod_set.requests;
  SplitGpus(s.requests, s.gpus, s.gpu_milli);
  s.requests.Set(kPods, 1);
  for (const auto& c : pod_set.tmpl.spec.containers) {
    // Limits stand in for missing requests, as Kubernetes defaults them.
    std::map<std::string, Quantity> q = c.limits;
    for (const auto& [k, v] : c.requests) q[k] = v;
    ContainerNeed need;
    need.requests = ResourceList::FromQuantities(q);
    int32_t milli = 0;
    SplitGpus(need.requests, need.gpus, milli);
    s.containers.push_back(std::move(need));
  }
  return s;
}

ResourceList ScoringAllocatable(const NodeInfo& info) {
  ResourceList r;
  ScoringAllocatableInto(info, r);
  return r;
}

ResourceList ScoringUsed(const NodeInfo& /*info*/, const NodeUsage& usage) {
  ResourceList r;
  ScoringUsedInto(usage, r);
  return r;
}

void ScoringAllocatableInto(const NodeInfo& info, ResourceList& out) {
  out = info.allocatable;
  out.Set(kNvidiaGpu, static_cast<int64_t>(info.gpus.size()));
}

void ScoringUsedInto(const NodeUsage& usage, ResourceList& out) {
  out = usage.used;
  int64_t busy = 0;
  for (int32_t m : usage.gpu_milli_used) busy += (m > 0);
  out.Set(kNvidiaGpu, busy);
}

ResourceList ScoringRequest(const PodShape& shape) {
  ResourceList r = shape.requests;
  r.Set(kNvidiaGpu, shape.gpus + (shape.gpu_milli > 0 ? 1 : 0));
  return r;
}

}  // namespace muster::placement
