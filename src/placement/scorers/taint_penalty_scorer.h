// PreferNoSchedule taints are soft: each one the pod does not tolerate costs a
// quarter of the score range (kube-scheduler's TaintToleration, as a penalty).
#pragma once

#include "placement/node_filter.h"
#include "placement/scorers/scorer.h"

namespace muster::placement {

class TaintPenaltyScorer final : public Scorer {
 public:
  std::string_view Name() const override { return "taint-penalty"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    int64_t n = CountUntoleratedPreferNoSchedule(in.taints, in.tolerations);
    return Clamp(kMaxScore - n * (kMaxScore / 4), 0, kMaxScore);
  }
};

}  // namespace muster::placement
