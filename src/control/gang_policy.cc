#include "control/gang_policy.h"

#include <algorithm>
#include <regex>

namespace muster::control {
namespace {

int32_t PodSetNamed(const model::Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    if (w.pod_sets[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Every pod of the set has reached the state: running or succeeded (Ready), or
// succeeded (Complete). A set with no pods counts as reached.
bool Reached(int32_t pod_set, bool complete, const std::vector<PolicyPod>& pods) {
  for (const PolicyPod& p : pods) {
    if (p.pod_set != pod_set) continue;
    if (p.phase == PolicyPodPhase::kSucceeded) continue;
    if (!complete && p.phase == PolicyPodPhase::kRunning) continue;
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> StartBlocker(const model::Workload& w, int32_t pod_set,
                                        const std::vector<PolicyPod>& pods) {
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(w.pod_sets.size())) return std::nullopt;
  for (const model::PodSetDependency& d : w.pod_sets[pod_set].start_after) {
    const int32_t other = PodSetNamed(w, d.pod_set);
    if (other < 0 || Reached(other, d.complete, pods)) continue;
    if (w.meta.kind == "MPIJob") {
      return "waiting for the workers to be Ready (launcherCreationPolicy WaitForWorkersReady)";
    }
    return "waiting for replicated job " + d.pod_set + " to be " +
           (d.complete ? "Complete" : "Ready") +
           (w.gang_policy.in_order ? " (startupPolicy InOrder)" : " (dependsOn)");
  }
  return std::nullopt;
}

bool HasStartOrder(const model::Workload& w) {
  return std::any_of(w.pod_sets.begin(), w.pod_sets.end(),
                     [](const model::PodSet& ps) { return !ps.start_after.empty(); });
}

std::vector<bool> BlockedPodSets(const model::Workload& w, const std::vector<PolicyPod>& pods) {
  std::vector<bool> blocked(w.pod_sets.size(), false);
  if (!HasStartOrder(w)) return blocked;
  for (size_t s = 0; s < blocked.size(); ++s) {
    blocked[s] = StartBlocker(w, static_cast<int32_t>(s), pods).has_value();
  }
  return blocked;
}

bool ChildJobSuccessMet(const model::Workload& w, const std::vector<PolicyPod>& pods) {
  const model::GangPolicy& policy = w.gang_policy;
  int64_t expected = 0, succeeded = 0;
  for (size_t s = 0; s < w.pod_sets.size(); ++s) {
    const model::PodSet& ps = w.pod_sets[s];
    if (!policy.success_sets.empty() && !Contains(policy.success_sets, ps.name)) continue;
    const int32_t per_job = ps.pods_per_job > 0 ? ps.pods_per_job : std::max(ps.count, 1);
    const int32_t jobs = ps.count / per_job;
    expected += jobs;
    // Succeeded pods per child Job; a Job is done when all per_job of them are.
    std::vector<int32_t> done(jobs, 0);
    for (const PolicyPod& p : pods) {
      if (p.pod_set != static_cast<int32_t>(s) || p.phase != PolicyPodPhase::kSucceeded) continue;
      const int32_t job = p.index / per_job;
      if (job >= 0 && job < jobs) ++done[job];
    }
    succeeded += std::count(done.begin(), done.end(), per_job);
  }
  // Upstream compares with >=: Any needs one Job, All every target Job.
  return succeeded >= (policy.success_any ? 1 : expected);
}

FailureRuleMatch MatchFailureRule(const model::Workload& w, int32_t pod_set,
                                  const std::string& reason, const std::string& message) {
  FailureRuleMatch match;
  const std::string set_name = pod_set >= 0 && pod_set < static_cast<int32_t>(w.pod_sets.size())
                                   ? w.pod_sets[pod_set].name
                                   : "";
  for (size_t i = 0; i < w.gang_policy.failure_rules.size(); ++i) {
    const model::JobSetFailureRule& rule = w.gang_policy.failure_rules[i];
    if (!rule.on_job_failure_reasons.empty() && !Contains(rule.on_job_failure_reasons, reason)) {
      continue;
    }
    if (!rule.target_replicated_jobs.empty() && !Contains(rule.target_replicated_jobs, set_name)) {
      continue;
    }
    if (!rule.on_job_failure_message_patterns.empty()) {
      bool any = false;
      for (const std::string& pattern : rule.on_job_failure_message_patterns) {
        try {
          any = any || std::regex_search(message, std::regex(pattern));
        } catch (const std::regex_error&) {
          // Upstream logs an invalid pattern and skips it.
        }
      }
      if (!any) continue;
    }
    match.why = "failurePolicy rule " + (rule.name.empty() ? std::to_string(i) : rule.name) + ": " +
                rule.action;
    if (rule.action == "FailJobSet") {
      match.directive = engine::FailureDirective::kFail;
    } else if (rule.action == "RestartJobSetAndIgnoreMaxRestarts") {
      match.directive = engine::FailureDirective::kRestartUncounted;
    }
    return match;
  }
  return match;
}

std::optional<GangOutcome> ChildJobOutcome(const std::string& key, const model::Workload& w,
                                           const std::vector<PolicyPod>& pods) {
  if (ChildJobSuccessMet(w, pods)) return GangOutcome{key, true, ""};
  for (const PolicyPod& pod : pods) {
    if (pod.phase != PolicyPodPhase::kFailed) continue;
    GangOutcome out{key, false, pod.failure};
    const FailureRuleMatch rule =
        MatchFailureRule(w, pod.pod_set, kChildJobFailureReason, kChildJobFailureMessage);
    out.directive = rule.directive;
    if (!rule.why.empty()) out.message += "; " + rule.why;
    return out;
  }
  return std::nullopt;
}

}  // namespace muster::control
