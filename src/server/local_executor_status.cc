// LocalExecutor: what a gang's pods amount to — its outcome by the job kind's
// upstream success rule, and its pod counts for the job's status. Pods a shrink
// stopped are not the job's any more and count for neither.
#include <algorithm>

#include "server/job_failure_policy.h"
#include "server/local_executor.h"

namespace muster::server {

std::optional<control::GangOutcome> LocalExecutor::Evaluate(Gang& gang, Time now) const {
  if (gang.stopping || gang.reported || !gang.launched) return std::nullopt;
  if (gang.workload.gang_policy.child_jobs) return EvaluateChildJobs(gang);
  // Which pods decide success: the upstream controllers' defaults.
  const std::string& kind = gang.workload.meta.kind;
  auto set_named = [&](const std::string& name) {
    for (size_t i = 0; i < gang.workload.pod_sets.size(); ++i) {
      if (gang.workload.pod_sets[i].name == name) return static_cast<int32_t>(i);
    }
    return int32_t{-1};
  };
  int32_t decisive = -1;
  bool only_index0 = false;
  if (kind == "PyTorchJob") {
    decisive = set_named("master");
  } else if (kind == "TFJob") {
    decisive = set_named("chief");
    if (decisive < 0) decisive = set_named("worker"), only_index0 = decisive >= 0;
  } else if (kind == "MPIJob") {
    decisive = set_named("launcher");
  }
  bool decided = true;  // every decisive pod succeeded
  bool live = false;    // some pod still runs
  for (const auto& pod : gang.pods) {
    if (pod.shrunk) continue;  // a shrink stopped it: not the job's any more
    if (pod.state == PodState::kRunning || pod.state == PodState::kWaiting) live = true;
    if (decisive >= 0 && pod.pod_set != decisive) continue;
    if (only_index0 && pod.index != 0) continue;
    if (pod.state != PodState::kSucceeded) decided = false;
  }
  if (decided) {
    // The job has succeeded; the other ranks usually finish on their own a moment
    // later (upstream leaves them running), so they get their termination grace
    // period before the gang is stopped and they are terminated.
    if (gang.decided_at < 0) gang.decided_at = now;
    double grace = 0;
    for (const auto& ps : gang.workload.pod_sets) {
      grace = std::max(grace, static_cast<double>(ps.tmpl.spec.termination_grace_period_seconds));
    }
    if (live && now - gang.decided_at < grace) return std::nullopt;
    return control::GangOutcome{gang.key, true, ""};
  }
  std::vector<EndedPod> failed;
  for (const auto& pod : gang.pods) {
    if (pod.state == PodState::kFailed && !pod.shrunk) {
      failed.push_back({pod.name, pod.pod_set, pod.exit_code, pod.message});
    }
  }
  return FailedGangOutcome(gang.key, gang.workload, failed);
}

control::GangPodCounts LocalExecutor::Counts(const std::string& key) const {
  control::GangPodCounts counts;
  auto cur = current_.find(key);
  if (cur == current_.end()) {
    auto last = last_counts_.find(key);
    return last == last_counts_.end() ? counts : last->second;
  }
  for (const auto& pod : gangs_.at(cur->second).pods) {
    if (pod.shrunk) continue;
    switch (pod.state) {
      case PodState::kWaiting:
        ++counts.waiting;
        break;
      case PodState::kRunning:
        ++counts.running;
        break;
      case PodState::kSucceeded:
        ++counts.succeeded;
        if (pod.pod_set == 0) counts.succeeded_indexes.push_back(pod.index);
        break;
      case PodState::kFailed:
        ++counts.failed;
        break;
    }
  }
  std::sort(counts.succeeded_indexes.begin(), counts.succeeded_indexes.end());
  return counts;
}

bool LocalExecutor::PodsReady(const std::string& key) const {
  control::GangPodCounts c = Counts(key);
  return c.waiting == 0 && c.failed == 0 && c.running + c.succeeded > 0;
}

}  // namespace muster::server
