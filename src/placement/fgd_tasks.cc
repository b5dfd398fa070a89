// TaskDistributionFromWorkloads: the FGD scorer's typical pods, derived from a
// workload the way the paper's simulator does (utils.GetTypicalPods with cpu pods
// included, popularity threshold 95%, step 1, no GPU weighting).
#include <algorithm>
#include <map>
#include <tuple>

#include "placement/node_info.h"
#include "placement/placement.h"

namespace muster::placement {
namespace {

using ShapeKey = std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>>;

// Models a pod set accepts: the first required term's `In` on the model label.
std::vector<std::string> AcceptedModels(const model::PodSet& ps, const std::string& label) {
  const model::NodeAffinity& aff =
      ps.node_affinity.required.empty() ? ps.tmpl.spec.node_affinity : ps.node_affinity;
  std::vector<std::string> out;
  if (label.empty() || aff.required.empty()) return out;
  for (const auto& req : aff.required.front().match_expressions) {
    if (req.key == label && req.op == model::SelectorOperator::kIn) out = req.values;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

FgdTaskDistribution TaskDistributionFromWorkloads(const std::vector<model::Workload>& workloads,
                                                  const std::string& gpu_model_label,
                                                  int32_t popularity_percent) {
  std::map<ShapeKey, int64_t> counts;
  int64_t total = 0;
  for (const auto& w : workloads) {
    for (const auto& ps : w.pod_sets) {
      if (ps.count <= 0) continue;
      PodShape shape = MakePodShape(ps);
      int32_t milli = 0, gpus = 0;
      if (shape.gpu_milli > 0) {
        milli = shape.gpu_milli;
        gpus = 1;
      } else if (shape.gpus > 0) {
        milli = kMilliPerGpu;
        gpus = shape.gpus;
      }
      counts[ShapeKey{shape.requests.Get(kCpu), milli, gpus,
                      AcceptedModels(ps, gpu_model_label)}] += ps.count;
      total += ps.count;
    }
  }
  // Most popular first; equal counts in shape order so the cut is deterministic.
  std::vector<std::pair<const ShapeKey*, int64_t>> sorted;
  for (const auto& [k, n] : counts) sorted.emplace_back(&k, n);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  FgdTaskDistribution out;
  out.gpu_model_label = gpu_model_label;
  const double wanted = static_cast<double>(std::clamp(popularity_percent, 0, 100)) *
                        static_cast<double>(total) / 100.0;
  double covered = 0;
  for (const auto& [key, n] : sorted) {
    if (covered >= wanted && !out.tasks.empty()) break;
    const auto& [cpu, milli, gpus, models] = *key;
    out.tasks.push_back(FgdTaskType{cpu, milli, gpus, models, static_cast<double>(n)});
    covered += static_cast<double>(n);
  }
  for (auto& t : out.tasks) t.weight /= covered;
  return out;
}

}  // namespace muster::placement
