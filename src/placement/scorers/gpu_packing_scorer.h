// GPU packing: fill the nodes whose GPUs are already busy and keep whole nodes'
// GPUs free for large gangs. GPU pods prefer the fewest free devices after
// placement; a shared fraction prefers an already shared device; pods without GPUs
// prefer nodes without GPUs.
#pragma once

#include "placement/scorers/scorer.h"

namespace muster::placement {

class GpuPackingScorer final : public Scorer {
 public:
  std::string_view Name() const override { return "gpu-packing"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    const int64_t devices = static_cast<int64_t>(in.device_used_milli.size());
    if (in.request.Get(kNvidiaGpu) == 0) {
      if (devices == 0) return kMaxScore;
      int64_t free = devices - in.used.Get(kNvidiaGpu);
      return (kMaxScore / 2) * (devices - free) / devices;  // at most half
    }
    if (devices == 0) return 0;
    int64_t free_milli = 0;
    for (int32_t m : in.device_used_milli) free_milli += 1000 - m;
    int64_t taken = in.gpu_milli > 0 ? in.gpu_milli
                                     : static_cast<int64_t>(in.chosen_devices.size()) * 1000;
    int64_t left = Clamp(free_milli - taken, 0, devices * 1000);
    int64_t score = kMaxScore - left * kMaxScore / (devices * 1000);
    if (in.gpu_milli > 0 && !in.chosen_devices.empty() &&
        in.device_used_milli[in.chosen_devices[0]] > 0) {
      score = Clamp(score + kMaxScore / 10, 0, kMaxScore);  // shares an already shared GPU
    }
    return score;
  }
};

}  // namespace muster::placement
