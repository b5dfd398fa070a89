#include <algorithm>
#include <cmath>

#include "sim/result.h"

namespace muster::sim {

Stats ComputeStats(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  // Nearest rank: the smallest value with at least p% of values at or below it.
  auto rank = [&](double p) {
    auto n = static_cast<double>(values.size());
    auto idx = static_cast<size_t>(std::ceil(p / 100.0 * n));
    idx = std::clamp<size_t>(idx, 1, values.size());
    return values[idx - 1];
  };
  s.p50 = rank(50);
  s.p90 = rank(90);
  s.p99 = rank(99);
  return s;
}

}  // namespace muster::sim
