// ServeStep: one step of the reconciler in `muster serve` against its store, without
// the controller's thread, metrics or view (SchedulerController adds those), so its
// tests drive it with a manual clock and an executor of their own.
//
// The executor's gangs start only once the store has committed the admission that
// the step's writes record: a gang's Workload is written in one of the step's
// transactions (parts of kJobsPerTransaction jobs), and the executor is released for
// the gangs of a part after that part committed. A part that fails (SQLite error,
// full disk, I/O error) is rolled back: its gangs stay admitted in the engine but
// start nothing, the reconciler writes everything again from the next step on, and
// the gangs start once a step stores their admission. The engine is not rolled back:
// its quota view keeps each such gang charged once, which is what the store will say
// once the write is retried, and a restart before that finds the job pending with
// no process of it running, so it is admitted (and charged) once again, not twice.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "control/reconciler.h"
#include "core/clock.h"
#include "server/object_store.h"
#include "server/serve_executor.h"

namespace muster::server {

class ServeStep {
 public:
  // All outlive the step. `log`: one line per problem (null: dropped).
  ServeStep(ObjectStore& store, control::Reconciler& reconciler, ServeExecutor& executor,
            const Clock& clock, std::function<void(const std::string&)> log)
      : store_(store),
        reconciler_(reconciler),
        executor_(executor),
        clock_(clock),
        log_(std::move(log)) {}

  // Runs the executor's launches, the reconciler's decisions and its writes (in
  // store transactions), then releases and launches the gangs whose admission is
  // stored.
  control::Reconciler::StepResult Run();

  // Steps in a row whose writes failed to store (0 after a stored one).
  int64_t failed_steps() const { return failed_steps_; }

  // A step's writes go to the store in transactions of this many jobs, and API writes
  // waiting meanwhile commit between them (up to this long a wait for their group).
  static constexpr size_t kJobsPerTransaction = 32;
  static constexpr std::chrono::milliseconds kYieldToWriters{50};
  // Once its admissions are written, a step writes on only while no API write waits,
  // and for at most this long (by the injected clock); it leaves the rest of its round
  // (the Workloads of jobs that only wait) to the next step, whose cycle comes first:
  // under a burst of submissions that backlog held each cycle back for seconds and
  // took the store from the API's creates (bench/peers).
  static constexpr double kWriteBudgetSeconds = 0.1;
  // While API writes keep coming, one step in this many writes a part of the jobs
  // that only wait (their Workloads): the rest write admissions alone.
  static constexpr int64_t kBusyStepsPerBacklogPart = 8;
  static constexpr int64_t kBusyWrites = 4;  // writes outside a Batch since the last step

 private:
  // One transaction of the step's writes; its gangs are released once it committed.
  Status WritePart(control::Reconciler::StepResult& part, bool urgent_only = false);
  void Log(const std::string& line) const {
    if (log_) log_(line);
  }

  ObjectStore& store_;
  control::Reconciler& reconciler_;
  ServeExecutor& executor_;
  const Clock& clock_;
  std::function<void(const std::string&)> log_;
  int64_t failed_steps_ = 0;
  size_t released_ = 0;          // gangs the current step let start
  int64_t api_writes_seen_ = 0;  // ObjectStore::grouped_writes at the last step
  int64_t busy_steps_ = 0;       // steps in a row that found API writes since the last
  std::string last_failure_;     // logged once while it repeats
};

}  // namespace muster::server
