// Serve is the Job controller: a batch/v1 Job past its activeDeadlineSeconds fails
// (reason DeadlineExceeded), its pods are stopped and it does not restart. The
// deadline is read from the stored Job (status.startTime), so a restarted server
// enforces the same one. In cluster mode the Job controller does this itself.
#include <utility>
#include <vector>

#include "control/job_deadlines.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"

namespace muster::control {

void Reconciler::NoteDeadline(const JobState& job) {
  if (options_.mode != ReconcilerMode::kServe) return;
  ForgetDeadline(job.key);
  // Known once the Job has a startTime (serve writes it when the gang starts).
  if (auto deadline = ActiveDeadline(job.Object())) {
    deadlines_.emplace(*deadline, job.key);
    deadline_of_[job.key] = *deadline;
  }
}

void Reconciler::ForgetDeadline(const std::string& key) {
  auto it = deadline_of_.find(key);
  if (it == deadline_of_.end()) return;
  deadlines_.erase({it->second, key});
  deadline_of_.erase(it);
}

void Reconciler::EnforceDeadlines(Time now) {
  std::vector<std::pair<Time, std::string>> due;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    due.push_back(deadlines_.extract(deadlines_.begin()).value());
  }
  for (auto& [deadline, key] : due) {
    const engine::WorkloadRecord* r = engine_->Find(key);
    if (jobs_.count(key) == 0 || (r != nullptr && r->Finished())) {
      deadline_of_.erase(key);
      continue;
    }
    if (r != nullptr && engine_->FailJob(key, kDeadlineExceeded, kDeadlineExceededMessage).ok()) {
      dirty_.insert(key);
      cycle_needed_ = true;
      deadline_of_.erase(key);
      continue;
    }
    deadlines_.emplace(deadline, key);  // not failed now: asked again at the next step
  }
}

}  // namespace muster::control
