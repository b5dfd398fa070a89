// Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation", USENIX
// ATC'23), as the paper's simulator (hkust-adsl/kubernetes-scheduler-simulator,
// FGDScorePlugin) computes it. A node's fragmentation is measured against the
// target workload's typical pods: for each typical pod, the node's free GPU milli
// counts as fragmented in full when the pod cannot run there (too few GPUs with
// enough free milli, too little cpu, a GPU model it does not accept, or a cpu-only
// pod, which no free GPU helps), else only the devices with less free milli than
// the pod asks per GPU count. The expectation weights typical pods by popularity;
// the score is the sigmoid of the reduction in expected fragmentation the pod
// brings, in the simulator's 0..100 steps (scaled to kMaxScore) so ties match.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "placement/placement.h"
#include "placement/scorers/scorer.h"

namespace muster::placement {

class FgdScorer final : public Scorer {
 public:
  // Used when no distribution is given: a mix of shared and whole-GPU pods with
  // little cpu, as in GPU-sharing clusters.
  static FgdTaskDistribution DefaultWorkload() {
    FgdTaskDistribution d;
    d.tasks = {{0, 250, 1, {}, 20},  {0, 500, 1, {}, 20}, {0, 750, 1, {}, 10}, {0, 1000, 1, {}, 30},
               {0, 1000, 2, {}, 10}, {0, 1000, 4, {}, 5}, {0, 1000, 8, {}, 5}};
    return d;
  }

  explicit FgdScorer(FgdTaskDistribution workload = DefaultWorkload()) {
    SetTaskDistribution(std::move(workload));
  }

  // Replaces the target workload (empty tasks = the default mix).
  void SetTaskDistribution(FgdTaskDistribution workload) {
    if (workload.tasks.empty()) {
      std::string label = std::move(workload.gpu_model_label);
      workload = DefaultWorkload();
      workload.gpu_model_label = std::move(label);
    }
    double sum = 0;
    for (const auto& t : workload.tasks) sum += std::max(0.0, t.weight);
    for (auto& t : workload.tasks) t.weight = sum > 0 ? std::max(0.0, t.weight) / sum : 0;
    workload_ = std::move(workload);
  }
  const FgdTaskDistribution& TaskDistribution() const { return workload_; }

  std::string_view Name() const override { return "fgd"; }
  bool PrefersFullNodes() const override { return true; }
  bool ScoresEachSharedDevice() const override { return true; }
  // Its task distribution may be replaced (SetTaskDistribution).
  bool ScoresFromInputAlone() const override { return false; }

  int64_t Score(const ScoreInput& in) const override {
    const size_t devices = in.device_used_milli.size();
    if (devices == 0) return kMaxScore / 2;
    const std::string* model = NodeModel(in);
    const int64_t cpu_left = in.allocatable.Get(kCpu) - in.used.Get(kCpu);
    std::vector<int32_t> after(in.device_used_milli.begin(), in.device_used_milli.end());
    const int32_t per = in.gpu_milli > 0 ? in.gpu_milli : kFullGpu;
    for (int32_t d : in.chosen_devices) after[d] = std::min(kFullGpu, after[d] + per);
    double delta = Fragmentation(in.device_used_milli, cpu_left, model) -
                   Fragmentation(after, cpu_left - in.request.Get(kCpu), model);
    auto steps = static_cast<int64_t>(100.0 / (1.0 + std::exp(-delta / 1000.0)));
    return Clamp(steps * (kMaxScore / 100), 0, kMaxScore);
  }

  // Expected fragmented GPU milli of a node (used milli per device, free cpu, GPU
  // model or null when unknown).
  double Fragmentation(std::span<const int32_t> used, int64_t cpu_left,
                       const std::string* model) const {
    int64_t free_total = 0;
    for (int32_t u : used) free_total += kFullGpu - u;
    if (free_total == 0) return 0;
    double sum = 0;
    for (const auto& t : workload_.tasks) {
      sum +=
          t.weight * static_cast<double>(TaskFragmentation(used, free_total, cpu_left, model, t));
    }
    return sum;
  }

 private:
  static constexpr int32_t kFullGpu = 1000;

  const std::string* NodeModel(const ScoreInput& in) const {
    if (workload_.gpu_model_label.empty() || in.node_labels == nullptr) return nullptr;
    auto it = in.node_labels->find(workload_.gpu_model_label);
    return it == in.node_labels->end() ? nullptr : &it->second;
  }

  bool Accessible(const FgdTaskType& t, const std::string* model) const {
    if (t.gpu_models.empty() || workload_.gpu_model_label.empty()) return true;
    if (model == nullptr) return false;
    return std::binary_search(t.gpu_models.begin(), t.gpu_models.end(), *model);
  }

  int64_t TaskFragmentation(std::span<const int32_t> used, int64_t free_total, int64_t cpu_left,
                            const std::string* model, const FgdTaskType& t) const {
    if (t.gpu_milli <= 0 || !Accessible(t, model)) return free_total;
    int32_t fitting = 0;
    int64_t too_small = 0;
    for (int32_t u : used) {
      int32_t free = kFullGpu - u;
      if (free >= t.gpu_milli) {
        ++fitting;
      } else {
        too_small += free;
      }
    }
    bool fits = fitting >= std::max(1, t.num_gpus) && cpu_left >= t.cpu_milli;
    return fits ? too_small : free_total;
  }

  FgdTaskDistribution workload_;
};

}  // namespace muster::placement
