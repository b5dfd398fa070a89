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
    if (pod.state == PodState::kFailed) {
      p.failure =
          "pod " + pod.name + " failed: " +
          (pod.message.empty() ? "exit code " + std::to_string(pod.exit_code) : pod.message);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<bool> LocalExecutor::BlockedPodSets(const Gang& gang) {
  if (!control::HasStartOrder(gang.workload)) {
    return std::vector<bool>(gang.workload.pod_sets.size(), false);
  }
  return control::BlockedPodSets(gang.workload, PolicyPods(gang));
}

std::optional<std::string> LocalExecutor::StartBlocker(const Gang& gang, int32_t pod_set) {
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(gang.workload.pod_sets.size()) ||
      gang.workload.pod_sets[pod_set].start_after.empty()) {
    return std::nullopt;
  }
  return control::StartBlocker(gang.workload, pod_set, PolicyPods(gang));
}

std::optional<control::GangOutcome> LocalExecutor::EvaluateChildJobs(const Gang& gang) {
  return control::ChildJobOutcome(gang.key, gang.workload, PolicyPods(gang));
}

}  // namespace muster::server
