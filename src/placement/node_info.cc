#include "placement/node_info.h"

#include <algorithm>
#include <charconv>
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

namespace {

std::vector<int32_t> ParseNvlinkDomains(const model::Node& node) {
  std::vector<int32_t> out;
  auto it = node.meta.annotations.find(kNvlinkDomainsAnnotation);
  if (it == node.meta.annotations.end()) return out;
  const std::string& s = it->second;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    int32_t v = -1;
    std::from_chars(s.data() + pos, s.data() + comma, v);
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

}  // namespace

NodeInfo MakeNodeInfo(const model::Node& node, const model::NodeTopology* topo) {
  NodeInfo info;
  info.node = node;
  info.allocatable = node.allocatable;
  // Devices are tracked one by one; the node-level list keeps no GPU amounts.
  // Placement keeps a record per device: a node reporting more than a node can hold
  // (bounded on input, core/quantity_bounds.h; clamped here for nodes from elsewhere)
  // must not allocate without bound.
  const int32_t gpu_count = static_cast<int32_t>(
      std::clamp<int64_t>(info.allocatable.Get(kNvidiaGpu), 0, kMaxDevicesPerNode));
  info.allocatable.Set(kNvidiaGpu, 0);
  info.allocatable.Set(GpuMilliId(), 0);
  if (info.allocatable.Get(kPods) == 0) info.allocatable.Set(kPods, kDefaultMaxPods);
  for (int32_t d = 0; d < gpu_count; ++d) info.gpus.push_back(GpuDevice{d, -1, -1});
  if (topo != nullptr) {
    info.policy = topo->policy;
    info.scope = topo->scope;
    int32_t next = 0;
    for (const auto& z : topo->zones) {
      ZoneInfo zi;
      zi.name = z.name;
      zi.id = z.id;
      int64_t zone_gpus = z.allocatable.Get(kNvidiaGpu);
      for (int64_t k = 0; k < zone_gpus && next < gpu_count; ++k, ++next) {
        info.gpus[next].numa_zone = static_cast<int32_t>(info.zones.size());
        zi.gpus.push_back(next);
      }
      zi.allocatable = z.allocatable;
      zi.allocatable.Set(kNvidiaGpu, 0);
      zi.allocatable.ForEachNonZero([&](ResourceId id, int64_t) {
        if (std::find(info.zone_resources.begin(), info.zone_resources.end(), id) ==
            info.zone_resources.end()) {
          info.zone_resources.push_back(id);
        }
      });
      info.zones.push_back(std::move(zi));
    }
    std::sort(info.zone_resources.begin(), info.zone_resources.end());
  }
  std::vector<int32_t> nvlink = ParseNvlinkDomains(node);
  if (nvlink.size() == info.gpus.size()) {
    for (size_t d = 0; d < nvlink.size(); ++d) info.gpus[d].nvlink_domain = nvlink[d];
  }
  ScoringAllocatableInto(info, info.scoring_allocatable);
  return info;
}

bool SameResources(const NodeInfo& a, const NodeInfo& b) {
  auto same_device = [](const GpuDevice& x, const GpuDevice& y) {
    return x.index == y.index && x.numa_zone == y.numa_zone && x.nvlink_domain == y.nvlink_domain;
  };
  auto same_zone = [](const ZoneInfo& x, const ZoneInfo& y) {
    return x.name == y.name && x.id == y.id && x.allocatable == y.allocatable && x.gpus == y.gpus;
  };
  return a.allocatable == b.allocatable && a.policy == b.policy && a.scope == b.scope &&
         a.zone_resources == b.zone_resources &&
         std::equal(a.gpus.begin(), a.gpus.end(), b.gpus.begin(), b.gpus.end(), same_device) &&
         std::equal(a.zones.begin(), a.zones.end(), b.zones.begin(), b.zones.end(), same_zone);
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
