#include "placement/node_search.h"

#include <algorithm>
#include <map>

#include "placement/node_fit.h"
#include "placement/numa_aligner.h"

namespace muster::placement {

PodSetContext MakePodSetContext(const model::PodSet& ps, int32_t index,
                                const PodSetConstraints* constraints, int32_t node_count) {
  PodSetContext ctx;
  ctx.pod_set = index;
  ctx.name = ps.name;
  ctx.shape = MakePodShape(ps);
  ctx.scoring_request = ScoringRequest(ctx.shape);
  // The template's own constraints, then the pod set's, then the flavor's
  // (Kueue injects flavor labels and tolerations into the template).
  ctx.constraints.node_selector = ps.tmpl.spec.node_selector;
  for (const auto& [k, v] : ps.node_selector) ctx.constraints.node_selector[k] = v;
  ctx.constraints.tolerations = ps.tmpl.spec.tolerations;
  ctx.constraints.tolerations.insert(ctx.constraints.tolerations.end(), ps.tolerations.begin(),
                                     ps.tolerations.end());
  if (constraints != nullptr) {
    for (const auto& [k, v] : constraints->flavor_node_labels) ctx.constraints.node_selector[k] = v;
    ctx.constraints.tolerations.insert(ctx.constraints.tolerations.end(),
                                       constraints->flavor_tolerations.begin(),
                                       constraints->flavor_tolerations.end());
  }
  ctx.affinity = ps.node_affinity.required.empty() ? ps.tmpl.spec.node_affinity : ps.node_affinity;
  ctx.verdicts = VerdictCache(node_count);
  return ctx;
}

void ExcludeNodes(PodSetContext& ctx, const PlacementRequest& request) {
  for (NodeIndex i : request.excluded_nodes) {
    if (i >= 0 && i < static_cast<NodeIndex>(ctx.verdicts.size())) {
      ctx.verdicts.Set(i, static_cast<int8_t>(FilterVerdict::kExcluded));
    }
  }
  ctx.excluded_why = request.excluded_why;
}

FilterVerdict NodeSearch::Filter(PodSetContext& ctx, NodeIndex i) const {
  int8_t v = ctx.verdicts.Get(i);
  if (v < 0) {
    ctx.constraints.affinity = &ctx.affinity;
    v = static_cast<int8_t>(
        FilterNode(ov_.Base().GetNode(i), ov_.Base().NodeReady(i), ctx.constraints));
    ctx.verdicts.Set(i, v);
  }
  return static_cast<FilterVerdict>(v);
}

int64_t NodeSearch::Score(const PodSetContext& ctx, NodeIndex i, const PodAlloc& alloc) const {
  const NodeInfo& info = ov_.Base().Info(i);
  const NodeUsage& usage = ov_.Usage(i);
  ScoringAllocatableInto(info, alloc_scratch_);
  ScoringUsedInto(usage, used_scratch_);
  ScoreInput in{alloc_scratch_,
                used_scratch_,
                ctx.scoring_request,
                usage.gpu_milli_used,
                alloc.gpus,
                ctx.shape.gpu_milli,
                info.node.taints,
                ctx.constraints.tolerations,
                &info.node.meta.labels};
  return scorer_.Score(in);
}

std::optional<NodeSearch::Pick> NodeSearch::PickNode(PodSetContext& ctx,
                                                     const std::vector<int32_t>* allowed) const {
  const IndexedClusterState& base = ov_.Base();
  std::optional<Pick> best;
  int64_t best_score = 0;
  int32_t best_rank = 0;
  uint64_t tied = 0;  // nodes seen with best_score (random tie-break)
  auto consider = [&](NodeIndex i) {
    if (Filter(ctx, i) != FilterVerdict::kFits) return false;
    const NodeInfo& info = base.Info(i);
    auto alloc = TryAllocate(info, ov_.Usage(i), ctx.shape);
    if (!alloc) return false;
    int64_t score = Score(ctx, i, *alloc);
    if (ctx.shape.gpu_milli > 0 && scorer_.ScoresEachSharedDevice() && alloc->numa_zone < 0 &&
        (info.policy == model::TopologyManagerPolicy::kNone || info.zones.empty())) {
      // The scorer picks the shared device: every device with room, first best wins.
      const std::vector<int32_t>& used = ov_.Usage(i).gpu_milli_used;
      PodAlloc trial;
      for (int32_t d = 0; d < static_cast<int32_t>(used.size()); ++d) {
        if (used[d] + ctx.shape.gpu_milli > kMilliPerGpu) continue;
        trial.gpus.assign(1, d);
        int64_t s = Score(ctx, i, trial);
        if (s > score || (s == score && d < alloc->gpus.front())) {
          score = s;
          alloc->gpus.assign(1, d);
        }
      }
    }
    if (ctx.bonus != nullptr) score += (*ctx.bonus)(i);
    int32_t rank = info.name_rank;
    bool take;
    if (!best || score > best_score) {
      take = true;
      tied = 1;
    } else if (score < best_score) {
      take = false;
    } else if (ties_ != nullptr) {
      take = ties_->Uniform(++tied) == 0;  // the k-th tie replaces with odds 1/k
    } else {
      take = rank < best_rank;
    }
    if (take) {
      best = Pick{i, std::move(*alloc)};
      best_score = score;
      best_rank = rank;
    }
    return true;
  };
  // Nodes the plan already changed are always candidates: the index reflects the
  // committed state, not the overlay.
  for (NodeIndex i : ov_.TouchedNodes()) {
    if (allowed != nullptr &&
        !std::binary_search(allowed->begin(), allowed->end(), base.Info(i).name_rank)) {
      continue;
    }
    consider(i);
  }
  int32_t found = 0;
  const int32_t limit = max_scored_ > 0 ? max_scored_ : base.NodeCount();
  const int32_t lo = ctx.shape.gpu_milli > 0 ? 0 : ctx.shape.gpus;
  const FreeCapacityIndex& free = base.FreeIndex();
  const FreeCapacityIndex::Amounts need = FreeCapacityIndex::NeedOf(ctx.shape.requests);
  if (allowed != nullptr) {
    // A flavor's node labels make every admitted pod's search a narrowed one: the
    // index skips the full nodes here too (each would fail TryAllocate).
    for (int32_t r : *allowed) {
      if (!free.MayFit(r, lo, need)) continue;
      NodeIndex i = base.NodeAtRank(r);
      if (ov_.Touched(i)) continue;
      if (consider(i) && ++found >= limit) break;
    }
    return best;
  }
  // Whole cluster: walk the free-GPU buckets that can hold the pod, fullest first
  // for packing scorers, emptiest first for spreading ones.
  // Nodes short of the pod's cpu, memory or pod slots are skipped through the free-capacity
  // index: they would fail TryAllocate, so the nodes considered (and the choice)
  // are the same as walking the whole bucket.
  const int32_t hi = base.MaxGpusPerNode();
  for (int32_t step = 0; lo + step <= hi && found < limit; ++step) {
    int32_t b = scorer_.PrefersFullNodes() ? lo + step : hi - step;
    for (int32_t r = free.Next(b, 0, need); r >= 0; r = free.Next(b, r + 1, need)) {
      NodeIndex i = base.NodeAtRank(r);
      if (ov_.Touched(i)) continue;
      if (consider(i) && ++found >= limit) break;
    }
  }
  return best;
}

PlacementFailure NodeSearch::Diagnose(PodSetContext& ctx, const std::vector<int32_t>* allowed,
                                      int32_t placed, int32_t count) const {
  const IndexedClusterState& base = ov_.Base();
  std::map<std::string, int32_t> filtered;  // reason -> nodes (sorted for output)
  int32_t resources = 0, gpus = 0, numa = 0, total = 0;
  int32_t best_zone_free = -1;
  std::string best_zone_node;
  const char* policy = "none";
  int32_t best_free_gpus = -1;
  std::string best_free_node;
  auto visit = [&](NodeIndex i) {
    ++total;
    FilterVerdict v = Filter(ctx, i);
    if (v != FilterVerdict::kFits) {
      bool named = v == FilterVerdict::kExcluded && !ctx.excluded_why.empty();
      ++filtered[named ? ctx.excluded_why : std::string(VerdictName(v))];
      return;
    }
    const NodeInfo& info = base.Info(i);
    const NodeUsage& usage = ov_.Usage(i);
    if (usage.FreeWholeGpus() > best_free_gpus) {
      best_free_gpus = usage.FreeWholeGpus();
      best_free_node = info.node.meta.name;
    }
    FitFailure why = FitFailure::kNone;
    TryAllocate(info, usage, ctx.shape, &why);
    if (why == FitFailure::kResources) ++resources;
    if (why == FitFailure::kGpus) ++gpus;
    if (why == FitFailure::kNuma) {
      ++numa;
      int32_t z = LargestZoneFreeGpus(info, usage);
      if (z > best_zone_free) {
        best_zone_free = z;
        best_zone_node = info.node.meta.name;
        policy = PolicyName(info.policy);
      }
    }
  };
  if (allowed != nullptr) {
    for (int32_t r : *allowed) visit(base.NodeAtRank(r));
  } else {
    for (int32_t r = 0; r < base.NodeCount(); ++r) visit(base.NodeAtRank(r));
  }
  std::string filters;
  for (const auto& [reason, n] : filtered) {
    filters += (filters.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
  }
  const std::string pods = "pod set " + ctx.name + " (" + std::to_string(placed) + "/" +
                           std::to_string(count) + " pods placed)";
  if (resources + gpus + numa == 0) {
    return {"NoMatchingNodes", "0/" + std::to_string(total) + " nodes match " + pods +
                                   (filters.empty() ? "" : ": " + filters)};
  }
  if (numa > 0 && resources + gpus == 0) {
    std::string what = ctx.shape.gpus > 0 ? std::to_string(ctx.shape.gpus) + " nvidia.com/gpu"
                                          : ctx.shape.requests.ToString();
    return {"NumaUnaligned", what + " in one NUMA zone for " + pods + ": largest zone free on " +
                                 best_zone_node + " has " + std::to_string(best_zone_free) +
                                 " nvidia.com/gpu (" + policy + ")"};
  }
  std::string need = ScoringRequest(ctx.shape).ToString();
  std::string msg = "no node has room for one more pod of " + pods + " needing " + need + ": " +
                    std::to_string(resources) + " short of cpu/memory/other, " +
                    std::to_string(gpus) + " short of GPUs";
  if (numa > 0) msg += ", " + std::to_string(numa) + " NUMA-unaligned";
  if (!filters.empty()) msg += ", " + filters;
  if (best_free_gpus >= 0 && (ctx.shape.gpus > 0 || ctx.shape.gpu_milli > 0)) {
    msg += " (most free: " + std::to_string(best_free_gpus) + " GPUs on " + best_free_node + ")";
  }
  return {"InsufficientResources", msg};
}

}  // namespace muster::placement
