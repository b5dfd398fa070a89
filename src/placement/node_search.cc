#include "placement/node_search.h"

#include <algorithm>
#include <cstddef>

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
      ctx.excluded.push_back(i);
    }
  }
  ctx.excluded_why = request.excluded_why;
}

FilterVerdict NodeSearch::Filter(PodSetContext& ctx, NodeIndex i) const {
  int8_t v = ctx.verdicts.Get(i);
  if (v < 0) {
    ctx.constraints.affinity = &ctx.affinity;
    v = static_cast<int8_t>(FilterNode(ov_.Base().GetNode(i), ov_.Base().NodeReady(i),
                                       ctx.constraints,
                                       /*check_selector=*/!ctx.selector_by_index));
    ctx.verdicts.Set(i, v);
  }
  return static_cast<FilterVerdict>(v);
}

int64_t NodeSearch::Score(const PodSetContext& ctx, NodeIndex i, const PodAlloc& alloc) const {
  const NodeInfo& info = ov_.Base().Info(i);
  const NodeUsage& usage = ov_.Usage(i);
  ScoringUsedInto(usage, used_scratch_);
  ScoreInput in{info.scoring_allocatable,
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

void NodeSearch::UseFitCache(NodeFitCache* cache) {
  fit_cache_ = cache != nullptr && scorer_.ScoresFromInputAlone() ? cache : nullptr;
  if (fit_cache_ != nullptr) fit_cache_->Bind(&scorer_, ov_.Base().NodeCount());
}

std::optional<NodeSearch::Pick> NodeSearch::PickNode(PodSetContext& ctx,
                                                     const std::vector<int32_t>* allowed) const {
  const IndexedClusterState& base = ov_.Base();
  // The best node so far and the candidate's allocation: swapped when a candidate
  // wins, so the device lists keep their storage (no allocation per node visited).
  Pick best;
  PodAlloc candidate;
  PodAlloc trial;  // a shared device the scorer is asked about
  int64_t best_score = 0;
  int32_t best_rank = 0;
  uint64_t tied = 0;  // nodes seen with best_score (random tie-break)
  if (fit_cache_ != nullptr && ctx.fit_key < 0) {
    ctx.fit_key = fit_cache_->KeyOf(ctx.shape, ctx.constraints, ctx.affinity.required,
                                    /*check_selector=*/!ctx.selector_by_index);
  }
  // Whether the pod passes the filters and fits node i (null: no) and the
  // allocation it would get there: `candidate`, or the fit cache's entry for a node
  // the plan has not touched (`cacheable`), copied only if the node wins. `score` is
  // the scorer's.
  auto fit_and_score = [&](NodeIndex i, bool cacheable, int64_t& score) -> const PodAlloc* {
    NodeFitCache::Entry* entry = nullptr;
    bool filtered = false;
    if (fit_cache_ != nullptr && cacheable) {
      // The entry answers the filters, which know nothing of the nodes this request
      // excludes (ExcludeNodes marks them in the pod set's verdicts only).
      if (!ctx.excluded.empty()) {
        if (Filter(ctx, i) != FilterVerdict::kFits) return nullptr;
        filtered = true;
      }
      const uint64_t version = base.NodeVersion(i);
      if (const NodeFitCache::Entry* kept = fit_cache_->Find(i, version, ctx.fit_key)) {
        if (!kept->fits) return nullptr;
        score = kept->score;
        return &kept->alloc;
      }
      entry = &fit_cache_->Fill(i, version, ctx.fit_key);  // fits false until shown
    }
    if (!filtered && Filter(ctx, i) != FilterVerdict::kFits) return nullptr;
    const NodeInfo& info = base.Info(i);
    if (!TryAllocate(info, ov_.Usage(i), ctx.shape, candidate)) return nullptr;
    score = Score(ctx, i, candidate);
    if (ctx.shape.gpu_milli > 0 && scorer_.ScoresEachSharedDevice() && candidate.numa_zone < 0 &&
        (info.policy == model::TopologyManagerPolicy::kNone || info.zones.empty())) {
      // The scorer picks the shared device: every device with room, first best wins.
      const std::vector<int32_t>& used = ov_.Usage(i).gpu_milli_used;
      for (int32_t d = 0; d < static_cast<int32_t>(used.size()); ++d) {
        if (used[d] + ctx.shape.gpu_milli > kMilliPerGpu) continue;
        trial.gpus.assign(1, d);
        int64_t s = Score(ctx, i, trial);
        if (s > score || (s == score && d < candidate.gpus.front())) {
          score = s;
          candidate.gpus.assign(1, d);
        }
      }
    }
    if (entry != nullptr) {
      entry->fits = true;
      entry->score = score;
      entry->alloc = candidate;
    }
    return &candidate;
  };
  auto consider = [&](NodeIndex i, bool cacheable) {
    int64_t score = 0;
    const PodAlloc* alloc = fit_and_score(i, cacheable, score);
    if (alloc == nullptr) return false;
    const NodeInfo& info = base.Info(i);
    if (ctx.bonus != nullptr) score += (*ctx.bonus)(i);
    int32_t rank = info.name_rank;
    bool take;
    if (best.node < 0 || score > best_score) {
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
      best.node = i;
      if (alloc == &candidate) {
        std::swap(best.alloc, candidate);
      } else {
        best.alloc = *alloc;
      }
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
    consider(i, /*cacheable=*/false);
  }
  // The answer once the search stops.
  auto done = [&] { return best.node < 0 ? std::nullopt : std::optional<Pick>(std::move(best)); };
  int32_t found = 0;
  const int32_t limit = max_scored_ > 0 ? max_scored_ : base.NodeCount();
  const int32_t lo = ctx.shape.gpu_milli > 0 ? 0 : ctx.shape.gpus;
  const FreeCapacityIndex& free = base.FreeIndex();
  const FreeCapacityIndex::Amounts need = FreeCapacityIndex::NeedOf(ctx.shape.requests);
  if (allowed != nullptr) {
    // A flavor's node labels make every admitted pod's search a narrowed one: the
    // index skips the full nodes here too (each would fail TryAllocate). After a run
    // of them it jumps to the next rank that may fit instead of testing each: in a
    // full cluster the walk was O(nodes) per pod. Not in a short list (a topology
    // domain's nodes), where testing the rest costs less than the index's descents.
    constexpr int32_t kMissesBeforeJump = 8;
    constexpr std::ptrdiff_t kShortList = 1024;
    const auto begin = allowed->begin(), end = allowed->end();
    // True once the search has its nodes.
    auto visit = [&](int32_t r) {
      NodeIndex i = base.NodeAtRank(r);
      if (ov_.Touched(i)) return false;
      return consider(i, /*cacheable=*/true) && ++found >= limit;
    };
    // A label list's walk kept from an earlier search: its positions that passed
    // MayFit are visited again (in order, the ones that now fail dropped), the others
    // still fail it; the walk goes on where it stopped.
    NodeFitCache::Walk* walk = nullptr;
    auto it = begin;
    if (fit_cache_ != nullptr && allowed == ctx.label_list) {
      walk = &fit_cache_->WalkFor(allowed, lo, need, base.MayFitEpoch());
      std::vector<int32_t>& kept = walk->may_fit;
      size_t w = 0;
      bool enough = false;
      for (const int32_t pos : kept) {
        const int32_t r = (*allowed)[static_cast<size_t>(pos)];
        if (!enough && !free.MayFit(r, lo, need)) continue;
        kept[w++] = pos;
        enough = enough || visit(r);
      }
      kept.resize(w);
      if (enough) return done();
      it = begin + static_cast<std::ptrdiff_t>(walk->walked);
    }
    int32_t misses = 0;
    while (it != end) {
      const int32_t r = *it;
      if (!free.MayFit(r, lo, need)) {
        if (++misses < kMissesBeforeJump || end - it < kShortList) {
          ++it;
          continue;
        }
        misses = 0;
        const int32_t next = free.NextMayFit(lo, r + 1, need);
        if (next < 0) {
          it = end;
          break;
        }
        it = std::lower_bound(it + 1, end, next);
        continue;
      }
      misses = 0;
      if (walk != nullptr) walk->may_fit.push_back(static_cast<int32_t>(it - begin));
      ++it;
      if (visit(r)) break;
    }
    if (walk != nullptr) walk->walked = static_cast<size_t>(it - begin);
    return done();
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
      if (consider(i, /*cacheable=*/true) && ++found >= limit) break;
    }
  }
  return done();
}

}  // namespace muster::placement
