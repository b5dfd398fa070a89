#include "placement/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "core/quantity_bounds.h"
#include "placement/node_filter.h"
#include "placement/numa_aligner.h"

namespace muster::placement {
namespace {

std::atomic<uint64_t> g_next_node_version{1};

}  // namespace

uint64_t IndexedClusterState::DrawNodeVersion() {
  return g_next_node_version.fetch_add(1, std::memory_order_relaxed);
}

Result<std::unique_ptr<ClusterState>> BuildClusterState(
    const std::vector<model::Node>& nodes, const std::vector<model::NodeTopology>& numa,
    const std::vector<model::Topology>& topologies,
    const std::vector<model::HyperNode>& hyper_nodes) {
  std::map<std::string, const model::NodeTopology*> topo_by_name;
  for (const auto& t : numa) topo_by_name.emplace(t.meta.name, &t);
  std::vector<NodeInfo> infos;
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    if (!seen.insert(n.meta.name).second) {
      return InvalidArgument("node \"" + n.meta.name + "\" is defined twice");
    }
    auto it = topo_by_name.find(n.meta.name);
    infos.push_back(MakeNodeInfo(n, it == topo_by_name.end() ? nullptr : it->second));
  }
  std::vector<int32_t> order(infos.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return infos[a].node.meta.name < infos[b].node.meta.name;
  });
  for (size_t r = 0; r < order.size(); ++r) infos[order[r]].name_rank = static_cast<int32_t>(r);
  std::unique_ptr<ClusterState> out =
      std::make_unique<IndexedClusterState>(std::move(infos), topologies, hyper_nodes);
  return out;
}

IndexedClusterState::IndexedClusterState(std::vector<NodeInfo> infos,
                                         std::vector<model::Topology> topologies,
                                         std::vector<model::HyperNode> hyper_node_specs)
    : infos_(std::move(infos)),
      topologies_(std::move(topologies)),
      hyper_node_specs_(std::move(hyper_node_specs)) {
  const auto n = static_cast<int32_t>(infos_.size());
  std::sort(topologies_.begin(), topologies_.end(),
            [](const auto& a, const auto& b) { return a.meta.name < b.meta.name; });
  ready_.assign(n, true);
  removed_.assign(n, false);
  pods_on_node_.resize(n);
  for (NodeIndex i = 0; i < n; ++i) usage_.push_back(EmptyUsage(infos_[i]));
  Reindex(HyperNodesNow());
}

