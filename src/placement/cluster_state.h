// IndexedClusterState: the ClusterState implementation. Besides nodes and what is
// bound where, it keeps the indexes a gang search needs: nodes bucketed by free
// whole GPUs, a label index, and free GPUs per topology domain (Kueue TAS label
// domains and Volcano HyperNodes), all updated in O(pods) on Commit/Release.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "placement/free_capacity_index.h"
#include "placement/hyper_nodes.h"
#include "placement/node_fit.h"
#include "placement/node_info.h"
#include "placement/placement.h"
#include "placement/topology_domains.h"

namespace muster::placement {

struct BoundPod {
  int32_t pod_set = 0;
  int32_t index = 0;
  NodeIndex node = -1;
  PodShape shape;
  PodAlloc alloc;
  ZoneCharges charges;
};

class IndexedClusterState final : public ClusterState {
 public:
  // `hyper_node_specs` are kept to resolve HyperNode membership again when nodes
  // join or change labels.
  IndexedClusterState(std::vector<NodeInfo> infos, std::vector<model::Topology> topologies,
                      std::vector<model::HyperNode> hyper_node_specs);
  // Not copyable: pods_on_node_ points at bound_'s keys.
  IndexedClusterState(const IndexedClusterState&) = delete;
  IndexedClusterState& operator=(const IndexedClusterState&) = delete;

  int32_t NodeCount() const override { return static_cast<int32_t>(infos_.size()); }
  const model::Node& GetNode(NodeIndex i) const override { return infos_[i].node; }
  std::optional<NodeIndex> FindNode(const std::string& name) const override;
  ResourceList Free(NodeIndex i) const override;
  Status Commit(const GangPlan& plan, const model::Workload& workload) override;
  void Release(const std::string& workload_key) override;
  Status ReleaseAbove(const std::string& workload_key, const std::vector<int32_t>& keep) override;
  void SetNodeReady(NodeIndex i, bool ready) override;
  Status UpdateNode(NodeIndex i, const model::Node& node, const model::NodeTopology* numa) override;
  Result<NodeIndex> AddNode(const model::Node& node, const model::NodeTopology* numa) override;
  Status RemoveNode(NodeIndex i) override;
  Status SetHyperNodes(const std::vector<model::HyperNode>& hyper_nodes) override;
  bool NodeRemoved(NodeIndex i) const override { return removed_[i]; }
  int32_t RemovedNodeCount() const override { return removed_count_; }
  bool NodeReady(NodeIndex i) const override { return ready_[i]; }
  std::vector<std::string> WorkloadsOnNode(NodeIndex i) const override;
  std::vector<std::string> CheckInvariants() const override;

  // --- read by the planner ---
  const NodeInfo& Info(NodeIndex i) const { return infos_[i]; }
  const NodeUsage& Usage(NodeIndex i) const { return usage_[i]; }
  // Drawn anew, from one counter for the whole process (so never equal across
  // states), whenever anything a fit check or scorer reads of node i changes: its
  // usage, its info, its readiness. NodeFitCache keys on it.
  uint64_t NodeVersion(NodeIndex i) const { return version_[i]; }
  // Drawn anew, from the same counter, whenever a node may newly pass the free
  // index's MayFit (its free capacity rose) and whenever the label index's lists
  // change. While it holds, a node that failed MayFit still fails it and a label
  // list is the same list: NodeFitCache keeps a narrowed search's walk on it.
  uint64_t MayFitEpoch() const { return may_fit_epoch_; }
  NodeIndex NodeAtRank(int32_t rank) const { return by_rank_[rank]; }
  int32_t MaxGpusPerNode() const { return max_gpus_; }
  // Nodes bucketed by free whole GPUs (0..MaxGpusPerNode()), with each node's free
  // cpu and memory, to skip full nodes; the buckets' ranks and sizes too.
  const FreeCapacityIndex& FreeIndex() const { return free_index_; }
  // Ranks of the nodes a pod may be filtered from without asking for any label:
  // not ready, unschedulable, or with a NoSchedule/NoExecute taint. Every other node
  // passes FilterNode for a pod with no node selector and no required affinity.
  const std::set<int32_t>& MaybeFilteredRanks() const { return maybe_filtered_; }
  // Ranks of nodes carrying label key=value (ascending), or null.
  const std::vector<int32_t>* NodesWithLabel(const std::string& key,
                                             const std::string& value) const;
  const DomainIndex& Domains() const { return domains_; }
  int64_t DomainFreeGpus(int32_t domain) const { return domain_free_gpus_[domain]; }
  // Nodes of a domain with at least `k` free whole GPUs (0 <= k <= MaxGpusPerNode()).
  int32_t DomainNodesWithFreeGpus(int32_t domain, int32_t k) const {
    return domain_nodes_ge_[static_cast<size_t>(domain) * (max_gpus_ + 1) + k];
  }
  // Free cpu (milli) and memory (bytes) summed over a domain's nodes.
  int64_t DomainFreeCpu(int32_t domain) const { return domain_free_cpu_[domain]; }
  int64_t DomainFreeMemory(int32_t domain) const { return domain_free_mem_[domain]; }
  // Label domains of one label key (a Topology level), in label-value order.
  const std::vector<int32_t>& LevelDomains(const std::string& label_key) const;
  // Kueue Topologies, sorted by name.
  const std::vector<model::Topology>& Topologies() const { return topologies_; }
  // Node's label values for Topology `t`'s levels ("" where a label is missing).
  const std::vector<std::string>& TopologyPath(NodeIndex i, int32_t t) const {
    return paths_[t][i];
  }
  // HyperNode domain ids, sorted by (tier, name).
  const std::vector<int32_t>& HyperNodeDomains() const { return hyper_node_domains_; }
  // Pods bound for a workload, or null.
  const std::vector<BoundPod>* Bound(const std::string& workload_key) const;

