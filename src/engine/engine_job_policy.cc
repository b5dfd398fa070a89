// Engine::FailJob and Engine::RestartUncounted: a Job's podFailurePolicy and
// activeDeadlineSeconds decide a failure instead of the lifecycle's restart budget.
#include <fmt/format.h>

#include "engine/engine.h"

namespace muster::engine {

Status Engine::FailJob(const std::string& key, const std::string& reason,
                       const std::string& message) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  // Pending counts only between restarts (it ran before): a workload that never
  // started has no startTime, hence no deadline, and no pods to fail.
  if (r->Finished() || !r->submitted || (r->phase == Phase::kPending && !r->start_time)) {
    return FailedPrecondition(
        fmt::format("workload {} is {}, it cannot fail", key, PhaseName(r->phase)));
  }
  StopGang(*r, StopCause::kFailed);
  parts_.admitter->Remove(key);
  r->pending_note = {};
  ++generation_;
  r->phase = Phase::kFailed;
  r->finish_time = Now();
  r->failure_message = message;
  r->failure_reason = reason;
  log_.Add({Now(), key, "Fail", reason, message});
  parts_.admitter->NotifyCapacityChanged();
  return Status::Ok();
}

Status Engine::RestartUncounted(const std::string& key, const std::string& message) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (!r->Active()) {
    return FailedPrecondition(
        fmt::format("workload {} is {}, it has no pods", key, PhaseName(r->phase)));
  }
  ++generation_;
  StopGang(*r, StopCause::kEvicted);
  r->phase = Phase::kPending;
  parts_.admitter->Requeue(key, Now());
  log_.Add({Now(), key, "Restart", "PodFailed", message + "; ignored by podFailurePolicy"});
  parts_.admitter->NotifyCapacityChanged();
  return Status::Ok();
}

}  // namespace muster::engine