void IndexedClusterState::Reindex(std::vector<ResolvedHyperNode> hyper_nodes) {
  const auto n = static_cast<int32_t>(infos_.size());
  version_.resize(static_cast<size_t>(n));
  for (uint64_t& v : version_) v = DrawNodeVersion();
  may_fit_epoch_ = DrawNodeVersion();
  by_rank_.assign(n, 0);
  by_name_.clear();
  labels_.clear();
  maybe_filtered_.clear();
  paths_.clear();
  level_domains_.clear();
  domains_ = DomainIndex();
  hyper_node_domains_.clear();
  int32_t max_gpus = 0;
  for (NodeIndex i = 0; i < n; ++i) {
    by_rank_[infos_[i].name_rank] = i;
    infos_[i].domains.clear();
    if (removed_[i]) continue;
    by_name_.emplace(infos_[i].node.meta.name, i);
    max_gpus = std::max(max_gpus, static_cast<int32_t>(infos_[i].gpus.size()));
  }
  max_gpus_ = max_gpus;
  free_index_.Reset(n, max_gpus + 1);
  for (int32_t r = 0; r < n; ++r) {
    const NodeIndex i = by_rank_[r];
    if (removed_[i]) continue;  // in no bucket, label or domain
    const NodeInfo& info = infos_[i];
    free_index_.Set(r, FreeOf(i).gpus, FreeCapacityIndex::FreeOf(info.allocatable, usage_[i].used));
    for (const auto& [k, v] : info.node.meta.labels) labels_[k][v].push_back(r);
    if (!ready_[i] || MayFilterWithoutLabels(info.node)) maybe_filtered_.insert(r);
  }
  paths_.resize(topologies_.size());
  for (size_t t = 0; t < topologies_.size(); ++t) {
    for (const auto& info : infos_) {
      std::vector<std::string> path;
      for (const auto& l : topologies_[t].levels) {
        auto it = info.node.meta.labels.find(l);
        path.push_back(it == info.node.meta.labels.end() ? "" : it->second);
      }
      paths_[t].push_back(std::move(path));
    }
  }
  // Label domains for every level of every Topology, in name order.
  std::set<std::string> level_keys;
  for (const auto& t : topologies_) level_keys.insert(t.levels.begin(), t.levels.end());
  for (const auto& key : level_keys) {
    auto it = labels_.find(key);
    if (it == labels_.end()) continue;
    std::vector<int32_t>& level = level_domains_[key];
    for (const auto& [value, ranks] : it->second) {
      level.push_back(domains_.Add(Domain{DomainIndex::LabelKey(key, value), ranks, 0}));
    }
  }
  for (auto& hn : hyper_nodes) {
    std::erase_if(hn.ranks, [this](int32_t r) { return removed_[by_rank_[r]]; });
    hyper_node_domains_.push_back(
        domains_.Add(Domain{DomainIndex::HyperNodeKey(hn.name), std::move(hn.ranks), hn.tier}));
  }
  domain_free_gpus_.assign(domains_.Size(), 0);
  domain_nodes_ge_.assign(static_cast<size_t>(domains_.Size()) * (max_gpus_ + 1), 0);
  domain_free_cpu_.assign(domains_.Size(), 0);
  domain_free_mem_.assign(domains_.Size(), 0);
  for (int32_t d = 0; d < domains_.Size(); ++d) {
    for (int32_t r : domains_.Get(d).ranks) infos_[by_rank_[r]].domains.push_back(d);
  }
  for (NodeIndex i = 0; i < n; ++i) AddToDomains(i, FreeOf(i), +1);  // none for a removed one
}

const std::vector<int32_t>& IndexedClusterState::LevelDomains(const std::string& label_key) const {
  static const std::vector<int32_t> kNone;
  auto it = level_domains_.find(label_key);
  return it == level_domains_.end() ? kNone : it->second;
}

IndexedClusterState::NodeFree IndexedClusterState::FreeOf(NodeIndex i) const {
  const NodeInfo& info = infos_[i];
  const NodeUsage& u = usage_[i];
  return NodeFree{u.FreeWholeGpus(), info.allocatable.Get(kCpu) - u.used.Get(kCpu),
                  info.allocatable.Get(kMemory) - u.used.Get(kMemory)};
}

void IndexedClusterState::AddToDomains(NodeIndex i, const NodeFree& f, int32_t sign) {
  const size_t stride = static_cast<size_t>(max_gpus_) + 1;
  for (int32_t d : infos_[i].domains) {
    domain_free_gpus_[d] += static_cast<int64_t>(sign) * f.gpus;
    domain_free_cpu_[d] += sign * f.cpu;
    domain_free_mem_[d] += sign * f.memory;
    int32_t* ge = &domain_nodes_ge_[static_cast<size_t>(d) * stride];
    for (int32_t k = 0; k <= f.gpus; ++k) ge[k] += sign;
  }
}

void IndexedClusterState::SetNodeReady(NodeIndex i, bool ready) {
  if (removed_[i]) return;  // gone for good: never ready, in no index
  ready_[i] = ready;
  version_[i] = DrawNodeVersion();
  const int32_t rank = infos_[i].name_rank;
  if (!ready) {
    maybe_filtered_.insert(rank);
  } else if (!MayFilterWithoutLabels(infos_[i].node)) {
    maybe_filtered_.erase(rank);
  }
}

