// NodeSearch::Diagnose: why no node takes one more pod of a pod set. A failed plan
// on a full cluster lands here, so over the whole cluster the figures come from
// the free-capacity index (O(nodes the index cannot vouch for), not O(nodes));
// the message is the same as classifying every node one by one.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "placement/node_fit.h"
#include "placement/node_search.h"
#include "placement/numa_aligner.h"

namespace muster::placement {

struct NodeSearch::Tally {
  std::map<std::string, int32_t> filtered;  // reason -> nodes (sorted for output)
  int32_t resources = 0, gpus = 0, numa = 0, total = 0;
  // Most free whole GPUs on a node that passes the filters; ties to the lowest
  // name rank, as a walk in rank order keeping the first maximum finds.
  int32_t best_free_gpus = -1, best_free_rank = 0;
  NodeIndex best_free_node = -1;
  // Largest free zone on a NUMA-unaligned node, ties the same way.
  int32_t best_zone_free = -1, best_zone_rank = 0;
  NodeIndex best_zone_node = -1;

  void OfferFree(int32_t free, int32_t rank, NodeIndex i) {
    if (free > best_free_gpus || (free == best_free_gpus && rank < best_free_rank)) {
      best_free_gpus = free;
      best_free_rank = rank;
      best_free_node = i;
    }
  }
  void OfferZone(int32_t free, int32_t rank, NodeIndex i) {
    if (free > best_zone_free || (free == best_zone_free && rank < best_zone_rank)) {
      best_zone_free = free;
      best_zone_rank = rank;
      best_zone_node = i;
    }
  }
  // Counts TryAllocate's verdict for a node that passed the filters.
  void Classify(const NodeInfo& info, const NodeUsage& usage, const PodShape& shape, NodeIndex i) {
    FitFailure why = FitFailure::kNone;
    TryAllocate(info, usage, shape, &why);
    if (why == FitFailure::kResources) ++resources;
    if (why == FitFailure::kGpus) ++gpus;
    if (why == FitFailure::kNuma) {
      ++numa;
      OfferZone(LargestZoneFreeGpus(info, usage), info.name_rank, i);
    }
  }
};

void NodeSearch::Visit(PodSetContext& ctx, NodeIndex i, Tally& t) const {
  if (ov_.Base().NodeRemoved(i)) return;  // not in the cluster any more
  ++t.total;
  FilterVerdict v = Filter(ctx, i);
  if (v != FilterVerdict::kFits) {
    bool named = v == FilterVerdict::kExcluded && !ctx.excluded_why.empty();
    ++t.filtered[named ? ctx.excluded_why : std::string(VerdictName(v))];
    return;
  }
  const NodeInfo& info = ov_.Base().Info(i);
  const NodeUsage& usage = ov_.Usage(i);
  t.OfferFree(usage.FreeWholeGpus(), info.name_rank, i);
  t.Classify(info, usage, ctx.shape, i);
}

bool NodeSearch::TallyFromIndex(PodSetContext& ctx, Tally& t) const {
  if (!ctx.constraints.node_selector.empty() || !ctx.affinity.required.empty()) return false;
  const IndexedClusterState& base = ov_.Base();
  // Nodes visited one by one: those a filter may turn away, the excluded ones, and
  // those the plan changed (the index holds committed usage). Every other node
  // passes the filters and is in the index's bucket of its free whole GPUs.
  std::vector<int32_t> odd(base.MaybeFilteredRanks().begin(), base.MaybeFilteredRanks().end());
  for (NodeIndex i : ctx.excluded) {
    if (i >= 0 && i < base.NodeCount() && !base.NodeRemoved(i)) {
      odd.push_back(base.Info(i).name_rank);
    }
  }
  for (NodeIndex i : ov_.TouchedNodes()) odd.push_back(base.Info(i).name_rank);
  std::sort(odd.begin(), odd.end());
  odd.erase(std::unique(odd.begin(), odd.end()), odd.end());
  const int32_t hi = base.MaxGpusPerNode();
  std::vector<int32_t> odd_in(static_cast<size_t>(hi) + 1, 0);  // per bucket
  for (int32_t r : odd) {
    NodeIndex i = base.NodeAtRank(r);
    Visit(ctx, i, t);
    ++odd_in[base.Usage(i).FreeWholeGpus()];
  }
  t.total = base.NodeCount() - base.RemovedNodeCount();
  auto is_odd = [&](int32_t r) { return std::binary_search(odd.begin(), odd.end(), r); };
  const FreeCapacityIndex& free = base.FreeIndex();
  const FreeCapacityIndex::Amounts need = FreeCapacityIndex::NeedOf(ctx.shape.requests);
  const bool covers = FreeCapacityIndex::Covers(ctx.shape.requests);
  const FreeCapacityIndex::Amounts any = FreeCapacityIndex::NeedOf(ResourceList{});  // every node
  bool offered = false;
  for (int32_t b = hi; b >= 0; --b) {
    const int32_t regular = free.BucketSize(b) - odd_in[b];
    if (regular == 0) continue;
    if (!offered) {  // the highest bucket with a regular node holds their best
      for (int32_t r = free.Next(b, 0, any); r >= 0; r = free.Next(b, r + 1, any)) {
        if (is_odd(r)) continue;
        t.OfferFree(b, r, base.NodeAtRank(r));
        break;
      }
      offered = true;
    }
    int32_t with_room = 0;  // regular nodes the index finds room on
    if (b < ctx.shape.gpus && covers) {
      // Room is exactly ResourcesFit here, and then too few free GPUs: count the
      // short nodes instead of visiting the rest.
      int32_t short_of = 0;
      for (int32_t r = free.NextShort(b, 0, need); r >= 0; r = free.NextShort(b, r + 1, need)) {
        short_of += is_odd(r) ? 0 : 1;
      }
      with_room = regular - short_of;
      t.gpus += with_room;
    } else {
      for (int32_t r = free.Next(b, 0, need); r >= 0; r = free.Next(b, r + 1, need)) {
        if (is_odd(r)) continue;
        ++with_room;
        NodeIndex i = base.NodeAtRank(r);
        t.Classify(base.Info(i), base.Usage(i), ctx.shape, i);
      }
    }
    t.resources += regular - with_room;  // short of cpu, memory or pod slots
  }
  return true;
}

PlacementFailure NodeSearch::Diagnose(PodSetContext& ctx, const std::vector<int32_t>* allowed,
                                      int32_t placed, int32_t count) const {
  if (!explain_) return PlacementFailure{"Unschedulable", "does not fit"};
  const IndexedClusterState& base = ov_.Base();
  Tally t;
  if (allowed != nullptr) {
    for (int32_t r : *allowed) Visit(ctx, base.NodeAtRank(r), t);
  } else if (!TallyFromIndex(ctx, t)) {
    for (int32_t r = 0; r < base.NodeCount(); ++r) Visit(ctx, base.NodeAtRank(r), t);
  }
  std::string filters;
  for (const auto& [reason, n] : t.filtered) {
    filters += (filters.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
  }
  const std::string pods = "pod set " + ctx.name + " (" + std::to_string(placed) + "/" +
                           std::to_string(count) + " pods placed)";
  if (t.resources + t.gpus + t.numa == 0) {
    return {"NoMatchingNodes", "0/" + std::to_string(t.total) + " nodes match " + pods +
                                   (filters.empty() ? "" : ": " + filters)};
  }
  if (t.numa > 0 && t.resources + t.gpus == 0) {
    std::string what = ctx.shape.gpus > 0 ? std::to_string(ctx.shape.gpus) + " nvidia.com/gpu"
                                          : ctx.shape.requests.ToString();
    const NodeInfo& zone_node = base.Info(t.best_zone_node);
    return {"NumaUnaligned", what + " in one NUMA zone for " + pods + ": largest zone free on " +
                                 zone_node.node.meta.name + " has " +
                                 std::to_string(t.best_zone_free) + " nvidia.com/gpu (" +
                                 PolicyName(zone_node.policy) + ")"};
  }
  std::string need = ScoringRequest(ctx.shape).ToString();
  std::string msg = "no node has room for one more pod of " + pods + " needing " + need + ": " +
                    std::to_string(t.resources) + " short of cpu/memory/other, " +
                    std::to_string(t.gpus) + " short of GPUs";
  if (t.numa > 0) msg += ", " + std::to_string(t.numa) + " NUMA-unaligned";
  if (!filters.empty()) msg += ", " + filters;
  if (t.best_free_gpus >= 0 && (ctx.shape.gpus > 0 || ctx.shape.gpu_milli > 0)) {
    msg += " (most free: " + std::to_string(t.best_free_gpus) + " GPUs on " +
           base.Info(t.best_free_node).node.meta.name + ")";
  }
  return {"InsufficientResources", msg};
}

}  // namespace muster::placement
