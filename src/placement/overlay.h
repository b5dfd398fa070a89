// Overlay: tentative usage on top of the cluster state. A plan charges pods (and a
// victim search refunds evicted workloads) here, copying a node's usage on first
// touch, so the real state is never changed and a plan costs O(nodes touched).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "placement/cluster_state.h"

namespace muster::placement {

class Overlay {
 public:
  explicit Overlay(const IndexedClusterState& base) : base_(&base) {}

  const IndexedClusterState& Base() const { return *base_; }
  const NodeUsage& Usage(NodeIndex i) const {
    auto it = slot_.find(i);
    return it == slot_.end() ? base_->Usage(i) : copies_[it->second];
  }
  NodeUsage& Mutable(NodeIndex i);
  bool Touched(NodeIndex i) const { return slot_.count(i) != 0; }
  // Nodes touched so far, in first-touch order (deterministic).
  const std::vector<NodeIndex>& TouchedNodes() const { return touched_; }

  // Tentatively unbinds every pod of a bound workload.
  void Evict(const std::string& workload_key);
  // Tentatively unbinds its pods whose index in pod set p is keep[p] or more.
  void EvictAbove(const std::string& workload_key, const std::vector<int32_t>& keep);
  // Free whole GPUs of a domain, the overlay's changes included.
  int64_t DomainFreeGpus(int32_t domain) const;

 private:
  const IndexedClusterState* base_;
  std::vector<NodeIndex> touched_;
  std::unordered_map<NodeIndex, size_t> slot_;  // lookups only; never iterated
  std::vector<NodeUsage> copies_;
};

}  // namespace muster::placement