std::optional<NodeIndex> IndexedClusterState::FindNode(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

ResourceList IndexedClusterState::Free(NodeIndex i) const {
  ResourceList free = infos_[i].allocatable - usage_[i].used;
  free.Set(GpuMilliId(), 0);
  free.Set(kNvidiaGpu, usage_[i].FreeWholeGpus());
  if (!infos_[i].gpus.empty()) free.Set(GpuMilliId(), usage_[i].FreeGpuMilli());
  return free;
}

const std::vector<int32_t>* IndexedClusterState::NodesWithLabel(const std::string& key,
                                                                const std::string& value) const {
  static const std::vector<int32_t> kNone;
  auto it = labels_.find(key);
  if (it == labels_.end()) return &kNone;
  auto jt = it->second.find(value);
  return jt == it->second.end() ? &kNone : &jt->second;
}

const std::vector<BoundPod>* IndexedClusterState::Bound(const std::string& key) const {
  auto it = bound_.find(key);
  return it == bound_.end() ? nullptr : &it->second;
}

void IndexedClusterState::OnNodeChanged(NodeIndex i, const NodeFree& before) {
  version_[i] = DrawNodeVersion();
  NodeFree after = FreeOf(i);
  if (free_index_.Set(infos_[i].name_rank, after.gpus,
                      FreeCapacityIndex::FreeOf(infos_[i].allocatable, usage_[i].used))) {
    may_fit_epoch_ = DrawNodeVersion();
  }
  // One pass over the node's domains with the differences (same sums as taking
  // `before` out and putting `after` in): only the free-GPU counts between the two
  // change.
  const size_t stride = static_cast<size_t>(max_gpus_) + 1;
  const int64_t gpus = after.gpus - before.gpus;
  const int64_t cpu = after.cpu - before.cpu;
  const int64_t memory = after.memory - before.memory;
  const int32_t lo = std::min(before.gpus, after.gpus);
  const int32_t hi = std::max(before.gpus, after.gpus);
  const int32_t step = after.gpus > before.gpus ? 1 : -1;
  for (int32_t d : infos_[i].domains) {
    domain_free_gpus_[d] += gpus;
    domain_free_cpu_[d] += cpu;
    domain_free_mem_[d] += memory;
    int32_t* ge = &domain_nodes_ge_[static_cast<size_t>(d) * stride];
    for (int32_t k = lo + 1; k <= hi; ++k) ge[k] += step;
  }
}

void IndexedClusterState::Bind(const std::string& key, std::vector<BoundPod>& into, BoundPod pod) {
  NodeIndex i = pod.node;
  NodeFree before = FreeOf(i);
  pod.charges = Charge(infos_[i], usage_[i], pod.shape, pod.alloc);
  OnNodeChanged(i, before);
  auto& on_node = pods_on_node_[i];
  auto it =
      std::find_if(on_node.begin(), on_node.end(), [&](const auto& e) { return e.first == &key; });
  if (it == on_node.end()) {
    on_node.emplace_back(&key, 1);
  } else {
    ++it->second;
  }
  into.push_back(std::move(pod));
}

void IndexedClusterState::Unbind(const BoundPod& pod, const std::string& key) {
  NodeIndex i = pod.node;
  NodeFree before = FreeOf(i);
  Refund(usage_[i], pod.shape, pod.alloc, pod.charges);
  OnNodeChanged(i, before);
  auto& on_node = pods_on_node_[i];
  auto it =
      std::find_if(on_node.begin(), on_node.end(), [&](const auto& e) { return e.first == &key; });
  if (it != on_node.end() && --it->second <= 0) on_node.erase(it);
}

Status IndexedClusterState::ReleaseAbove(const std::string& workload_key,
                                         const std::vector<int32_t>& keep) {
  auto it = bound_.find(workload_key);
  if (it == bound_.end()) return NotFound(workload_key + " has no bound pods");
  std::vector<BoundPod>& pods = it->second;
  // Refund in reverse binding order, as Release does; keep the rest in order.
  std::vector<bool> drop(pods.size(), false);
  for (size_t k = pods.size(); k-- > 0;) {
    const BoundPod& p = pods[k];
    if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= keep.size()) continue;
    if (p.index < keep[p.pod_set]) continue;
    Unbind(p, it->first);
    drop[k] = true;
  }
  std::vector<BoundPod> kept;
  for (size_t k = 0; k < pods.size(); ++k) {
    if (!drop[k]) kept.push_back(std::move(pods[k]));
  }
  if (kept.empty()) {
    bound_.erase(it);
  } else {
    pods = std::move(kept);
  }
  return Status::Ok();
}

