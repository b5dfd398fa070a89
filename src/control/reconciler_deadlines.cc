// Serve is the Job controller: a batch/v1 Job past its activeDeadlineSeconds fails
// (reason DeadlineExceeded), its pods are stopped and it does not restart. The
// deadline is read from the stored Job (status.startTime), so a restarted server
// enforces the same one. In cluster mode the Job controller does this itself.
#include "control/job_deadlines.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"

namespace muster::control {

void Reconciler::NoteDeadline(const JobState& job) {
  if (options_.mode != ReconcilerMode::kServe) return;
  const nlohmann::json& spec = job.Object().value("spec", nlohmann::json::object());
  if (spec.is_object() && spec.contains("activeDeadlineSeconds")) deadline_jobs_.insert(job.key);
}

void Reconciler::EnforceDeadlines(Time now) {
  for (auto it = deadline_jobs_.begin(); it != deadline_jobs_.end();) {
    auto job = jobs_.find(*it);
    const engine::WorkloadRecord* r = engine_->Find(*it);
    if (job == jobs_.end() || (r != nullptr && r->Finished())) {
      it = deadline_jobs_.erase(it);
      continue;
    }
    auto deadline = ActiveDeadline(job->second->Object());
    if (r != nullptr && deadline && now >= *deadline) {
      Status s = engine_->FailJob(*it, kDeadlineExceeded, kDeadlineExceededMessage);
      if (s.ok()) {
        dirty_.insert(*it);
        cycle_needed_ = true;
      }
    }
    ++it;
  }
}

}  // namespace muster::control
