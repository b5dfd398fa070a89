// Nodes joining, changing and leaving in place (a long-running server). A change of
// labels alone updates the label index; a node that joins or leaves, or whose
// resources (allocatable, devices, NUMA zones, NVLink domains) or topology-domain
// labels change (any label while HyperNodes exist: they select by label), is put in
// place (or marked removed) and the indexes are rebuilt from the nodes and what is
// bound on them, HyperNodes resolved again: no node moves to another index, so bound
// pods, plans and nominations stay valid.
#include <algorithm>
#include <string>
#include <utility>

#include "placement/cluster_state.h"
#include "placement/node_filter.h"

namespace muster::placement {

Result<NodeIndex> IndexedClusterState::AddNode(const model::Node& node,
                                               const model::NodeTopology* numa) {
  if (by_name_.count(node.meta.name) != 0) {
    return AlreadyExists("node " + node.meta.name + " already exists");
  }
  const auto i = static_cast<NodeIndex>(infos_.size());
  infos_.push_back(MakeNodeInfo(node, numa));
  usage_.push_back(EmptyUsage(infos_.back()));
  ready_.push_back(true);
  removed_.push_back(false);
  pods_on_node_.emplace_back();
  // Ranks are name order: the new node's and every later one's move up by one.
  int32_t rank = 0;
  for (NodeIndex j = 0; j < i; ++j) {
    if (infos_[j].node.meta.name < node.meta.name) {
      ++rank;
    } else {
      ++infos_[j].name_rank;
    }
  }
  infos_[i].name_rank = rank;
  Reindex(HyperNodesNow());  // a HyperNode may select it by name or label
  return i;
}

Status IndexedClusterState::UpdateNode(NodeIndex i, const model::Node& node,
                                       const model::NodeTopology* numa) {
  if (i < 0 || i >= NodeCount()) return InvalidArgument("no node index " + std::to_string(i));
  if (removed_[i]) return NotFound("node " + infos_[i].node.meta.name + " was removed");
  const model::Node& old = infos_[i].node;
  auto refuse = [&](const std::string& what) {
    return FailedPrecondition("node " + old.meta.name + ": " + what +
                              " changed; the cluster is rebuilt");
  };
  if (node.meta.name != old.meta.name) return refuse("name");
  NodeInfo fresh = MakeNodeInfo(node, numa);
  const bool resources_changed = !SameResources(infos_[i], fresh);
  bool domains_changed = false;
  const bool labels_changed = node.meta.labels != old.meta.labels;
  if (labels_changed) {
    // Domains are made of labels: a HyperNode may select its members by any label
    // (resolved again), a Topology by its levels' labels.
    domains_changed = !hyper_node_specs_.empty();
    auto value = [](const model::Node& n, const std::string& key) -> const std::string* {
      auto it = n.meta.labels.find(key);
      return it == n.meta.labels.end() ? nullptr : &it->second;
    };
    for (const auto& t : topologies_) {
      for (const auto& level : t.levels) {
        const std::string* a = value(node, level);
        const std::string* b = value(old, level);
        if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) {
          domains_changed = true;
        }
      }
    }
  }
  if (resources_changed || domains_changed) {
    return ReplaceNode(i, std::move(fresh), resources_changed);
  }
  const int32_t rank = infos_[i].name_rank;
  if (labels_changed) {
    may_fit_epoch_ = DrawNodeVersion();  // its lists change
    // The label index holds ranks in ascending order per (key, value).
    for (const auto& [k, v] : old.meta.labels) {
      auto it = node.meta.labels.find(k);
      if (it != node.meta.labels.end() && it->second == v) continue;
      auto& values = labels_[k];
      auto& ranks = values[v];
      ranks.erase(std::lower_bound(ranks.begin(), ranks.end(), rank));
      if (ranks.empty()) values.erase(v);
      if (values.empty()) labels_.erase(k);
    }
    for (const auto& [k, v] : node.meta.labels) {
      auto it = old.meta.labels.find(k);
      if (it != old.meta.labels.end() && it->second == v) continue;
      auto& ranks = labels_[k][v];
      ranks.insert(std::lower_bound(ranks.begin(), ranks.end(), rank), rank);
    }
  }
  infos_[i].node = std::move(fresh.node);  // a copy of `node` already
  version_[i] = DrawNodeVersion();
  if (!ready_[i] || MayFilterWithoutLabels(infos_[i].node)) {
    maybe_filtered_.insert(rank);
  } else {
    maybe_filtered_.erase(rank);
  }
  return Status::Ok();
}

Status IndexedClusterState::RemoveNode(NodeIndex i) {
  if (i < 0 || i >= NodeCount()) return InvalidArgument("no node index " + std::to_string(i));
  const std::string& name = infos_[i].node.meta.name;
  if (removed_[i]) return NotFound("node " + name + " was removed already");
  if (!pods_on_node_[i].empty()) {
    return FailedPrecondition("node " + name + " still has pods of " + WorkloadsOnNode(i)[0] +
                              " bound");
  }
  // The index and rank stay taken (a tombstone) so no other node moves; a fresh
  // build (the reconciler's, once tombstones pile up) drops them.
  removed_[i] = true;
  ++removed_count_;
  ready_[i] = false;
  Reindex(HyperNodesNow());
  return Status::Ok();
}

Status IndexedClusterState::ReplaceNode(NodeIndex i, NodeInfo fresh, bool resources_changed) {
  fresh.name_rank = infos_[i].name_rank;
  NodeUsage usage = usage_[i];
  // The node's pods are charged again against its new resources; one that no longer
  // fits (the node shrank under it) leaves everything as it was: the rebuild decides.
  std::vector<std::pair<BoundPod*, ZoneCharges>> charges;
  if (resources_changed) {
    usage = EmptyUsage(fresh);
    for (const auto& [key, count] : pods_on_node_[i]) {
      for (BoundPod& pod : bound_.find(*key)->second) {
        if (pod.node != i) continue;
        if (!AllocStillFits(fresh, usage, pod.shape, pod.alloc)) {
          return FailedPrecondition("node " + fresh.node.meta.name + ": the pods of " + *key +
                                    " no longer fit its resources; the cluster is rebuilt");
        }
        charges.emplace_back(&pod, Charge(fresh, usage, pod.shape, pod.alloc));
      }
    }
  }
  for (auto& [pod, charged] : charges) pod->charges = std::move(charged);
  infos_[i] = std::move(fresh);
  usage_[i] = std::move(usage);
  Reindex(HyperNodesNow());
  return Status::Ok();
}

Status IndexedClusterState::SetHyperNodes(const std::vector<model::HyperNode>& hyper_nodes) {
  hyper_node_specs_ = hyper_nodes;
  Reindex(HyperNodesNow());
  return Status::Ok();
}

std::vector<ResolvedHyperNode> IndexedClusterState::HyperNodesNow() const {
  if (hyper_node_specs_.empty()) return {};
  // By name rank, as the ranks are now (AddNode moves them before it reindexes);
  // a removed node may match and is filtered out by Reindex.
  std::vector<NodeLabels> by_rank(infos_.size());
  for (const NodeInfo& info : infos_) {
    by_rank[info.name_rank] = NodeLabels{&info.node.meta.name, &info.node.meta.labels};
  }
  return ResolveHyperNodes(hyper_node_specs_, by_rank);
}

}  // namespace muster::placement