Status IndexedClusterState::Commit(const GangPlan& plan, const model::Workload& workload) {
  std::vector<PodShape> shapes;
  for (const auto& ps : workload.pod_sets) shapes.push_back(MakePodShape(ps));
  // Validate against scratch copies first so a failure changes nothing. A pod alone
  // on its node is checked against the node's usage itself: copying the usage is
  // only needed so a later pod on the same node sees the earlier ones' charges (a
  // copy per one-pod workload was most of this function's cost).
  const bool one_pod = plan.pods.size() == 1;
  std::map<NodeIndex, NodeUsage> scratch;
  for (const auto& p : plan.pods) {
    if (p.pod_set < 0 || p.pod_set >= static_cast<int32_t>(shapes.size())) {
      return InvalidArgument("plan names pod set " + std::to_string(p.pod_set) + " of " +
                             workload.key + ", which has " + std::to_string(shapes.size()));
    }
    if (p.node < 0 || p.node >= NodeCount()) {
      return InvalidArgument("plan names node index " + std::to_string(p.node));
    }
    const NodeInfo& info = infos_[p.node];
    if (!ready_[p.node]) {
      return FailedPrecondition("node " + info.node.meta.name + " is not ready");
    }
    PodAlloc alloc{p.gpus, p.numa_zone, p.container_zones};
    const NodeUsage* usage = &usage_[p.node];
    NodeUsage* copy = nullptr;  // the scratch usage to charge
    if (!one_pod) {
      copy = &scratch.emplace(p.node, usage_[p.node]).first->second;
      usage = copy;
    }
    if (!AllocStillFits(info, *usage, shapes[p.pod_set], alloc)) {
      return FailedPrecondition("pod " + workload.pod_sets[p.pod_set].name + "-" +
                                std::to_string(p.index) + " of " + workload.key +
                                " no longer fits on " + info.node.meta.name);
    }
    if (copy != nullptr) ChargeUsage(info, *copy, shapes[p.pod_set], alloc);
  }
  const std::string& key = plan.workload_key.empty() ? workload.key : plan.workload_key;
  if (plan.pods.empty()) return Status::Ok();  // no entry for a workload with no pods
  // One lookup for the whole gang; the entry's key is the one pods_on_node_ points at.
  auto entry = bound_.try_emplace(key).first;
  std::vector<BoundPod>& into = entry->second;
  if (into.empty()) into.reserve(plan.pods.size());
  for (const auto& p : plan.pods) {
    Bind(entry->first, into,
         BoundPod{p.pod_set,
                  p.index,
                  p.node,
                  shapes[p.pod_set],
                  {p.gpus, p.numa_zone, p.container_zones},
                  {}});
  }
  return Status::Ok();
}

void IndexedClusterState::Release(const std::string& workload_key) {
  auto it = bound_.find(workload_key);
  if (it == bound_.end()) return;
  // Refund in reverse so greedy zone charges unwind in the order they were made.
  for (auto p = it->second.rbegin(); p != it->second.rend(); ++p) Unbind(*p, it->first);
  bound_.erase(it);
}

std::vector<std::string> IndexedClusterState::WorkloadsOnNode(NodeIndex i) const {
  std::vector<std::string> out;
  for (const auto& [key, n] : pods_on_node_[i]) out.push_back(*key);
  std::sort(out.begin(), out.end());  // kept unordered; reported by key
  return out;
}

