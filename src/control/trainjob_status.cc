#include "control/trainjob_status.h"

#include "control/workload_objects.h"

namespace muster::control {

using json = nlohmann::json;
using engine::Phase;

namespace {

bool HasCondition(const json& conditions, const std::string& type) {
  if (!conditions.is_array()) return false;
  for (const auto& c : conditions) {
    if (c.is_object() && c.value("type", "") == type) return true;
  }
  return false;
}

}  // namespace

bool IsTrainJob(const json& object) {
  return object.is_object() && object.value("kind", "") == "TrainJob" &&
         object.value("apiVersion", "").rfind("trainer.kubeflow.org/", 0) == 0;
}

void SetTrainJobConditions(json& conditions, const engine::WorkloadRecord& r,
                           const std::string& now) {
  SetCondition(conditions, "Created", true, "JobsCreationSucceeded", "Succeeded to create Jobs",
               now);
  if (r.phase == Phase::kPending) {
    SetCondition(conditions, "Suspended", true, "Suspended",
                 "TrainJob is suspended: it waits for admission", now);
  } else if (r.phase == Phase::kRunning) {
    // Only a TrainJob that was suspended is "Resumed" (no condition until then).
    if (HasCondition(conditions, "Suspended")) {
      SetCondition(conditions, "Suspended", false, "Resumed", "TrainJob is resumed", now);
    }
  }
  // The JobSet's terminal condition, copied with its reason as upstream does.
  if (r.phase == Phase::kSucceeded) {
    SetCondition(conditions, "Complete", true, "AllJobsCompleted", "jobset completed successfully",
                 now);
  } else if (r.phase == Phase::kFailed) {
    SetCondition(conditions, "Failed", true, "FailedJobs", r.failure_message, now);
  }
  if ((r.phase == Phase::kSucceeded || r.phase == Phase::kFailed) &&
      HasCondition(conditions, "Suspended")) {
    SetCondition(conditions, "Suspended", false, "Resumed", "TrainJob is resumed", now);
  }
}

json TrainJobJobsStatus(const engine::WorkloadRecord& r) {
  json out = json::array();
  for (const auto& ps : r.workload.pod_sets) {
    const int32_t jobs = ps.pods_per_job > 0 ? ps.count / ps.pods_per_job : 1;
    json entry = {{"name", ps.name}, {"ready", 0},  {"succeeded", 0},
                  {"failed", 0},     {"active", 0}, {"suspended", 0}};
    switch (r.phase) {
      case Phase::kPending:
        entry["suspended"] = jobs;
        break;
      case Phase::kRunning:
        entry["active"] = jobs;
        entry["ready"] = jobs;
        break;
      case Phase::kSucceeded:
        entry["succeeded"] = jobs;
        break;
      case Phase::kFailed:
        entry["failed"] = jobs;
        break;
      default:
        break;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

json TrainJobWaitingForRuntime(const json& job, const std::string& message,
                               const std::string& now) {
  json object = job;
  json status = object.value("status", json::object());
  if (!status.is_object()) status = json::object();
  json conditions = status.value("conditions", json::array());
  SetCondition(conditions, "Created", false, "TrainingRuntimeNotFound", message, now);
  status["conditions"] = std::move(conditions);
  object["status"] = std::move(status);
  if (object.contains("metadata") && object["metadata"].is_object())
    object["metadata"].erase("resourceVersion");
  return object;
}

}  // namespace muster::control
