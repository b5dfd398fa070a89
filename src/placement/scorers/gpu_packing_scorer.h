// GPU packing, as the FGD paper's simulator defines it (hkust-adsl/kubernetes-
// scheduler-simulator, GpuPackingScorePlugin), in its 0..100 integer steps scaled
// to kMaxScore so ties are the simulator's ties. From best to worst:
//   1. the pod fits on already shared devices: 100 - (free percent of the devices
//      it takes) / 10, at least 50;
//   2. it needs whole free devices on a node with some GPU in use: 50 - devices
//      taken, at least 33;
//   3. every GPU of the node is free: 33 - free devices, at least free devices.
// Pods without GPUs score 0 everywhere: GPU packing has no opinion on them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "placement/scorers/scorer.h"

namespace muster::placement {

class GpuPackingScorer final : public Scorer {
 public:
  std::string_view Name() const override { return "gpu-packing"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    return Clamp(Steps(in), 0, 100) * (kMaxScore / 100);
  }

 private:
  static constexpr int32_t kMilliPerDevice = 1000;

  static int64_t Steps(const ScoreInput& in) {
    const int64_t per_device = in.gpu_milli > 0 ? in.gpu_milli : kMilliPerDevice;
    int64_t want = in.gpu_milli > 0 ? 1 : in.request.Get(kNvidiaGpu);
    if (want <= 0) return 0;
    const int32_t devices = static_cast<int32_t>(in.device_used_milli.size());
    int64_t fully_free = 0;
    for (int32_t used : in.device_used_milli) fully_free += used == 0;
    if (fully_free == devices) return std::max<int64_t>(100 / 3 - fully_free, fully_free);
    // Devices by free milli, least free first (stable: lower index on ties), the
    // order the simulator fills them in.
    std::vector<int32_t> order(devices);
    for (int32_t d = 0; d < devices; ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return in.device_used_milli[a] > in.device_used_milli[b];
    });
    int64_t whole_taken = 0;
    int64_t free_percent = 0;
    for (int32_t d : order) {
      if (want == 0) break;
      const int64_t free = kMilliPerDevice - in.device_used_milli[d];
      if (per_device > free) continue;
      --want;
      whole_taken += free == kMilliPerDevice;
      free_percent += free * 100 / kMilliPerDevice;
    }
    if (want > 0) return 0;  // the fit check should have rejected the node
    if (whole_taken > 0) return std::max<int64_t>(100 / 2 - whole_taken, 100 / 3);
    return std::max<int64_t>(100 - free_percent / 10, 100 / 2);
  }
};

}  // namespace muster::placement