std::vector<std::string> IndexedClusterState::CheckInvariants() const {
  std::vector<std::string> errs;
  std::vector<NodeUsage> recomputed;
  for (const auto& info : infos_) recomputed.push_back(EmptyUsage(info));
  for (const auto& [key, pods] : bound_) {
    for (const auto& p : pods) {
      NodeUsage& u = recomputed[p.node];
      u.used += p.shape.requests;
      int32_t per = p.shape.gpu_milli > 0 ? p.shape.gpu_milli : kMilliPerGpu;
      for (int32_t d : p.alloc.gpus) u.gpu_milli_used[d] += per;
      for (const auto& [z, rl] : p.charges) u.zone_used[z] += rl;
    }
  }
  for (NodeIndex i = 0; i < NodeCount(); ++i) {
    const NodeInfo& info = infos_[i];
    const NodeUsage& u = usage_[i];
    const std::string& name = info.node.meta.name;
    if (!(u.used == recomputed[i].used) || u.gpu_milli_used != recomputed[i].gpu_milli_used) {
      errs.push_back(name + ": usage does not match bound pods");
    }
    if (u.used.HasNegative() || !u.used.LessEqual(info.allocatable)) {
      errs.push_back(name + ": over-committed (used " + u.used.ToString() + ", allocatable " +
                     info.allocatable.ToString() + ")");
    }
    for (size_t d = 0; d < u.gpu_milli_used.size(); ++d) {
      if (u.gpu_milli_used[d] < 0 || u.gpu_milli_used[d] > kMilliPerGpu) {
        errs.push_back(name + ": gpu " + std::to_string(d) + " over-committed");
      }
    }
    for (size_t z = 0; z < info.zones.size(); ++z) {
      if (!(u.zone_used[z] == recomputed[i].zone_used[z])) {
        errs.push_back(name + ": zone " + info.zones[z].name + " usage does not match bound pods");
      }
      if (u.zone_used[z].HasNegative() || !u.zone_used[z].LessEqual(info.zones[z].allocatable)) {
        errs.push_back(name + ": zone " + info.zones[z].name + " over-committed");
      }
    }
    if (removed_[i]) {
      if (free_index_.BucketOf(info.name_rank) != -1 || ready_[i] || !info.domains.empty() ||
          !pods_on_node_[i].empty() || FindNode(name) == i) {
        errs.push_back(name + ": removed but still indexed or holding pods");
      }
      continue;
    }
    if (free_index_.BucketOf(info.name_rank) != u.FreeWholeGpus()) {
      errs.push_back(name + ": free-GPU bucket is stale");
    }
  }
  const size_t stride = static_cast<size_t>(max_gpus_) + 1;
  for (int32_t d = 0; d < domains_.Size(); ++d) {
    NodeFree sum;
    std::vector<int32_t> ge(stride, 0);
    for (int32_t r : domains_.Get(d).ranks) {
      NodeFree f = FreeOf(by_rank_[r]);
      sum.gpus += f.gpus;
      sum.cpu += f.cpu;
      sum.memory += f.memory;
      for (int32_t k = 0; k <= f.gpus; ++k) ++ge[k];
    }
    if (sum.gpus != domain_free_gpus_[d]) {
      errs.push_back(domains_.Get(d).key + ": aggregate free GPUs " +
                     std::to_string(domain_free_gpus_[d]) + ", nodes say " +
                     std::to_string(sum.gpus));
    }
    if (sum.cpu != domain_free_cpu_[d] || sum.memory != domain_free_mem_[d]) {
      errs.push_back(domains_.Get(d).key + ": aggregate free cpu/memory is stale");
    }
    for (size_t k = 0; k < stride; ++k) {
      if (ge[k] != domain_nodes_ge_[d * stride + k]) {
        errs.push_back(domains_.Get(d).key + ": nodes with >= " + std::to_string(k) +
                       " free GPUs is stale");
        break;
      }
    }
  }
  return errs;
}

}  // namespace muster::placement
