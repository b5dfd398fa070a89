#include "placement/gang_planner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <tuple>

#include "core/clock.h"
#include "placement/domain_search.h"
#include "placement/node_fit.h"
#include "placement/scorer_factory.h"
#include "placement/task_topology.h"
#include "placement/topology_domains.h"

namespace muster::placement {
namespace {

using PodList = std::vector<PodPlacement>;
using Mode = model::TopologyRequest::Mode;

// FNV-1a: a hash that is the same on every platform (std::hash is not).
uint64_t HashKey(const std::string& key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::vector<int32_t> Intersect(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The Kueue Topology for a pod set: the flavor's Topology, else the first (by name)
// that has the requested level; -1 when none has it (the level alone is used).
int32_t TopologyFor(const IndexedClusterState& state, const PodSetConstraints* constraints,
                    const std::string& level) {
  const auto& topologies = state.Topologies();
  if (constraints != nullptr && !constraints->topology_name.empty()) {
    for (size_t t = 0; t < topologies.size(); ++t) {
      if (topologies[t].meta.name == constraints->topology_name) return static_cast<int32_t>(t);
    }
  }
  for (size_t t = 0; t < topologies.size(); ++t) {
    const auto& levels = topologies[t].levels;
    if (std::find(levels.begin(), levels.end(), level) != levels.end()) {
      return static_cast<int32_t>(t);
    }
  }
  return -1;
}

std::vector<std::string> LabelPath(const NodeInfo& info, const std::vector<std::string>& levels) {
  std::vector<std::string> out;
  for (const auto& l : levels) {
    auto it = info.node.meta.labels.find(l);
    out.push_back(it == info.node.meta.labels.end() ? "" : it->second);
  }
  return out;
}

// Label values of node `i` for the levels: cached per Topology, computed otherwise.
struct PathSource {
  const IndexedClusterState& state;
  int32_t topology;  // -1: compute from `levels`
  const std::vector<std::string>& levels;
  std::vector<std::string> Get(NodeIndex i) const {
    return topology >= 0 ? state.TopologyPath(i, topology) : LabelPath(state.Info(i), levels);
  }
  const std::vector<std::string>* Cached(NodeIndex i) const {
    return topology >= 0 ? &state.TopologyPath(i, topology) : nullptr;
  }
};

// Ranks follow topology: pods on one node get consecutive indices, nodes of one
// domain are consecutive, domains and nodes in name order.
void AssignRanks(const PathSource& paths, PodList& pods) {
  if (pods.size() == 1) {  // nothing to order: skip the paths and the copy
    pods.front().index = 0;
    return;
  }
  const IndexedClusterState& state = paths.state;
  std::vector<size_t> order(pods.size());
  for (size_t k = 0; k < pods.size(); ++k) order[k] = k;
  // Cached paths are compared in place; only uncached ones are computed.
  std::vector<std::vector<std::string>> computed;
  std::vector<const std::vector<std::string>*> path(pods.size(), nullptr);
  if (paths.topology < 0 && !paths.levels.empty()) computed.resize(pods.size());
  for (size_t k = 0; k < pods.size(); ++k) {
    if (paths.topology >= 0) {
      path[k] = paths.Cached(pods[k].node);
    } else if (!paths.levels.empty()) {
      computed[k] = paths.Get(pods[k].node);
      path[k] = &computed[k];
    }
  }
  static const std::vector<std::string> kNoPath;
  for (auto& p : path) {
    if (p == nullptr) p = &kNoPath;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (*path[a] != *path[b]) return *path[a] < *path[b];
    return state.Info(pods[a].node).name_rank < state.Info(pods[b].node).name_rank;
  });
  PodList sorted;
  sorted.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    sorted.push_back(std::move(pods[order[k]]));
    sorted.back().index = static_cast<int32_t>(k);
  }
  pods = std::move(sorted);
}

PodPlacement Place(Overlay& ov, const PodSetContext& ctx, NodeIndex node, PodAlloc alloc) {
  ChargeUsage(ov.Base().Info(node), ov.Mutable(node), ctx.shape, alloc);
  return PodPlacement{ctx.pod_set,
                      0,
                      node,
                      std::move(alloc.gpus),
                      alloc.numa_zone,
                      std::move(alloc.container_zones)};
}

std::variant<PodList, PlacementFailure> PlanGreedy(Overlay& ov, const NodeSearch& search,
                                                   PodSetContext& ctx, int32_t count,
                                                   const std::vector<int32_t>* allowed) {
  PodList pods;
  for (int32_t k = 0; k < count; ++k) {
    auto pick = search.PickNode(ctx, allowed);
    if (!pick) return search.Diagnose(ctx, allowed, k, count);
    pods.push_back(Place(ov, ctx, pick->node, std::move(pick->alloc)));
  }
  return pods;
}

// Kueue TAS for one pod set: pod capacity per node, then FindTasAssignment.
std::variant<PodList, PlacementFailure> PlanTas(Overlay& ov, const NodeSearch& search,
                                                PodSetContext& ctx, int32_t count,
                                                const std::vector<int32_t>* allowed,
                                                const PathSource& paths, int32_t level_idx,
                                                bool required) {
  const std::vector<std::string>& levels = paths.levels;
  const IndexedClusterState& base = ov.Base();
  const std::string& level = levels[level_idx];
  // Nodes that can take no pod are left out: they add nothing to any domain's count.
  std::vector<std::tuple<std::vector<std::string>, int32_t, int32_t>> order;  // path, rank, cap
  int64_t gathered = 0;
  auto add = [&](int32_t r) {
    if (allowed != nullptr && !std::binary_search(allowed->begin(), allowed->end(), r)) return;
    NodeIndex i = base.NodeAtRank(r);
    if (search.Filter(ctx, i) != FilterVerdict::kFits) return;
    const std::vector<std::string>* cached = paths.Cached(i);
    std::vector<std::string> path = cached != nullptr ? *cached : paths.Get(i);
    if (std::find(path.begin(), path.end(), "") != path.end()) return;  // TAS needs every level
    int32_t cap = PodsFit(base.Info(i), ov.Usage(i), ctx.shape, count);
    if (cap > 0) order.emplace_back(std::move(path), r, cap);
    gathered += cap;
  };
  auto fail = [&](const std::string& why) {
    return PlacementFailure{"TopologyUnsatisfiable", "pod set " + ctx.name + " needs " +
                                                         std::to_string(count) + " pods in one " +
                                                         level + (required ? "" : " (preferred)") +
                                                         ": " + why};
  };
  // Runs Kueue's assignment over the gathered nodes and charges the pods.
  auto assign = [&]() -> std::variant<PodList, PlacementFailure> {
    std::sort(order.begin(), order.end());
    std::vector<TasLeaf> leaves;
    std::vector<NodeIndex> leaf_nodes;
    leaves.reserve(order.size());
    leaf_nodes.reserve(order.size());
    for (auto& [path, r, cap] : order) {
      leaves.push_back(TasLeaf{std::move(path), cap});
      leaf_nodes.push_back(base.NodeAtRank(r));
    }
    auto result = FindTasAssignment(leaves, static_cast<int32_t>(levels.size()),
                                    TasRequest{level_idx, required, count});
    if (auto* why = std::get_if<std::string>(&result)) return fail(*why);
    const auto& counts = std::get<std::vector<int32_t>>(result);
    PodList pods;
    pods.reserve(count);
    for (size_t l = 0; l < counts.size(); ++l) {
      for (int32_t k = 0; k < counts[l]; ++k) {
        NodeIndex i = leaf_nodes[l];
        auto alloc = TryAllocate(base.Info(i), ov.Usage(i), ctx.shape);
        if (!alloc) {
          return PlacementFailure{"TopologyUnsatisfiable",
                                  "pod set " + ctx.name + ": node " + base.Info(i).node.meta.name +
                                      " lost room while assigning its topology domain"};
        }
        pods.push_back(Place(ov, ctx, i, std::move(*alloc)));
      }
    }
    return pods;
  };
  const DomainIndex& domains = base.Domains();
  if (paths.topology >= 0 && required) {
    // Domain at a time: the aggregates bound what each domain of the level can
    // hold; domains are tried best fit first (smallest bound that holds the pod
    // set, ties in path order as FindTasAssignment breaks them) and only the
    // tried domain's nodes are scanned. The bound is exact unless filters, NUMA
    // or per-node leftovers bind, in which case the scan finds the domain short
    // and the next one is tried.
    const std::vector<int32_t>& level_domains = base.LevelDomains(level);
    std::vector<DomainBound> candidates = DomainsThatMayHold(ov, level_domains, ctx.shape, count);
    auto prefix_less = [&](const DomainBound& a, const DomainBound& b) {
      if (a.pods != b.pods) return a.pods < b.pods;
      const auto& pa =
          base.TopologyPath(base.NodeAtRank(domains.Get(a.domain).ranks[0]), paths.topology);
      const auto& pb =
          base.TopologyPath(base.NodeAtRank(domains.Get(b.domain).ranks[0]), paths.topology);
      return std::lexicographical_compare(pa.begin(), pa.begin() + level_idx + 1, pb.begin(),
                                          pb.begin() + level_idx + 1);
    };
    std::stable_sort(candidates.begin(), candidates.end(), prefix_less);
    int64_t largest = LargestDomainBoundBelow(ov, level_domains, ctx.shape, count);
    for (const DomainBound& c : candidates) {
      order.clear();
      gathered = 0;
      for (int32_t r : domains.Get(c.domain).ranks) add(r);
      largest = std::max(largest, gathered);
      if (gathered < count) continue;
      auto r = assign();
      if (std::holds_alternative<PodList>(r)) return r;
    }
    return fail("largest domain fits " + std::to_string(std::min<int64_t>(largest, count - 1)) +
                " of " + std::to_string(count) + " pods");
  }
  if (paths.topology >= 0) {
    const std::string prefix = "label:" + level + "=";
    for (int32_t d = 0; d < domains.Size(); ++d) {
      const Domain& dom = domains.Get(d);
      if (dom.key.compare(0, prefix.size(), prefix) != 0) continue;
      for (int32_t r : dom.ranks) add(r);
    }
  } else {
    // The level is not an indexed Topology level: scan the node labels.
    for (int32_t r = 0; r < base.NodeCount(); ++r) add(r);
  }
  return assign();
}

}  // namespace

GangPlannerImpl::GangPlannerImpl(const model::SchedulerConfiguration& config,
                                 const PlannerOptions& options)
    : scorer_(MakeScorer(config, options)),
      task_topology_weight_(config.volcano.task_topology ? config.volcano.task_topology_weight : 0),
      max_scored_nodes_(options.max_scored_nodes),
      random_tie_break_(options.random_tie_break),
      tie_break_seed_(options.tie_break_seed) {}

std::unique_ptr<GangPlanner> MakeGangPlanner(const model::SchedulerConfiguration& config) {
  return std::make_unique<GangPlannerImpl>(config);
}

std::unique_ptr<GangPlanner> MakeGangPlanner(const model::SchedulerConfiguration& config,
                                             const PlannerOptions& options) {
  return std::make_unique<GangPlannerImpl>(config, options);
}

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::Plan(
    const ClusterState& state, const PlacementRequest& request) const {
  const auto* indexed = dynamic_cast<const IndexedClusterState*>(&state);
  if (indexed == nullptr) {
    return PlacementFailure{"Unschedulable", "cluster state was not built by BuildClusterState"};
  }
  Overlay overlay(*indexed);
  return PlanOn(overlay, request);
}

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::PlanOn(
    Overlay& overlay, const PlacementRequest& request) const {
  if (request.workload == nullptr) {
    return PlacementFailure{"Unschedulable", "placement request without a workload"};
  }
  const auto& nt = request.workload->network_topology;
  if (nt.has_value() && !overlay.Base().HyperNodeDomains().empty()) {
    Overlay trial = overlay;
    auto r = PlanHyperNodes(trial, request);
    if (std::holds_alternative<GangPlan>(r)) {
      overlay = std::move(trial);
      return r;
    }
    if (nt->mode == model::NetworkTopologyMode::kHard) return r;
  }
  return PlanPodSets(overlay, request, nullptr);
}

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::PlanHyperNodes(
    Overlay& overlay, const PlacementRequest& request) const {
  const IndexedClusterState& base = overlay.Base();
  const model::Workload& wl = *request.workload;
  const int32_t max_tier = wl.network_topology->highest_tier_allowed.value_or(1);
  int64_t gang_gpus = 0;
  for (size_t p = 0; p < wl.pod_sets.size(); ++p) {
    int32_t n = p < request.counts.size() ? request.counts[p] : wl.pod_sets[p].count;
    gang_gpus += int64_t{MakePodShape(wl.pod_sets[p]).gpus} * n;
  }
  // Lowest tier first; within a tier the HyperNode with the fewest free GPUs that
  // can still hold the gang (best fit), then name.
  struct Option {
    int32_t tier;
    int64_t free;
    int32_t domain;
  };
  std::vector<Option> options;
  for (int32_t d : base.HyperNodeDomains()) {
    const Domain& dom = base.Domains().Get(d);
    if (dom.tier > max_tier) continue;
    int64_t free = overlay.DomainFreeGpus(d);
    if (free < gang_gpus) continue;
    options.push_back({dom.tier, free, d});
  }
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    return a.tier != b.tier ? a.tier < b.tier : a.free < b.free;
  });
  std::string last;
  for (const Option& o : options) {
    Overlay trial = overlay;
    auto r = PlanPodSets(trial, request, &base.Domains().Get(o.domain).ranks);
    if (std::holds_alternative<GangPlan>(r)) {
      overlay = std::move(trial);
      return r;
    }
    last = std::get<PlacementFailure>(r).message;
  }
  return PlacementFailure{"TopologyUnsatisfiable",
                          "no HyperNode of tier <= " + std::to_string(max_tier) +
                              " holds the gang (" + std::to_string(gang_gpus) + " GPUs)" +
                              (last.empty() ? "" : ": " + last)};
}

