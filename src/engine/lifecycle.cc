#include "engine/lifecycle.h"

#include <fmt/format.h>

#include <algorithm>

namespace muster::engine {
namespace {

bool PolicyMatches(const model::LifecyclePolicy& policy, const std::string& event) {
  return std::any_of(policy.events.begin(), policy.events.end(),
                     [&](const std::string& e) { return e == event || e == "*"; });
}

bool IsRestartAction(const std::string& action) {
  return action == "RestartJob" || action == "RestartTask" || action == "RestartPod";
}

}  // namespace

FailureVerdict DecideOnFailure(const model::LifecycleSpec& lifecycle, int32_t failures_so_far,
                               const std::string& event) {
  // An explicit Volcano policy for this event wins over the generic restart knobs,
  // as the Volcano job controller applies the first matching policy.
  for (const auto& policy : lifecycle.volcano_policies) {
    if (!PolicyMatches(policy, event)) continue;
    if (IsRestartAction(policy.action)) {
      if (failures_so_far < lifecycle.max_restarts) {
        return {FailureAction::kRestart,
                fmt::format("policy {} -> {} (retry {} of {})", event, policy.action,
                            failures_so_far + 1, lifecycle.max_restarts)};
      }
      return {FailureAction::kFail, fmt::format("policy {} -> {}, but maxRetry {} is exhausted",
                                                event, policy.action, lifecycle.max_restarts)};
    }
    return {FailureAction::kFail, fmt::format("policy {} -> {}", event, policy.action)};
  }
  if (!lifecycle.restart_on_failure) {
    return {FailureAction::kFail, "its restart policy does not restart failed pods"};
  }
  if (failures_so_far < lifecycle.max_restarts) {
    return {FailureAction::kRestart,
            fmt::format("restart {} (limit {})", failures_so_far + 1, lifecycle.max_restarts)};
  }
  return {FailureAction::kFail, fmt::format("restart limit {} reached", lifecycle.max_restarts)};
}

}  // namespace muster::engine
