// A batch/v1 Job's podFailurePolicy applied to its failed pods (upstream's
// pkg/controller/job/pod_failure_policy.go): rules in order, the first match wins;
// no match counts the failure. Serve's gang fails or restarts whole, so the gang's
// verdict is the strongest of its failed pods': FailJob, then FailIndex (the whole
// Job fails, reason FailedIndexes), then Count; Ignore only when every failure is
// ignored (the gang restarts without counting one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "control/gang_runtime.h"
#include "model/pod_failure_policy.h"

namespace muster::server {

struct FailedPodInfo {
  std::string namespace_, name;
  std::string container;  // the container that exited
  int exit_code = 0;
};

// The index of the first rule `pod` matches, or nullopt.
std::optional<size_t> MatchPodFailureRule(const std::vector<model::PodFailurePolicyRule>& rules,
                                          const FailedPodInfo& pod);

// What the gang's failed pods amount to under `rules` (none: nullopt, count them).
// Fills `outcome`'s policy, reason and message.
void ApplyPodFailurePolicy(const std::vector<model::PodFailurePolicyRule>& rules,
                           const std::vector<FailedPodInfo>& failed, control::GangOutcome& outcome);

}  // namespace muster::server
