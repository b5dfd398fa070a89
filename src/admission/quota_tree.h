// QuotaTree: Kueue's hierarchical quota accounting (ClusterQueues are leaves,
// Cohorts inner nodes) over dense (flavor, resource) indices. The recursion
// follows kueue pkg/cache/resource_node.go: a node keeps the part of its quota it
// does not lend (guaranteed = subtree - lendingLimit) for itself, lends the rest
// to its parent, and may borrow from the parent up to borrowingLimit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/resource_name.h"
#include "core/status.h"

namespace muster::admission {

using NodeId = int32_t;
using FrId = int32_t;  // dense index of one (flavor, resource) pair

// Amount per FrId, sorted by FrId (a workload's charged usage).
using FrAmounts = std::vector<std::pair<FrId, int64_t>>;

struct Quota {
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // nullopt = unlimited
  std::optional<int64_t> lending_limit;    // nullopt = lends everything
};

class QuotaTree {
 public:
  // Building: nodes, parents and quotas, then Finalize() once.
  NodeId AddNode(std::string name, bool cluster_queue);
  void SetParent(NodeId child, NodeId parent);
  FrId InternFr(int32_t flavor, ResourceId resource);
  std::optional<FrId> FindFr(int32_t flavor, ResourceId resource) const;
  void SetQuota(NodeId node, FrId fr, const Quota& quota);
  void Finalize();

  int32_t NodeCount() const { return static_cast<int32_t>(nodes_.size()); }
  int32_t FrCount() const { return static_cast<int32_t>(frs_.size()); }
  std::pair<int32_t, ResourceId> FrOf(FrId fr) const { return frs_[fr]; }
  const std::string& Name(NodeId n) const { return nodes_[n].name; }
  bool IsClusterQueue(NodeId n) const { return nodes_[n].cluster_queue; }
  bool HasParent(NodeId n) const { return parent_[n] >= 0; }
  NodeId Parent(NodeId n) const { return parent_[n]; }
  NodeId Root(NodeId n) const { return root_[n]; }
  const std::vector<NodeId>& Children(NodeId n) const { return nodes_[n].children; }

  const Quota& QuotaOf(NodeId n, FrId fr) const { return Cell(n, fr).quota; }
  int64_t SubtreeQuota(NodeId n, FrId fr) const { return Cell(n, fr).subtree; }
  int64_t Usage(NodeId n, FrId fr) const { return Cell(n, fr).usage; }
  // The part of the subtree quota the node keeps to itself (not lent).
  int64_t GuaranteedQuota(NodeId n, FrId fr) const { return Cell(n, fr).guaranteed; }

  // What the node can still use now (its own unlent part plus what the parent
  // can give it within borrowingLimit).
  int64_t Available(NodeId n, FrId fr) const;
  // What the node could use if nothing in the tree were used.
  int64_t PotentialAvailable(NodeId n, FrId fr) const;
  // Using `extra` more would exceed the node's own (subtree) quota.
  bool BorrowingWith(NodeId n, FrId fr, int64_t extra) const {
    return Usage(n, fr) + extra > SubtreeQuota(n, fr);
  }

  // A long-running server edited a node's quotas in place: `quotas` (every other
  // FrId of the node gets zero quota) replace its own, subtree quotas and the usage
  // held in cohorts are recomputed. FailedPrecondition, changing nothing, when what
  // is in use would no longer fit (CheckInvariants).
  Status ReplaceQuotas(NodeId n, const std::vector<std::pair<FrId, Quota>>& quotas);

  void AddUsage(NodeId n, FrId fr, int64_t amount);
  void RemoveUsage(NodeId n, FrId fr, int64_t amount);
  void AddUsage(NodeId n, const FrAmounts& amounts);
  void RemoveUsage(NodeId n, const FrAmounts& amounts);

  // Over-use at any node: usage above nominal+borrowingLimit at a ClusterQueue,
  // above subtree quota at a root, negative usage anywhere.
  std::vector<std::string> CheckInvariants() const;

 private:
  // What a cycle reads is kept apart from names and child lists: a (node, FrId)'s
  // usage, subtree and guaranteed quota and its own quota share one cache line, and
  // parents and roots are dense arrays. Quota checks walk from a ClusterQueue to its
  // root for every head; with a heap vector per node and field they missed the cache
  // at every step once a cluster had thousands of queues.
  struct Node {
    std::string name;
    bool cluster_queue = false;
    std::vector<NodeId> children;
  };
  struct alignas(64) FrCell {
    int64_t usage = 0;
    int64_t subtree = 0;     // SubtreeQuota
    int64_t guaranteed = 0;  // GuaranteedQuota: from subtree and lending limit
    Quota quota;             // own quota
  };
  const FrCell& Cell(NodeId n, FrId fr) const {
    return cells_[static_cast<size_t>(n) * frs_.size() + static_cast<size_t>(fr)];
  }
  FrCell& Cell(NodeId n, FrId fr) {
    return cells_[static_cast<size_t>(n) * frs_.size() + static_cast<size_t>(fr)];
  }
  void ComputeSubtree(NodeId n, std::vector<bool>& done);
  // A cohort's usage is what its children store in it (their usage beyond their
  // guaranteed part), recursively; ClusterQueues keep their own.
  void ComputeCohortUsage(NodeId n);

  std::vector<Node> nodes_;
  std::vector<NodeId> parent_;  // -1: a root
  std::vector<NodeId> root_;    // kept by SetParent
  std::vector<FrCell> cells_;   // by node, then FrId; sized by Finalize
  std::vector<std::pair<int32_t, ResourceId>> frs_;
  std::map<std::pair<int32_t, ResourceId>, FrId> fr_ids_;
  // Quotas set before Finalize sized the vectors.
  std::vector<std::vector<std::pair<FrId, Quota>>> pending_quota_;
};

}  // namespace muster::admission
