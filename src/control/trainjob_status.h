// TrainJob status (trainer.kubeflow.org/v1alpha1) as Trainer v2's controller writes
// it, with serve playing that controller: conditions Created, Suspended (while the
// gang waits for admission), Complete and Failed (from the JobSet's outcome).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/workload_record.h"

namespace muster::control {

inline constexpr const char* kTrainJobs = "trainjobs.trainer.kubeflow.org";

bool IsTrainJob(const nlohmann::json& object);

// Updates `conditions` for a TrainJob whose workload is `r`.
void SetTrainJobConditions(nlohmann::json& conditions, const engine::WorkloadRecord& r,
                           const std::string& now);

// status.jobsStatus: per replicated job (the workload's pod sets), how many child Jobs
// are active, ready, succeeded, failed or suspended. muster runs every step as one
// gang, so the counts follow the gang's phase.
nlohmann::json TrainJobJobsStatus(const engine::WorkloadRecord& r);

// The TrainJob with condition Created=False (reason TrainingRuntimeNotFound) saying
// which runtime it waits for; `message` names it.
nlohmann::json TrainJobWaitingForRuntime(const nlohmann::json& job, const std::string& message,
                                         const std::string& now);

}  // namespace muster::control
