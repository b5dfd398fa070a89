#include "kube/backoff.h"

#include <algorithm>
#include <memory>
#include <random>
#include <utility>

namespace muster::kube {

Backoff::Backoff(BackoffPolicy policy, std::function<double()> random)
    : policy_(policy), random_(std::move(random)) {
  if (!random_) {
    auto rng = std::make_shared<std::mt19937>(std::random_device{}());
    random_ = [rng] { return std::uniform_real_distribution<double>(0.0, 1.0)(*rng); };
  }
}

std::chrono::milliseconds Backoff::Next() {
  double base = static_cast<double>(policy_.initial.count());
  const double cap = static_cast<double>(policy_.max.count());
  for (int i = 0; i < failures_ && base < cap; ++i) base *= policy_.factor;
  base = std::min(base, cap);
  ++failures_;
  const double r = std::clamp(random_(), 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(base * (1.0 + policy_.jitter * r)));
}

}  // namespace muster::kube