namespace {

// Narrows the candidates of a pod set with the label index when it selects labels.
// Every node searched then carries the selector's labels, so Filter need not look
// them up again (PodSetContext::selector_by_index).
const std::vector<int32_t>* NarrowBySelector(const IndexedClusterState& base, PodSetContext& ctx,
                                             const std::vector<int32_t>* scope,
                                             std::vector<int32_t>& narrowed) {
  const std::vector<int32_t>* allowed = scope;
  ctx.label_list = nullptr;
  for (const auto& [k, v] : ctx.constraints.node_selector) {
    const std::vector<int32_t>* with = base.NodesWithLabel(k, v);
    if (allowed == nullptr) {
      allowed = with;  // the index's own list, not a copy (it outlives the plan)
      ctx.label_list = with;
      continue;
    }
    narrowed = Intersect(*allowed, *with);
    allowed = &narrowed;
    ctx.label_list = nullptr;
  }
  ctx.selector_by_index = !ctx.constraints.node_selector.empty();
  ctx.fit_key = -1;  // the fit cache's key says how the selector is checked
  return allowed;
}

}  // namespace

std::optional<std::variant<GangPlan, PlacementFailure>> GangPlannerImpl::PlanTaskTopology(
    Overlay& ov, const PlacementRequest& request, const std::vector<int32_t>* scope) const {
  const IndexedClusterState& base = ov.Base();
  const model::Workload& wl = *request.workload;
  if (!wl.task_topology || task_topology_weight_ <= 0) return std::nullopt;
  // Pod sets bound to one topology domain are placed by TAS, set by set.
  for (const model::PodSet& ps : wl.pod_sets) {
    if (ps.topology.mode == Mode::kRequired || ps.topology.mode == Mode::kPreferred) {
      return std::nullopt;
    }
  }
  const size_t n = wl.pod_sets.size();
  std::vector<int32_t> counts(n);
  std::vector<ResourceList> requests(n);
  std::vector<PodSetContext> ctxs;
  std::vector<std::vector<int32_t>> narrowed(n);
  std::vector<const std::vector<int32_t>*> allowed(n);
  for (size_t p = 0; p < n; ++p) {
    counts[p] = p < request.counts.size() ? request.counts[p] : wl.pod_sets[p].count;
    const PodSetConstraints* cons =
        p < request.constraints.size() ? &request.constraints[p] : nullptr;
    ctxs.push_back(
        MakePodSetContext(wl.pod_sets[p], static_cast<int32_t>(p), cons, base.NodeCount()));
    ExcludeNodes(ctxs.back(), request);
    requests[p] = ScoringRequest(ctxs.back().shape);
  }
  for (size_t p = 0; p < n; ++p) allowed[p] = NarrowBySelector(base, ctxs[p], scope, narrowed[p]);
  auto tt = TaskTopologyPlan::Make(wl, counts, requests, task_topology_weight_);
  if (!tt) return std::nullopt;
  Rng ties(tie_break_seed_ ^ HashKey(wl.key));
  NodeSearch search(ov, *scorer_, max_scored_nodes_, random_tie_break_ ? &ties : nullptr,
                    request.explain);
  std::vector<PodList> per_set(n);
  for (size_t k = 0; k < tt->pods().size(); ++k) {
    int32_t p = tt->pods()[k].pod_set;
    PodSetContext& ctx = ctxs[p];
    std::function<int64_t(NodeIndex)> bonus = [&](NodeIndex i) {
      const NodeInfo& info = base.Info(i);
      return tt->Bonus(k, i, ScoringAllocatable(info) - ScoringUsed(info, ov.Usage(i)));
    };
    ctx.bonus = &bonus;
    auto pick = search.PickNode(ctx, allowed[p]);
    ctx.bonus = nullptr;
    if (!pick) {
      return search.Diagnose(ctx, allowed[p], static_cast<int32_t>(per_set[p].size()), counts[p]);
    }
    NodeIndex node = pick->node;
    per_set[p].push_back(Place(ov, ctx, node, std::move(pick->alloc)));
    tt->Bound(k, node);
  }
  std::vector<std::string> levels;
  if (!base.Topologies().empty()) levels = base.Topologies().front().levels;
  int32_t topology = base.Topologies().empty() ? -1 : 0;
  GangPlan plan;
  plan.workload_key = wl.key;
  for (PodList& pods : per_set) {
    AssignRanks(PathSource{base, topology, levels}, pods);
    plan.pods.insert(plan.pods.end(), pods.begin(), pods.end());
  }
  return plan;
}

