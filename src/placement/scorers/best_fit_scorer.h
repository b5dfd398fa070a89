// Best fit: the node the pod leaves with the least slack. Slack is the largest
// free share, after placement, among the resources the pod requests.
#pragma once

#include <algorithm>

#include "placement/scorers/scorer.h"

namespace muster::placement {

class BestFitScorer final : public Scorer {
 public:
  std::string_view Name() const override { return "best-fit"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    int64_t worst = 0;
    bool any = false;
    in.request.ForEachNonZero([&](ResourceId id, int64_t req) {
      int64_t cap = in.allocatable.Get(id);
      if (cap <= 0 || id == kPods) return;
      int64_t left = Clamp(cap - in.used.Get(id) - req, 0, cap);
      worst = std::max(worst, static_cast<int64_t>(static_cast<__int128>(left) * kMaxScore / cap));
      any = true;
    });
    return any ? kMaxScore - worst : 0;
  }
};

}  // namespace muster::placement
