// A batch/v1 Job's podFailurePolicy applied to its failed pods (upstream's
// pkg/controller/job/pod_failure_policy.go): rules in order, the first match wins;
// no match counts the failure. Serve's gang fails or restarts whole, so the gang's
// verdict is the strongest of its failed pods': FailJob, then FailIndex (the whole
// Job fails, reason FailedIndexes), then Count; Ignore only when every failure is
// ignored (the gang restarts without counting one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/gang_runtime.h"
#include "model/pod_failure_policy.h"
#include "model/workload.h"

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

// A failed pod of a gang, as an executor saw it end.
struct EndedPod {
  std::string name;
  int32_t pod_set = 0;  // index into the workload's pod sets
  int exit_code = 0;
  std::string message;  // empty: "exit code N" is said instead
};

// The outcome of a gang some of whose pods failed (none: nullopt): the first failed
// pod's message, then the Job's podFailurePolicy over all of them. Both executors
// (local processes and emulated pods) decide a failure with it.
std::optional<control::GangOutcome> FailedGangOutcome(const std::string& key,
                                                      const model::Workload& workload,
                                                      const std::vector<EndedPod>& failed);

}  // namespace muster::server
