#include "placement/scorer_factory.h"

#include "placement/scorers/best_fit_scorer.h"
#include "placement/scorers/binpack_scorer.h"
#include "placement/scorers/fgd_scorer.h"
#include "placement/scorers/gpu_packing_scorer.h"
#include "placement/scorers/least_allocated_scorer.h"
#include "placement/scorers/taint_penalty_scorer.h"

namespace muster::placement {

std::unique_ptr<Scorer> MakePolicyScorer(const model::SchedulerConfiguration& config,
                                         const PlannerOptions& options) {
  using P = model::ScoringPolicy;
  switch (config.scoring) {
    case P::kBinpack:
      return std::make_unique<BinpackScorer>(config.binpack_weights);
    case P::kSpread:
      return std::make_unique<LeastAllocatedScorer>();
    case P::kGpuPacking:
      return std::make_unique<GpuPackingScorer>();
    case P::kBestFit:
      return std::make_unique<BestFitScorer>();
    case P::kFgd:
      return std::make_unique<FgdScorer>(options.fgd);
  }
  return std::make_unique<BinpackScorer>(config.binpack_weights);
}

std::unique_ptr<Scorer> MakeScorer(const model::SchedulerConfiguration& config,
                                   const PlannerOptions& options) {
  std::vector<std::unique_ptr<Scorer>> parts;
  parts.push_back(MakePolicyScorer(config, options));
  parts.push_back(std::make_unique<TaintPenaltyScorer>());
  return std::make_unique<CombinedScorer>(std::move(parts));
}

}  // namespace muster::placement