 private:
  // Builds every index (ranks, free-GPU buckets, labels, topology paths, domains and
  // their free aggregates) from infos_, usage_ and ready_, pods bound or not; removed
  // nodes keep their rank and are left out of everything else. O(nodes x labels): at
  // construction, when a node is added or removed and when its resources or topology
  // labels change.
  void Reindex(std::vector<ResolvedHyperNode> hyper_nodes);
  // Puts `fresh` in node i's place (its pods charged again when its resources
  // changed) and rebuilds the indexes; refused, changing nothing, where a bound pod
  // no longer fits.
  Status ReplaceNode(NodeIndex i, NodeInfo fresh, bool resources_changed);
  // The HyperNodes resolved against the nodes as they are now (Reindex's input):
  // members by name, regex or label, so a node that joins or is relabelled may move.
  std::vector<ResolvedHyperNode> HyperNodesNow() const;
  // Charges `pod` to its node and appends it to `into` (the workload's bound_ entry).
  // `key` is that entry's own key (pods_on_node_ keeps its address).
  void Bind(const std::string& key, std::vector<BoundPod>& into, BoundPod pod);
  // Refunds `pod`; `key` is its bound_ entry's key, as for Bind.
  void Unbind(const BoundPod& pod, const std::string& key);
  // What a node adds to its domains' aggregates.
  struct NodeFree {
    int32_t gpus = 0;
    int64_t cpu = 0;
    int64_t memory = 0;
  };
  NodeFree FreeOf(NodeIndex i) const;
  // Moves node `i` between free-GPU buckets and updates its domains' aggregates.
  // Also draws the node's next version.
  void OnNodeChanged(NodeIndex i, const NodeFree& before);
  static uint64_t DrawNodeVersion();
  void AddToDomains(NodeIndex i, const NodeFree& f, int32_t sign);

  std::vector<NodeInfo> infos_;
  std::vector<NodeUsage> usage_;
  std::vector<uint64_t> version_;  // see NodeVersion
  uint64_t may_fit_epoch_ = 0;     // see MayFitEpoch
  std::vector<bool> ready_;
  std::vector<bool> removed_;  // see RemoveNode; a removed node is not ready either
  int32_t removed_count_ = 0;
  std::set<int32_t> maybe_filtered_;  // see MaybeFilteredRanks
  std::vector<NodeIndex> by_rank_;
  std::map<std::string, NodeIndex> by_name_;
  int32_t max_gpus_ = 0;  // whole GPUs of the largest node
  FreeCapacityIndex free_index_;
  std::map<std::string, std::map<std::string, std::vector<int32_t>>> labels_;
  DomainIndex domains_;
  std::vector<int64_t> domain_free_gpus_;
  std::vector<int32_t> domain_nodes_ge_;  // [domain * (max_gpus_ + 1) + k]
  std::vector<int64_t> domain_free_cpu_;
  std::vector<int64_t> domain_free_mem_;
  std::map<std::string, std::vector<int32_t>> level_domains_;  // label key -> domain ids
  std::vector<model::Topology> topologies_;
  std::vector<model::HyperNode> hyper_node_specs_;
  std::vector<int32_t> hyper_node_domains_;
  std::vector<std::vector<std::vector<std::string>>> paths_;  // [topology][node]
  // A tree, not a hash map: keys mostly arrive in order, so its insert path stays
  // in cache (an unordered_map measured slower in placement-5k).
  std::map<std::string, std::vector<BoundPod>> bound_;
  // Per node, the workloads with pods there and how many. A short list searched by
  // the address of the workload's bound_ key (stable while it has pods bound, and
  // every pod is unbound before its entry goes): no string compares or tree nodes
  // per bind, as a map keyed by the string had.
  std::vector<std::vector<std::pair<const std::string*, int32_t>>> pods_on_node_;
};

}  // namespace muster::placement
