#include "server/serve_step.h"

namespace muster::server {

Status ServeStep::WritePart(control::Reconciler::StepResult& part, bool urgent_only) {
  Status s = store_.Batch([&] { part = reconciler_.Write(kJobsPerTransaction, urgent_only); });
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
  const Time write_begin = clock_.Now();
  // API writes keep coming (kBusyWrites or more since the last step; a controller's
  // odd status write is not a burst): this step writes its admissions and, only every
  // kBusyStepsPerBacklogPart steps, a part of the rest (the Workloads of jobs that
  // only wait), which otherwise waits until the API is quiet.
  const int64_t api_writes = store_.grouped_writes();
  const bool busy = api_writes - api_writes_seen_ >= kBusyWrites;
  api_writes_seen_ = api_writes;
  busy_steps_ = busy ? busy_steps_ + 1 : 0;
  const bool defer = busy && busy_steps_ % kBusyStepsPerBacklogPart != 0;
  Status s = WritePart(result, defer);
  while (s.ok() && result.more) {
    if (!reconciler_.UrgentWritesLeft() &&
        (busy || clock_.Now() - write_begin >= kWriteBudgetSeconds)) {
      break;
    }
    store_.YieldToWriters(kYieldToWriters);
    control::Reconciler::StepResult part;
    s = WritePart(part, defer);
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
