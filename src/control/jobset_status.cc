#include "control/jobset_status.h"

#include "control/workload_objects.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

constexpr char kInProgress[] = "StartupPolicyInProgress";
constexpr char kCompleted[] = "StartupPolicyCompleted";

void RemoveCondition(json& conditions, const std::string& type) {
  if (!conditions.is_array()) return;
  for (auto it = conditions.begin(); it != conditions.end(); ++it) {
    if (it->value("type", "") == type) {
      conditions.erase(it);
      return;
    }
  }
}

}  // namespace

void SetJobSetStatus(json& status, json& conditions, const json& object,
                     const engine::WorkloadRecord& r, int32_t waiting_pods, int32_t started_pods,
                     const std::string& now) {
  const json spec = object.value("spec", json::object());
  const bool failed = r.phase == engine::Phase::kFailed;
  if (r.phase == engine::Phase::kSucceeded) {
    SetCondition(conditions, "Completed", true, "AllJobsCompleted", "jobset completed successfully",
                 now);
  } else if (failed) {
    // Upstream: FailJobSet's own reason; the restart budget spent with a
    // failurePolicy; FailedJobs without one.
    std::string reason = "FailedJobs";
    if (r.failure_message.find("its failure policy fails the job") != std::string::npos) {
      reason = "FailJobSetFailurePolicyAction";
    } else if (spec.contains("failurePolicy")) {
      reason = "ReachedMaxRestarts";
    }
    SetCondition(conditions, "Failed", true, reason, r.failure_message, now);
  }
  // failures counts the final one too; that one was no restart.
  const int32_t counted = failed && r.failures > 0 ? r.failures - 1 : r.failures;
  status["restarts"] = counted + r.uncounted_restarts;
  status["restartsCountTowardsMax"] = counted;

  const bool in_order =
      spec.value("startupPolicy", json::object()).value("startupPolicyOrder", "") == "InOrder";
  if (in_order && r.phase == engine::Phase::kSucceeded) {
    // Every replicated job started before it succeeded, though no sync may have seen
    // them all running at once (short jobs, a busy server): the startup completed.
    RemoveCondition(conditions, kInProgress);
    SetCondition(conditions, kCompleted, true, "InOrderStartupPolicyCompleted",
                 "in order startup policy has completed", now);
    return;
  }
  if (!in_order || r.phase != engine::Phase::kRunning || started_pods == 0) return;
  if (waiting_pods > 0) {
    RemoveCondition(conditions, kCompleted);
    SetCondition(conditions, kInProgress, true, "InOrderStartupPolicyInProgress",
                 "in order startup policy is in progress", now);
  } else {
    RemoveCondition(conditions, kInProgress);
    SetCondition(conditions, kCompleted, true, "InOrderStartupPolicyCompleted",
                 "in order startup policy has completed", now);
  }
}

}  // namespace muster::control
