#include "workloads/elastic.h"

#include <algorithm>

namespace muster::workloads {

bool IsElastic(const model::Workload& w, bool kueue_queued) {
  using S = model::ElasticSource;
  switch (w.elastic) {
    case S::kPyTorchElasticPolicy:
      break;
    case S::kVolcanoMinAvailable:
    case S::kPodGroupMinMember:
      if (kueue_queued) return false;
      break;
    case S::kNone:
    case S::kKueueElasticJob:
      return false;
  }
  std::vector<int32_t> lo = MinCounts(w), hi = MaxCounts(w);
  return lo != hi;
}

std::vector<int32_t> MinCounts(const model::Workload& w) {
  std::vector<int32_t> out;
  int64_t total = 0;
  for (const model::PodSet& ps : w.pod_sets) {
    out.push_back(std::clamp(ps.min_count, 0, std::max(ps.count, 0)));
    total += out.back();
  }
  // The job's minimum may exceed its pod sets' (minAvailable above the tasks' own):
  // the rest comes from the first pod sets with room.
  for (size_t i = 0; i < out.size() && total < w.min_available; ++i) {
    int32_t add = static_cast<int32_t>(
        std::min<int64_t>(w.pod_sets[i].count - out[i], w.min_available - total));
    if (add <= 0) continue;
    out[i] += add;
    total += add;
  }
  // A gang of no pods is no gang: the first pod set with pods gives one.
  if (total == 0) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (w.pod_sets[i].count > 0) {
        out[i] = 1;
        break;
      }
    }
  }
  return out;
}

std::vector<int32_t> MaxCounts(const model::Workload& w) {
  std::vector<int32_t> out;
  for (const model::PodSet& ps : w.pod_sets) out.push_back(std::max(ps.count, 0));
  return out;
}

int64_t StepsBetween(const std::vector<int32_t>& from, const std::vector<int32_t>& to) {
  int64_t steps = 0;
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    steps += std::abs(int64_t{to[i]} - from[i]);
  }
  return steps;
}

std::vector<int32_t> Interpolate(const std::vector<int32_t>& from, const std::vector<int32_t>& to,
                                 int64_t step, int64_t steps) {
  std::vector<int32_t> out = from;
  if (steps <= 0) return out;
  step = std::clamp<int64_t>(step, 0, steps);
  for (size_t i = 0; i < out.size() && i < to.size(); ++i) {
    int64_t d = int64_t{to[i]} - from[i];
    // Floor towards `from` in both directions: a pod set reaches `to` only at the last step.
    int64_t move = d >= 0 ? d * step / steps : -((-d) * step / steps);
    out[i] = static_cast<int32_t>(from[i] + move);
  }
  return out;
}

int64_t LargestFittingStep(int64_t lo, int64_t hi, const std::function<bool(int64_t)>& fits) {
  if (lo > hi || !fits(lo)) return -1;
  // Invariant: fits(lo); every step above hi is unknown or does not fit.
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

std::string_view ElasticSourceName(model::ElasticSource source) {
  using S = model::ElasticSource;
  switch (source) {
    case S::kPyTorchElasticPolicy:
      return "PyTorchJob elasticPolicy";
    case S::kVolcanoMinAvailable:
      return "Volcano minAvailable";
    case S::kPodGroupMinMember:
      return "PodGroup minMember";
    case S::kKueueElasticJob:
      return "Kueue elastic-job";
    case S::kNone:
      break;
  }
  return "not elastic";
}

}  // namespace muster::workloads
