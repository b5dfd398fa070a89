// Volcano HyperNodes (topology.volcano.sh): tiers of network domains whose members
// are nodes (by exact name, regex or labels) or other HyperNodes. Resolved into
// sorted member node sets when the cluster is built, and again when a node joins,
// is relabelled or the HyperNodes change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/meta.h"
#include "model/volcano.h"

namespace muster::placement {

struct ResolvedHyperNode {
  std::string name;
  int32_t tier = 1;
  std::vector<int32_t> ranks;  // member nodes by name rank, ascending
};

struct NodeLabels {
  const std::string* name = nullptr;
  const model::StringMap* labels = nullptr;
};

// `nodes` is indexed by name rank. Output is sorted by (tier, name); a HyperNode
// membership cycle is cut where it is found.
std::vector<ResolvedHyperNode> ResolveHyperNodes(const std::vector<model::HyperNode>& hyper_nodes,
                                                 const std::vector<NodeLabels>& nodes);

}  // namespace muster::placement
