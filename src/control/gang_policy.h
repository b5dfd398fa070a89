// A gang's own start order, success rule and failure rules (JobSet startupPolicy
// InOrder / dependsOn, successPolicy, failurePolicy.rules), as pure functions of its
// Workload and its pods' phases, for the executors that run pods (serve's local and
// emulated executors). The engine never calls them: admission and placement are
// unaffected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/gang_runtime.h"
#include "engine/lifecycle.h"
#include "model/workload.h"

namespace muster::control {

enum class PolicyPodPhase { kWaiting, kRunning, kSucceeded, kFailed };

// One pod of the gang (pods a shrink stopped are left out by the caller).
struct PolicyPod {
  int32_t pod_set = 0;
  int32_t index = 0;
  PolicyPodPhase phase = PolicyPodPhase::kWaiting;
  // kFailed: the gang's failure message for it ("pod <name> failed: <how>").
  std::string failure = {};
};

// Whether some pod set of `w` starts after another (InOrder, dependsOn).
bool HasStartOrder(const model::Workload& w);

// By pod set: whether its pods must wait (StartBlocker has a reason). All false
// without a start order.
std::vector<bool> BlockedPodSets(const model::Workload& w, const std::vector<PolicyPod>& pods);

// Why the pods of `pod_set` may not start yet ("waiting for replicated job X to be
// Ready"), or nullopt once every pod set it starts after is Ready (each of its pods
// running or succeeded: upstream's ready + succeeded = parallelism for each child
// Job) or Complete (each of its pods succeeded).
std::optional<std::string> StartBlocker(const model::Workload& w, int32_t pod_set,
                                        const std::vector<PolicyPod>& pods);

// JobSet successPolicy: the child Jobs of the target pod sets (all when none is
// named) that succeeded — a child Job is pods_per_job consecutive indices, done when
// every one succeeded — reach one (Any) or all of them (All).
bool ChildJobSuccessMet(const model::Workload& w, const std::vector<PolicyPod>& pods);

// The reason muster records for a failed child Job (one of its pods failed) and the
// Job controller's message for it.
inline constexpr char kChildJobFailureReason[] = "BackoffLimitExceeded";
inline constexpr char kChildJobFailureMessage[] = "Job has reached the specified backoff limit";

struct FailureRuleMatch {
  engine::FailureDirective directive = engine::FailureDirective::kPolicy;
  std::string why;  // "failurePolicy rule <name>: <action>"; empty when no rule matched
};

// failurePolicy.rules: the first rule whose targetReplicatedJobs, onJobFailureReasons
// and onJobFailureMessagePatterns match a child Job of `pod_set` failing with
// `reason` / `message`. No match: RestartJobSet (kPolicy, counted toward maxRestarts).
FailureRuleMatch MatchFailureRule(const model::Workload& w, int32_t pod_set,
                                  const std::string& reason, const std::string& message);

// A JobSet gang's outcome (gang_policy.child_jobs): success once its successPolicy
// is met (upstream then deletes the still-active Jobs: the gang stops at once), else
// the failure of its first failed pod with the failurePolicy rule it matched;
// nullopt while neither.
std::optional<GangOutcome> ChildJobOutcome(const std::string& key, const model::Workload& w,
                                           const std::vector<PolicyPod>& pods);

}  // namespace muster::control
