// Spread (kube-scheduler LeastAllocated): mean over cpu, memory and GPUs of the
// share left free after placing the pod; emptier nodes score higher.
#pragma once

#include "placement/scorers/scorer.h"

namespace muster::placement {

class LeastAllocatedScorer final : public Scorer {
 public:
  std::string_view Name() const override { return "spread"; }
  bool PrefersFullNodes() const override { return false; }

  int64_t Score(const ScoreInput& in) const override {
    int64_t sum = 0;
    int64_t n = 0;
    for (ResourceId id : {kCpu, kMemory, kNvidiaGpu}) {
      int64_t cap = in.allocatable.Get(id);
      if (cap <= 0) continue;
      int64_t left = cap - in.used.Get(id) - in.request.Get(id);
      sum += MulDiv(Clamp(left, 0, cap), kMaxScore, cap);
      ++n;
    }
    return n == 0 ? 0 : sum / n;
  }
};

}  // namespace muster::placement
