#include "server/serve_step.h"

namespace muster::server {

Status ServeStep::WritePart(control::Reconciler::StepResult& part) {
  Status s = store_.Batch([&] { part = reconciler_.Write(kJobsPerTransaction); });
  if (!s.ok()) return s;
  // Committed: the admissions this part recorded are durable, their gangs may start.
  for (const std::string& key : reconciler_.TakeRecordedAdmissions()) {
    if (executor_.Release(key)) ++released_;
  }
  return s;
}

control::Reconciler::StepResult ServeStep::Run() {
  control::Reconciler::StepResult result;
  released_ = 0;
  // Starting pods (fork) and removing pod files never run inside the store's batch:
  // they would hold the store's lock for as long as they take.
  executor_.Run(clock_.Now());
  // The scheduling cycle runs outside the store's transaction (API requests wait on it).
  reconciler_.Decide();
  // The reconciler's writes and the executor's pod objects are derived state, written
  // in parts of kJobsPerTransaction jobs, the API's waiting writes committing between
  // them: a cycle that admits a thousand jobs held every create for its whole write
  // (0.25-0.7 s measured with one client, 2,000 jobs). Each part is one transaction;
  // what a kill between parts leaves unwritten is derived state, written again.
  Status s = WritePart(result);
  while (s.ok() && result.more) {
    store_.YieldToWriters(kYieldToWriters);
    control::Reconciler::StepResult part;
    s = WritePart(part);
    result.submitted = part.submitted;
    result.in_flight = part.in_flight;
    result.retry = result.retry || part.retry;
    result.more = part.more;
  }
  if (!s.ok()) {
    // Nothing of the failed part was stored: what the reconciler believes written is
    // written again at the next step, and the gangs whose admission it recorded wait.
    reconciler_.ForgetWrites();
    result.retry = true;
    ++failed_steps_;
    if (s.message() != last_failure_) {
      Log("store write failed, retried at the next step (gangs admitted meanwhile start "
          "once their admission is stored): " +
          s.message());
      last_failure_ = s.message();
    }
  } else if (failed_steps_ > 0) {
    Log("store writes stored again after " + std::to_string(failed_steps_) + " failed step" +
        (failed_steps_ == 1 ? "" : "s"));
    failed_steps_ = 0;
    last_failure_.clear();
  }
  // Gangs the cycle started (and this step's writes released) launch now rather than
  // at the next step (whose Poll writes their pods' objects).
  if (result.cycled || released_ > 0) executor_.Run(clock_.Now());
  return result;
}

}  // namespace muster::server