std::variant<GangPlan, PlacementFailure> GangPlannerImpl::PlanPodSets(
    Overlay& ov, const PlacementRequest& request, const std::vector<int32_t>* scope) const {
  const IndexedClusterState& base = ov.Base();
  const model::Workload& wl = *request.workload;
  if (auto planned = PlanTaskTopology(ov, request, scope)) return std::move(*planned);
  // One stream per plan, keyed by the workload, so re-planning the same request
  // (trial overlays, victim search) breaks ties the same way.
  Rng ties(tie_break_seed_ ^ HashKey(wl.key));
  NodeSearch search(ov, *scorer_, max_scored_nodes_, random_tie_break_ ? &ties : nullptr,
                    request.explain);
  search.UseFitCache(request.fit_cache);
  GangPlan plan;
  plan.workload_key = wl.key;
  static const std::vector<std::string> kNoLevels;
  const std::vector<std::string>& default_levels =
      base.Topologies().empty() ? kNoLevels : base.Topologies().front().levels;
  for (size_t p = 0; p < wl.pod_sets.size(); ++p) {
    const model::PodSet& ps = wl.pod_sets[p];
    int32_t count = p < request.counts.size() ? request.counts[p] : ps.count;
    if (count <= 0) continue;
    const PodSetConstraints* cons =
        p < request.constraints.size() ? &request.constraints[p] : nullptr;
    PodSetContext ctx = MakePodSetContext(ps, static_cast<int32_t>(p), cons, base.NodeCount());
    ExcludeNodes(ctx, request);
    std::vector<int32_t> narrowed;
    const std::vector<int32_t>* allowed = NarrowBySelector(base, ctx, scope, narrowed);
    const auto& topo = ps.topology;
    bool tas =
        (topo.mode == Mode::kRequired || topo.mode == Mode::kPreferred) && !topo.level.empty();
    std::variant<PodList, PlacementFailure> r;
    int32_t topology = base.Topologies().empty() ? -1 : 0;
    // Points at the Topology's levels (no copy per pod set); `single` when a TAS
    // level has no Topology.
    const std::vector<std::string>* level_list = &default_levels;
    std::vector<std::string> single;
    if (tas) {
      topology = TopologyFor(base, cons, topo.level);
      if (topology >= 0) {
        level_list = &base.Topologies()[topology].levels;
      } else {
        single = {topo.level};
        level_list = &single;
      }
      const std::vector<std::string>& levels = *level_list;
      auto idx = std::find(levels.begin(), levels.end(), topo.level) - levels.begin();
      if (idx == static_cast<long>(levels.size())) {
        return PlacementFailure{
            "TopologyUnsatisfiable",
            "pod set " + ps.name + ": level " + topo.level + " is not in its Topology"};
      }
      r = PlanTas(ov, search, ctx, count, allowed, PathSource{base, topology, levels},
                  static_cast<int32_t>(idx), topo.mode == Mode::kRequired);
    } else {
      r = PlanGreedy(ov, search, ctx, count, allowed);
    }
    if (auto* f = std::get_if<PlacementFailure>(&r)) return *f;
    PodList& pods = std::get<PodList>(r);
    AssignRanks(PathSource{base, topology, *level_list}, pods);
    plan.pods.insert(plan.pods.end(), std::make_move_iterator(pods.begin()),
                     std::make_move_iterator(pods.end()));
  }
  return plan;
}

}  // namespace muster::placement
