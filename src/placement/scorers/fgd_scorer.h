// Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation", USENIX
// ATC'23): place a pod where it increases the node's expected GPU fragmentation
// the least. A node's fragmentation for one task type is the free GPU capacity that
// type cannot use (all of it when the type does not fit at all); the expectation
// weights task types by popularity in the target workload. CPU is not modelled in
// the task types: the planner's filters already checked it for the real pod.
#pragma once

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "placement/scorers/scorer.h"

namespace muster::placement {

struct FgdTaskType {
  int32_t gpus = 0;       // whole devices
  int32_t gpu_milli = 0;  // or a shared fraction
  int64_t weight = 1;     // popularity
};

class FgdScorer final : public Scorer {
 public:
  // A default mix of shared and whole-GPU tasks, as in GPU-sharing clusters.
  static std::vector<FgdTaskType> DefaultWorkload() {
    return {{0, 250, 20}, {0, 500, 20}, {0, 750, 10}, {1, 0, 30}, {2, 0, 10}, {4, 0, 5}, {8, 0, 5}};
  }

  explicit FgdScorer(std::vector<FgdTaskType> workload = DefaultWorkload())
      : workload_(std::move(workload)) {}
  std::string_view Name() const override { return "fgd"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    const int64_t devices = static_cast<int64_t>(in.device_used_milli.size());
    if (devices == 0) return kMaxScore / 2;
    std::vector<int32_t> after(in.device_used_milli.begin(), in.device_used_milli.end());
    int32_t per = in.gpu_milli > 0 ? in.gpu_milli : 1000;
    for (int32_t d : in.chosen_devices) after[d] = std::min(1000, after[d] + per);
    int64_t delta = Fragmentation(after) - Fragmentation(in.device_used_milli);
    int64_t half = kMaxScore / 2;
    return Clamp(half - delta * half / (devices * 1000), 0, kMaxScore);
  }

  // Expected fragmentation in milli-GPUs (weighted mean over task types).
  int64_t Fragmentation(std::span<const int32_t> used) const {
    int64_t sum = 0;
    int64_t weights = 0;
    for (const auto& t : workload_) {
      sum += t.weight * TaskFragmentation(used, t);
      weights += t.weight;
    }
    return weights == 0 ? 0 : sum / weights;
  }

 private:
  static int64_t TaskFragmentation(std::span<const int32_t> used, const FgdTaskType& t) {
    int64_t free_total = 0;
    int64_t whole_free = 0;
    bool fits_shared = false;
    for (int32_t u : used) {
      int32_t free = 1000 - u;
      free_total += free;
      whole_free += (u == 0);
      fits_shared |= t.gpu_milli > 0 && free >= t.gpu_milli;
    }
    bool fits = t.gpu_milli > 0 ? fits_shared : whole_free >= t.gpus;
    if (!fits) return free_total;
    int64_t frag = 0;
    for (int32_t u : used) {
      int32_t free = 1000 - u;
      if (t.gpu_milli > 0 ? free < t.gpu_milli : (free > 0 && free < 1000)) frag += free;
    }
    return frag;
  }

  std::vector<FgdTaskType> workload_;
};

}  // namespace muster::placement
