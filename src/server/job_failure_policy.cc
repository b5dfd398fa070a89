#include "server/job_failure_policy.h"

#include <algorithm>

namespace muster::server {
namespace {

bool ExitCodesMatch(const model::PodFailurePolicyRule& rule, const FailedPodInfo& pod) {
  if (rule.op.empty()) return false;
  if (rule.container_name && *rule.container_name != pod.container) return false;
  // Upstream: a container that succeeded (exit 0) never matches, NotIn included.
  if (pod.exit_code == 0) return false;
  const bool in =
      std::find(rule.values.begin(), rule.values.end(), pod.exit_code) != rule.values.end();
  return rule.op == "In" ? in : !in;
}

}  // namespace

std::optional<size_t> MatchPodFailureRule(const std::vector<model::PodFailurePolicyRule>& rules,
                                          const FailedPodInfo& pod) {
  for (size_t i = 0; i < rules.size(); ++i) {
    // onPodConditions never match: serve sets no condition on a failed pod.
    if (ExitCodesMatch(rules[i], pod)) return i;
  }
  return std::nullopt;
}

void ApplyPodFailurePolicy(const std::vector<model::PodFailurePolicyRule>& rules,
                           const std::vector<FailedPodInfo>& failed,
                           control::GangOutcome& outcome) {
  using Policy = control::GangOutcome::Policy;
  if (rules.empty() || failed.empty()) return;
  bool all_ignored = true;
  std::string ignored_message, fail_index_message;
  for (const FailedPodInfo& pod : failed) {
    auto index = MatchPodFailureRule(rules, pod);
    const std::string action = index ? rules[*index].action : "Count";
    const std::string message =
        index ? "Container " + pod.container + " for pod " + pod.namespace_ + "/" + pod.name +
                    " failed with exit code " + std::to_string(pod.exit_code) + " matching " +
                    action + " rule at index " + std::to_string(*index)
              : "";
    if (action == "FailJob") {
      outcome.policy = Policy::kFail;
      outcome.reason = "PodFailurePolicy";
      outcome.message = message;
      return;
    }
    if (action == "FailIndex" && fail_index_message.empty()) fail_index_message = message;
    if (action == "Ignore") {
      if (ignored_message.empty()) ignored_message = message;
    } else {
      all_ignored = false;
    }
  }
  if (!fail_index_message.empty()) {
    outcome.policy = Policy::kFail;
    outcome.reason = "FailedIndexes";
    outcome.message = fail_index_message;
  } else if (all_ignored) {
    outcome.policy = Policy::kIgnore;
    outcome.message = ignored_message;
  }
}

std::optional<control::GangOutcome> FailedGangOutcome(const std::string& key,
                                                      const model::Workload& workload,
                                                      const std::vector<EndedPod>& failed) {
  if (failed.empty()) return std::nullopt;
  const EndedPod& first = failed.front();
  control::GangOutcome outcome{
      key, false,
      "pod " + first.name + " failed: " +
          (first.message.empty() ? "exit code " + std::to_string(first.exit_code) : first.message)};
  std::vector<FailedPodInfo> infos;
  infos.reserve(failed.size());
  for (const EndedPod& pod : failed) {
    const auto& containers =
        workload.pod_sets[static_cast<size_t>(pod.pod_set)].tmpl.spec.containers;
    infos.push_back({workload.meta.namespace_, pod.name,
                     containers.empty() ? "" : containers.front().name, pod.exit_code});
  }
  ApplyPodFailurePolicy(workload.lifecycle.pod_failure_policy, infos, outcome);
  return outcome;
}

}  // namespace muster::server
