#include "sim/packing_experiment.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "core/clock.h"
#include "sim/trace_openb.h"

namespace muster::sim {

namespace {

int64_t ClusterGpuMilli(const placement::ClusterState& state) {
  int64_t total = 0;
  for (placement::NodeIndex i = 0; i < state.NodeCount(); ++i) {
    total += state.GetNode(i).allocatable.Get(kNvidiaGpu) * 1000;
  }
  return total;
}

// GPU milli a pod asks per device (1000 for whole GPUs, the share for a fraction,
// 0 without GPUs): what upstream's tune-up compares with the remaining gap.
int64_t PerGpuMilli(const model::Workload& w) {
  const int64_t total = WorkloadGpuMilli(w);
  int64_t whole = 0;
  for (const model::PodSet& ps : w.pod_sets) whole += ps.requests.Get(kNvidiaGpu);
  return whole > 0 ? 1000 : total;
}

}  // namespace

std::vector<model::Workload> PackingArrivals(const std::vector<model::Workload>& pods,
                                             int64_t total_gpu_milli, uint64_t seed,
                                             const PackingOptions& options) {
  // Upstream sorts by name before shuffling so the order depends on the seed only,
  // not on the file's order. Its generator is Go's math/rand; ours is splitmix64,
  // so a given seed gives a different (equally random) order than upstream's.
  std::vector<const model::Workload*> sorted;
  sorted.reserve(pods.size());
  for (const model::Workload& w : pods) sorted.push_back(&w);
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const model::Workload* a, const model::Workload* b) { return a->key < b->key; });

  Rng rng(seed);
  std::vector<const model::Workload*> order = sorted;
  if (options.shuffle) {
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[rng.Uniform(i)]);
    }
  }

  std::vector<model::Workload> out;
  int64_t demand = 0;
  for (const model::Workload* w : order) demand += WorkloadGpuMilli(*w);
  const double target = options.tune_ratio * static_cast<double>(total_gpu_milli);
  std::vector<bool> removed(order.size(), false);
  if (options.tune_ratio > 0 && static_cast<double>(demand) > target) {
    // Tune down: drop random pods until the demand fits under the target.
    std::vector<size_t> alive(order.size());
    for (size_t i = 0; i < alive.size(); ++i) alive[i] = i;
    while (static_cast<double>(demand) > target && !alive.empty()) {
      size_t k = rng.Uniform(alive.size());
      demand -= WorkloadGpuMilli(*order[alive[k]]);
      removed[alive[k]] = true;
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  out.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (!removed[i]) out.push_back(*order[i]);
  }
  if (options.tune_ratio > 0 && !sorted.empty()) {
    // Tune up: append random copies (they arrive after every original pod).
    // As upstream (tuneUpPods), the copy's per-GPU milli is compared with the gap
    // but its whole demand is added, so a multi-GPU copy may overshoot the target
    // by up to 7 GPUs; the next copy asking more than the gap ends the loop.
    for (int64_t i = 0;; ++i) {
      const model::Workload& src = *sorted[rng.Uniform(sorted.size())];
      const int64_t milli = WorkloadGpuMilli(src);
      if (static_cast<double>(demand + PerGpuMilli(src)) > target) break;
      model::Workload copy = src;
      copy.meta.name += "-tuned-" + std::to_string(i);
      copy.key = copy.meta.Key();
      out.push_back(std::move(copy));
      demand += milli;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].meta.order = static_cast<int64_t>(i);
  return out;
}

Result<PackingResult> RunPackingExperimentOn(placement::ClusterState& state,
                                             const placement::GangPlanner& planner,
                                             const std::vector<model::Workload>& pods,
                                             uint64_t seed, const PackingOptions& options) {
  PackingResult r;
  r.total_gpu_milli = ClusterGpuMilli(state);
  if (r.total_gpu_milli <= 0) {
    return InvalidArgument("packing experiment: the cluster has no nvidia.com/gpu capacity");
  }
  const std::vector<model::Workload> arrivals =
      PackingArrivals(pods, r.total_gpu_milli, seed, options);

  // Sum and count of allocation-ratio samples per rounded arrived percentage.
  std::map<int, std::pair<double, int64_t>> buckets;
  const double total = static_cast<double>(r.total_gpu_milli);
  for (const model::Workload& w : arrivals) {
    const int64_t milli = WorkloadGpuMilli(w);
    ++r.pods_arrived;
    r.arrived_gpu_milli += milli;
    placement::PlacementRequest request;
    request.workload = &w;
    auto planned = planner.Plan(state, request);
    bool placed = false;
    if (const auto* plan = std::get_if<placement::GangPlan>(&planned)) {
      Status committed = state.Commit(*plan, w);
      // A plan the state then rejects is the planner's bug, not a full cluster.
      if (!committed.ok()) {
        return Internal("packing experiment: plan for " + w.key +
                        " failed to commit: " + committed.message());
      }
      placed = true;
    }
    if (placed) {
      ++r.pods_placed;
      r.allocated_gpu_milli += milli;
    } else {
      ++r.pods_failed;
    }
    const int arrived_pct = static_cast<int>(std::lround(100.0 * r.arrived_gpu_milli / total));
    auto& b = buckets[arrived_pct];
    b.first += 100.0 * r.allocated_gpu_milli / total;
    ++b.second;
  }
  for (const auto& [pct, b] : buckets) {
    // Upstream rounds the per-sample ratio to 0.01% before averaging; the
    // difference is below that rounding, so keep full precision.
    r.curve[pct] = b.first / static_cast<double>(b.second);
  }
  r.final_allocation_ratio = static_cast<double>(r.allocated_gpu_milli) / total;
  auto it = r.curve.find(130);
  r.allocation_at_130_percent = it != r.curve.end() ? it->second : 100.0 * r.final_allocation_ratio;
  return r;
}

placement::PlannerOptions PackingPlannerOptions(const std::vector<model::Workload>& pods,
                                                model::ScoringPolicy policy, uint64_t seed,
                                                const PackingOptions& options) {
  placement::PlannerOptions opts;
  // The simulator runs kube-scheduler with percentageOfNodesToScore: 100.
  opts.max_scored_nodes = 0;
  // The scorers' 0..100 steps make ties common, so how they break matters (see
  // PackingOptions::random_tie_break). Random draws use a stream apart from the
  // shuffle's.
  opts.random_tie_break = options.random_tie_break;
  opts.tie_break_seed = seed * 0x9e3779b97f4a7c15ULL + 0x7469652d627265ULL;
  if (policy == model::ScoringPolicy::kFgd) {
    // Upstream's typical pods come from the original workload (SetTypicalPods
    // runs before tuning), cpu-only pods included.
    opts.fgd = placement::TaskDistributionFromWorkloads(pods, std::string(kGpuModelLabel));
  }
  return opts;
}

Result<PackingResult> RunPackingExperiment(const std::vector<model::Node>& cluster,
                                           const std::vector<model::Workload>& pods,
                                           model::ScoringPolicy policy, uint64_t seed,
                                           const PackingOptions& options) {
  auto state = placement::BuildClusterState(cluster, {}, {}, {});
  if (!state.ok()) return state.status();
  model::SchedulerConfiguration config;
  config.scoring = policy;
  std::unique_ptr<placement::GangPlanner> planner =
      placement::MakeGangPlanner(config, PackingPlannerOptions(pods, policy, seed, options));
  if (!planner) return Internal("packing experiment: MakeGangPlanner returned no planner");
  return RunPackingExperimentOn(**state, *planner, pods, seed, options);
}

Result<model::ScoringPolicy> ParseScoringPolicy(const std::string& name) {
  std::string n;
  for (char c : name) {
    if (c != '-' && c != '_')
      n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (n == "fgd") return model::ScoringPolicy::kFgd;
  if (n == "bestfit") return model::ScoringPolicy::kBestFit;
  if (n == "gpupacking") return model::ScoringPolicy::kGpuPacking;
  if (n == "binpack") return model::ScoringPolicy::kBinpack;
  if (n == "spread") return model::ScoringPolicy::kSpread;
  return InvalidArgument("unknown scoring policy \"" + name +
                         "\" (known: fgd, bestfit, gpupacking, binpack, spread)");
}

}  // namespace muster::sim
