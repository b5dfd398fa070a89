// Builders for placement tests: nodes, NUMA topologies and workloads made directly
// as model objects (no YAML).
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "placement/cluster_state.h"
#include "placement/placement.h"

namespace muster::placement::testing {

inline ResourceList Res(int64_t cpu_milli, int64_t mem_bytes, int64_t gpus, int64_t pods = 110) {
  ResourceList r;
  r.Set(kCpu, cpu_milli);
  r.Set(kMemory, mem_bytes);
  r.Set(kNvidiaGpu, gpus);
  r.Set(kPods, pods);
  return r;
}

inline constexpr int64_t kGi = int64_t{1} << 30;

inline model::Node MakeNode(const std::string& name, int64_t gpus, model::StringMap labels = {},
                            int64_t cpu = 64000, int64_t mem = 512 * kGi) {
  model::Node n;
  n.meta.name = name;
  n.meta.labels = std::move(labels);
  n.meta.labels["kubernetes.io/hostname"] = name;
  n.allocatable = Res(cpu, mem, gpus);
  return n;
}

// Two (or more) equal zones splitting cpu, memory and GPUs.
inline model::NodeTopology MakeNuma(const std::string& name, model::TopologyManagerPolicy policy,
                                    model::TopologyManagerScope scope, int zones,
                                    int64_t gpus_per_zone, int64_t cpu_per_zone = 32000,
                                    int64_t mem_per_zone = 256 * kGi) {
  model::NodeTopology t;
  t.meta.name = name;
  t.policy = policy;
  t.scope = scope;
  for (int z = 0; z < zones; ++z) {
    model::NumaZone zone;
    zone.name = "node-" + std::to_string(z);
    zone.id = z;
    zone.allocatable.Set(kCpu, cpu_per_zone);
    zone.allocatable.Set(kMemory, mem_per_zone);
    zone.allocatable.Set(kNvidiaGpu, gpus_per_zone);
    t.zones.push_back(zone);
  }
  return t;
}

inline model::PodSet MakePodSet(const std::string& name, int32_t count, int64_t gpus,
                                int64_t cpu_milli = 1000, int64_t mem = kGi) {
  model::PodSet ps;
  ps.name = name;
  ps.count = count;
  ps.min_count = count;
  ps.requests.Set(kCpu, cpu_milli);
  ps.requests.Set(kMemory, mem);
  ps.requests.Set(kNvidiaGpu, gpus);
  return ps;
}

inline model::Workload MakeWorkload(const std::string& key, std::vector<model::PodSet> sets) {
  model::Workload w;
  w.key = key;
  w.meta.name = key.substr(key.find('/') + 1);
  w.pod_sets = std::move(sets);
  w.min_available = w.TotalCount();
  return w;
}

inline std::unique_ptr<ClusterState> Build(const std::vector<model::Node>& nodes,
                                           const std::vector<model::NodeTopology>& numa = {},
                                           const std::vector<model::Topology>& topologies = {},
                                           const std::vector<model::HyperNode>& hyper = {}) {
  auto r = BuildClusterState(nodes, numa, topologies, hyper);
  return std::move(r).value();
}

inline PlacementRequest Request(const model::Workload& w) {
  PlacementRequest r;
  r.workload = &w;
  return r;
}

// The zone and rack label keys of the node change tests, and a Topology of both.
inline constexpr const char* kZone = "example.com/zone";
inline constexpr const char* kRack = "example.com/rack";

inline model::Topology ZoneRackTopology() {
  model::Topology t;
  t.meta.name = "default";
  t.levels = {kZone, kRack};
  return t;
}

// The default configuration's plan for w.
inline std::variant<GangPlan, PlacementFailure> PlanOn(const ClusterState& s,
                                                       const model::Workload& w) {
  return MakeGangPlanner(model::SchedulerConfiguration{})->Plan(s, Request(w));
}

}  // namespace muster::placement::testing
