// LocalExecutor: a gang's own start order, success rule and failure rules
// (control/gang_policy.h; JobSet startupPolicy InOrder / dependsOn, successPolicy,
// failurePolicy.rules). Pods of a pod set that starts after others stay Pending,
// their address kept, until those are Ready / Complete; then the next Run starts
// them as it starts a grown gang's pods (StartAddedPods).
#include "server/local_executor.h"

namespace muster::server {

std::vector<control::PolicyPod> LocalExecutor::PolicyPods(const Gang& gang) {
  std::vector<control::PolicyPod> out;
  out.reserve(gang.pods.size());
  for (const PodRun& pod : gang.pods) {
    if (pod.shrunk) continue;
    control::PolicyPod p;
    p.pod_set = pod.pod_set;
    p.index = pod.index;
    p.phase = pod.state == PodState::kWaiting     ? control::PolicyPodPhase::kWaiting
              : pod.state == PodState::kRunning   ? control::PolicyPodPhase::kRunning
              : pod.state == PodState::kSucceeded ? control::PolicyPodPhase::kSucceeded
                                                  : control::PolicyPodPhase::kFailed;
    out.push_back(p);
  }
  return out;
}

std::vector<bool> LocalExecutor::BlockedPodSets(const Gang& gang) {
  std::vector<bool> blocked(gang.workload.pod_sets.size(), false);
  bool any = false;
  for (const auto& ps : gang.workload.pod_sets) any = any || !ps.start_after.empty();
  if (!any) return blocked;
  const std::vector<control::PolicyPod> pods = PolicyPods(gang);
  for (size_t s = 0; s < blocked.size(); ++s) {
    blocked[s] = control::StartBlocker(gang.workload, static_cast<int32_t>(s), pods).has_value();
  }
  return blocked;
}

std::optional<std::string> LocalExecutor::StartBlocker(const Gang& gang, int32_t pod_set) {
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(gang.workload.pod_sets.size()) ||
      gang.workload.pod_sets[pod_set].start_after.empty()) {
    return std::nullopt;
  }
  return control::StartBlocker(gang.workload, pod_set, PolicyPods(gang));
}

std::optional<control::GangOutcome> LocalExecutor::EvaluateChildJobs(const Gang& gang) {
  const std::vector<control::PolicyPod> pods = PolicyPods(gang);
  // Upstream deletes the still-active Jobs once the JobSet completes: the gang is
  // stopped at once (its other pods get their termination grace period).
  if (control::ChildJobSuccessMet(gang.workload, pods)) {
    return control::GangOutcome{gang.key, true, ""};
  }
  for (const PodRun& pod : gang.pods) {
    if (pod.state != PodState::kFailed || pod.shrunk) continue;
    control::GangOutcome out{
        gang.key, false,
        "pod " + pod.name + " failed: " +
            (pod.message.empty() ? "exit code " + std::to_string(pod.exit_code) : pod.message)};
    const control::FailureRuleMatch rule =
        control::MatchFailureRule(gang.workload, pod.pod_set, control::kChildJobFailureReason,
                                  control::kChildJobFailureMessage);
    out.directive = rule.directive;
    if (!rule.why.empty()) out.message += "; " + rule.why;
    return out;
  }
  return std::nullopt;
}

}  // namespace muster::server
