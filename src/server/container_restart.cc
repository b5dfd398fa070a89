#include "server/container_restart.h"

#include <algorithm>

namespace muster::server {
namespace {

constexpr double kInitialBackOff = 10;  // the kubelet's
constexpr double kMaxBackOff = 300;     // MaxContainerBackOff
constexpr double kBackOffReset = 600;   // a back-off untouched this long is forgotten

}  // namespace

bool RestartsInPlace(const std::string& restart_policy, int exit_code) {
  if (restart_policy == "Always" || restart_policy.empty()) return true;
  return restart_policy == "OnFailure" && exit_code != 0;
}

double RestartBackOff::Wait(double ran_seconds) {
  if (ran_seconds >= kBackOffReset) next_ = 0;
  const double wait = next_;
  next_ = next_ == 0 ? kInitialBackOff : std::min(next_ * 2, kMaxBackOff);
  return wait;
}

}  // namespace muster::server
