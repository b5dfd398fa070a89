// Per-node data the placement layer keeps: static facts (NodeInfo) and what bound
// pods use (NodeUsage), plus the resolved needs of one pod (PodShape) and the
// devices/zone chosen for it (PodAlloc). Plain data; logic lives in node_fit.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/resource_list.h"
#include "model/node.h"
#include "model/workload.h"

namespace muster::placement {

inline constexpr int32_t kMilliPerGpu = 1000;
// kubelet's default maxPods, used when a node does not report `pods`.
inline constexpr int64_t kDefaultMaxPods = 110;

ResourceId GpuMilliId();

struct GpuDevice {
  int32_t index = 0;
  int32_t numa_zone = -1;      // index into NodeInfo::zones, -1 = unknown
  int32_t nvlink_domain = -1;  // -1 = none known
};

struct ZoneInfo {
  std::string name;
  int32_t id = 0;
  ResourceList allocatable;   // zone-accounted resources other than GPUs
  std::vector<int32_t> gpus;  // device indices in this zone
};

// Static facts about a node, fixed when the cluster is built.
struct NodeInfo {
  model::Node node;
  int32_t name_rank = 0;     // position in name order: the deterministic tie-break
  ResourceList allocatable;  // pods defaulted; nvidia.com/gpu = device count
  std::vector<GpuDevice> gpus;
  std::vector<ZoneInfo> zones;
  model::TopologyManagerPolicy policy = model::TopologyManagerPolicy::kNone;
  model::TopologyManagerScope scope = model::TopologyManagerScope::kContainer;
  std::vector<ResourceId> zone_resources;  // non-GPU resources the zones account
  std::vector<int32_t> domains;            // topology domain ids holding this node
  // ScoringAllocatable(*this), set once built: scoring a node reads it in place.
  ResourceList scoring_allocatable;
};

// What bound (or tentatively planned) pods use on a node.
struct NodeUsage {
  ResourceList used;                    // node level, GPUs excluded (per device below)
  std::vector<int32_t> gpu_milli_used;  // per device, 0..kMilliPerGpu
  std::vector<ResourceList> zone_used;  // per zone, zone_resources only

  int32_t FreeWholeGpus() const;
  int64_t FreeGpuMilli() const;
};

// Node annotation listing each device's NVLink domain ("0,0,0,0,1,1,1,1").
inline constexpr const char* kNvlinkDomainsAnnotation = "muster.dev/nvlink-domains";

// A node's static facts from its object and its NodeResourceTopology (`topo`, or
// null): devices, NUMA zones, NVLink domains. name_rank and domains are the
// cluster's to set.
NodeInfo MakeNodeInfo(const model::Node& node, const model::NodeTopology* topo);

// Whether two infos describe the same resources: allocatable, devices, zones and the
// topology manager's policy (what a bound pod's charges were computed against).
bool SameResources(const NodeInfo& a, const NodeInfo& b);

// Fresh, empty usage sized for `info`.
NodeUsage EmptyUsage(const NodeInfo& info);

struct ContainerNeed {
  ResourceList requests;  // GPUs excluded
  int32_t gpus = 0;

  bool operator==(const ContainerNeed&) const = default;
};

// What one pod of a pod set needs, resolved once per plan.
struct PodShape {
  ResourceList requests;  // node level, GPUs excluded, pods = 1
  int32_t gpus = 0;       // whole devices
  int32_t gpu_milli = 0;  // fraction of one shared device (0 < milli < 1000), else 0
  std::vector<ContainerNeed> containers;  // for container-scope NUMA alignment

  int64_t TotalGpuMilli() const { return int64_t{gpus} * kMilliPerGpu + gpu_milli; }
  // Every field: NodeFitCache keys what it keeps on equal shapes.
  bool operator==(const PodShape&) const = default;
};

// Builds the shape from the pod set's effective requests. Whole multiples of
// gpu-milli become whole devices; containers come from the template.
PodShape MakePodShape(const model::PodSet& pod_set);

// Devices and zone chosen for one pod on one node.
struct PodAlloc {
  std::vector<int32_t> gpus;  // device indices, ascending
  int32_t numa_zone = -1;     // the single zone when aligned, else -1
  // Container scope: the zone each container was aligned to (-1 = not aligned),
  // so cpu/memory are charged where each container runs. Empty otherwise.
  std::vector<int32_t> container_zones;
};

// The node's resources as scorers see them: nvidia.com/gpu counts devices, and a
// partly shared device counts as used.
ResourceList ScoringAllocatable(const NodeInfo& info);
ResourceList ScoringUsed(const NodeInfo& info, const NodeUsage& usage);
ResourceList ScoringRequest(const PodShape& shape);
// The same into `out`, reusing its storage (the node search scores every node it
// visits; a fresh list per call was an allocation per node).
void ScoringAllocatableInto(const NodeInfo& info, ResourceList& out);
void ScoringUsedInto(const NodeUsage& usage, ResourceList& out);

}  // namespace muster::placement
