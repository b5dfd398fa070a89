// Nodes and their NUMA topology (NodeResourceTopology).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"
#include "model/meta.h"
#include "model/pod.h"

namespace muster::model {

enum class TopologyManagerPolicy { kNone, kBestEffort, kRestricted, kSingleNumaNode };
enum class TopologyManagerScope { kContainer, kPod };

struct NumaZone {
  std::string name;  // "node-0"
  int id = 0;        // parsed from the name's trailing number, else the zone's index
  ResourceList allocatable;
  std::map<std::string, int64_t> costs;  // distance to other zones by name
};

// topology.node.k8s.io/v1alpha2 NodeResourceTopology; name equals the Node's.
struct NodeTopology {
  ObjectMeta meta;
  TopologyManagerPolicy policy = TopologyManagerPolicy::kNone;
  TopologyManagerScope scope = TopologyManagerScope::kContainer;
  std::vector<NumaZone> zones;
};

// Simulation annotations on a Node (CONTRACT section 1), seconds from 0.
struct NodeSimEvents {
  std::optional<double> fail_at;
  std::optional<double> recover_at;
  std::optional<double> reclaim_at;
};

struct Node {
  ObjectMeta meta;
  ResourceList allocatable;  // status.allocatable, else status.capacity
  std::vector<Taint> taints;
  bool unschedulable = false;
  NodeSimEvents sim;
};

}  // namespace muster::model
