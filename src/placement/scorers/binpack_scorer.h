// Volcano binpack: per resource the pod requests, weight * (used + request) /
// allocatable; the weighted mean over those resources. A node the pod overflows
// scores 0 for that resource.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "placement/scorers/scorer.h"

namespace muster::placement {

class BinpackScorer final : public Scorer {
 public:
  // weights: resource name -> weight; empty = cpu 1, memory 1, nvidia.com/gpu 1.
  explicit BinpackScorer(const std::map<std::string, int64_t>& weights = {}) {
    if (weights.empty()) {
      weights_ = {{kCpu, 1}, {kMemory, 1}, {kNvidiaGpu, 1}};
    } else {
      for (const auto& [name, w] : weights) weights_.emplace_back(ResourceNames::Intern(name), w);
    }
  }
  std::string_view Name() const override { return "binpack"; }
  bool PrefersFullNodes() const override { return true; }

  int64_t Score(const ScoreInput& in) const override {
    int64_t sum = 0;
    int64_t weight_sum = 0;
    for (const auto& [id, w] : weights_) {
      int64_t req = in.request.Get(id);
      if (req == 0 || w <= 0) continue;
      weight_sum += w;
      int64_t cap = in.allocatable.Get(id);
      int64_t after = in.used.Get(id) + req;
      if (cap <= 0 || after > cap) continue;
      sum += w <= INT64_MAX / kMaxScore
                 ? MulDiv(after, w * kMaxScore, cap)
                 : static_cast<int64_t>(static_cast<__int128>(after) * w * kMaxScore / cap);
    }
    return weight_sum == 0 ? 0 : sum / weight_sum;
  }

 private:
  std::vector<std::pair<ResourceId, int64_t>> weights_;
};

}  // namespace muster::placement
