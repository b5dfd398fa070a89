// The node half of the scheduler view: each node's place in the topology, its GPUs
// and NUMA zones, and the workload holding each.
#include <algorithm>
#include <set>

#include "control/scheduler_view_parts.h"
#include "placement/cluster_state.h"

namespace muster::control {
namespace {

// The label keys that say where a node sits, outermost first: the levels of the
// first Kueue Topology (by name) without the per-host level; without one, labels
// naming a block and then a rack (topology.kubernetes.io/rack, cloud.x/topology-block).
std::vector<std::string> GroupingKeys(const model::ManifestSet* config,
                                      const placement::ClusterState& cluster) {
  std::vector<std::string> keys;
  if (config != nullptr && !config->topologies.empty()) {
    const model::Topology* first = &config->topologies.front();
    for (const auto& t : config->topologies) {
      if (t.meta.name < first->meta.name) first = &t;
    }
    for (const auto& level : first->levels) {
      if (level != "kubernetes.io/hostname") keys.push_back(level);
    }
    return keys;
  }
  std::set<std::string> blocks, racks;
  for (int32_t i = 0; i < cluster.NodeCount(); ++i) {
    if (cluster.NodeRemoved(i)) continue;
    for (const auto& [k, v] : cluster.GetNode(i).meta.labels) {
      if (k.ends_with("block")) blocks.insert(k);
      if (k.ends_with("rack")) racks.insert(k);
    }
  }
  if (!blocks.empty()) keys.push_back(*blocks.begin());
  if (!racks.empty()) keys.push_back(*racks.begin());
  return keys;
}

}  // namespace

std::vector<NodeView> BuildNodeViews(const engine::Engine& engine,
                                     const model::ManifestSet* config) {
  const placement::ClusterState& cluster = engine.cluster();
  const auto* indexed = dynamic_cast<const placement::IndexedClusterState*>(&cluster);
  std::vector<NodeView> views(cluster.NodeCount());
  for (int32_t i = 0; i < cluster.NodeCount(); ++i) {
    const model::Node& node = cluster.GetNode(i);
    NodeView& v = views[i];
    v.name = node.meta.name;
    v.ready = cluster.NodeReady(i);
    v.unschedulable = node.unschedulable;
    if (indexed == nullptr) {
      v.allocatable = ToAmounts(node.allocatable);
      v.used = ToAmounts(node.allocatable - cluster.Free(i));
      continue;
    }
    const placement::NodeInfo& info = indexed->Info(i);
    const placement::NodeUsage& usage = indexed->Usage(i);
    v.allocatable = ToAmounts(placement::ScoringAllocatable(info));
    v.used = ToAmounts(placement::ScoringUsed(info, usage));
    for (const auto& g : info.gpus) {
      GpuView gv;
      gv.index = g.index;
      gv.numa_zone = g.numa_zone;
      gv.nvlink_domain = g.nvlink_domain;
      if (static_cast<size_t>(g.index) < usage.gpu_milli_used.size()) {
        gv.milli_used = usage.gpu_milli_used[g.index];
      }
      v.gpus.push_back(std::move(gv));
    }
    for (size_t z = 0; z < info.zones.size(); ++z) {
      ZoneView zv;
      zv.name = info.zones[z].name;
      zv.allocatable = ToAmounts(info.zones[z].allocatable);
      if (z < usage.zone_used.size()) zv.used = ToAmounts(usage.zone_used[z]);
      zv.gpus = info.zones[z].gpus;
      if (!zv.gpus.empty()) zv.allocatable["nvidia.com/gpu"] = static_cast<int64_t>(zv.gpus.size());
      v.zones.push_back(std::move(zv));
    }
  }

  // Holders, from the placed gangs (records in engine order: deterministic).
  for (const auto& r : engine.workloads()) {
    if (!r.bound) continue;
    for (const auto& pod : r.plan.pods) {
      if (pod.node < 0 || pod.node >= cluster.NodeCount()) continue;
      NodeView& v = views[pod.node];
      v.workloads.push_back(r.key());
      const std::string pod_name = (pod.pod_set < static_cast<int32_t>(r.workload.pod_sets.size())
                                        ? r.workload.pod_sets[pod.pod_set].name
                                        : std::to_string(pod.pod_set)) +
                                   "-" + std::to_string(pod.index);
      for (int32_t g : pod.gpus) {
        if (g < 0 || static_cast<size_t>(g) >= v.gpus.size()) continue;
        GpuView& gv = v.gpus[g];
        if (gv.holder.empty()) {
          gv.holder = r.key();
          gv.pod = pod_name;
        }
      }
      std::set<int32_t> zones;
      if (pod.numa_zone >= 0) zones.insert(pod.numa_zone);
      for (int32_t z : pod.container_zones) {
        if (z >= 0) zones.insert(z);
      }
      for (int32_t g : pod.gpus) {
        if (g >= 0 && static_cast<size_t>(g) < v.gpus.size() && v.gpus[g].numa_zone >= 0) {
          zones.insert(v.gpus[g].numa_zone);
        }
      }
      for (int32_t z : zones) {
        if (static_cast<size_t>(z) < v.zones.size()) v.zones[z].holders.push_back(r.key());
      }
    }
  }
  const std::vector<std::string> keys = GroupingKeys(config, cluster);
  for (int32_t i = 0; i < cluster.NodeCount(); ++i) {
    NodeView& v = views[i];
    auto dedupe = [](std::vector<std::string>& list) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    };
    dedupe(v.workloads);
    for (auto& z : v.zones) dedupe(z.holders);
    const auto& labels = cluster.GetNode(i).meta.labels;
    for (const auto& key : keys) {
      auto it = labels.find(key);
      v.topology.emplace_back(key, it == labels.end() ? "" : it->second);
    }
  }
  // Removed nodes keep an index (and so a view until here) and nothing else.
  if (cluster.RemovedNodeCount() > 0) {
    std::vector<NodeView> live;
    live.reserve(views.size());
    for (int32_t i = 0; i < cluster.NodeCount(); ++i) {
      if (!cluster.NodeRemoved(i)) live.push_back(std::move(views[i]));
    }
    views = std::move(live);
  }
  std::sort(views.begin(), views.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return views;
}

}  // namespace muster::control
