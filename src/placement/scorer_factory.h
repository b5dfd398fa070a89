// Builds the node scorer a SchedulerConfiguration selects: the policy's scorer plus
// the PreferNoSchedule taint penalty.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "model/config.h"
#include "placement/placement.h"
#include "placement/scorers/scorer.h"

namespace muster::placement {

// Sums its parts' scores (each in [0, kMaxScore]); visiting order follows the first.
class CombinedScorer final : public Scorer {
 public:
  explicit CombinedScorer(std::vector<std::unique_ptr<Scorer>> parts) : parts_(std::move(parts)) {}
  std::string_view Name() const override { return parts_.front()->Name(); }
  bool PrefersFullNodes() const override { return parts_.front()->PrefersFullNodes(); }
  bool ScoresEachSharedDevice() const override { return parts_.front()->ScoresEachSharedDevice(); }
  bool ScoresFromInputAlone() const override {
    return std::all_of(parts_.begin(), parts_.end(),
                       [](const auto& p) { return p->ScoresFromInputAlone(); });
  }
  int64_t Score(const ScoreInput& in) const override {
    int64_t s = 0;
    for (const auto& p : parts_) s += p->Score(in);
    return s;
  }

 private:
  std::vector<std::unique_ptr<Scorer>> parts_;
};

std::unique_ptr<Scorer> MakePolicyScorer(const model::SchedulerConfiguration& config,
                                         const PlannerOptions& options = {});
std::unique_ptr<Scorer> MakeScorer(const model::SchedulerConfiguration& config,
                                   const PlannerOptions& options = {});

}  // namespace muster::placement
