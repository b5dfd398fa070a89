// Best fit, as the FGD paper's simulator defines it (hkust-adsl/kubernetes-
// scheduler-simulator, BestFitScorePlugin): the node the pod leaves with the least
// free cpu and GPU, each normalized by the largest node shape and weighted half:
//   score = 100 * (1 - 0.5 (cpu_free - cpu_req) / max_cpu
//                    - 0.5 (gpu_milli_free - gpu_milli_req) / max_gpu_milli)
// truncated to the simulator's 0..100 integer steps (then scaled to kMaxScore),
// so equal-score nodes are the same ones the simulator sees as ties. GPU milli
// free sums every device's free share, so a half-used GPU counts as half free.
// Memory and other resources do not count (the simulator's vector is cpu, GPU).
#pragma once

#include <algorithm>
#include <cstdint>

#include "placement/scorers/scorer.h"

namespace muster::placement {

class BestFitScorer final : public Scorer {
 public:
  // The simulator's normalizers (MaxSpecCpu, MaxSpecGpu): the largest node of the
  // Alibaba cluster, 128 cpus and 8 GPUs. Larger nodes clamp to the lowest score.
  static constexpr int64_t kMaxSpecCpuMilli = 128000;
  static constexpr int64_t kMaxSpecGpuMilli = 8000;

  std::string_view Name() const override { return "best-fit"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    const int64_t cpu_free = in.allocatable.Get(kCpu) - in.used.Get(kCpu);
    int64_t gpu_free = 0;
    for (int32_t used : in.device_used_milli) gpu_free += kMilliPerDevice - used;
    const int64_t gpu_req =
        in.gpu_milli > 0 ? in.gpu_milli : in.request.Get(kNvidiaGpu) * kMilliPerDevice;
    // Same operations in the same order as the simulator (Go float64), so the
    // truncation below lands on the same integer.
    double s = 0;
    s += static_cast<double>(cpu_free - in.request.Get(kCpu)) /
         static_cast<double>(kMaxSpecCpuMilli) * 0.5;
    s += static_cast<double>(gpu_free - gpu_req) / static_cast<double>(kMaxSpecGpuMilli) * 0.5;
    const auto steps = static_cast<int64_t>((1.0 - s) * 100.0);
    return Clamp(steps, 0, 100) * (kMaxScore / 100);
  }

 private:
  static constexpr int64_t kMilliPerDevice = 1000;
};

}  // namespace muster::placement
