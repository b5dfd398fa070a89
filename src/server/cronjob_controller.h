// CronJobController: serve's counterpart of kube-controller-manager's CronJob
// controller. At each time its schedule names (in spec.timeZone, UTC without one) a
// CronJob makes a Job from spec.jobTemplate, named `<cronjob>-<scheduled minute since
// the epoch>` (the name is the lock: a restart never makes one time's Job twice),
// owned by the CronJob, annotated batch.kubernetes.io/cronjob-scheduled-timestamp,
// created through the API as its owner's (so defaults, quota and the scheduler's
// queues apply as to a Job a user creates, and its pods run as the CronJob's owner).
// Only the most recent missed time runs; startingDeadlineSeconds bounds how late;
// concurrencyPolicy Allow, Forbid (skip while a Job runs) or Replace (delete the
// running ones first); suspend stops new Jobs only. status.active,
// lastScheduleTime and lastSuccessfulTime follow the Jobs, and finished Jobs beyond
// successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted, oldest start
// first. Events say what it did (SuccessfulCreate, SawCompletedJob, JobAlreadyActive,
// SuccessfulDelete, MissSchedule, TooManyMissedTimes, ...).
#pragma once

#include <cctz/time_zone.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/change.h"
#include "control/object_reader.h"
#include "core/clock.h"
#include "server/serve.h"
#include "server/store_change_loop.h"

namespace muster::server {

class ApiHandler;
class ObjectStore;

// The zone a CronJob's times are in: spec.timeZone from the time zone database, UTC
// without one; nullopt when the database has no such zone.
std::optional<cctz::time_zone> CronJobZone(const nlohmann::json& cronjob);

// What one sync of one CronJob decided (no I/O: tests call it at any instant).
struct CronJobPlan {
  struct Note {
    std::string type;  // Normal, Warning
    std::string reason;
    std::string message;
  };
  struct JobToDelete {
    std::string name;
    std::string uid;
  };
  nlohmann::json status;  // the CronJob's status after the sync (the new Job not in it yet)
  bool status_changed = false;
  std::optional<nlohmann::json> job;  // the Job to create
  Time scheduled = 0;                 // its scheduled time
  std::vector<JobToDelete> deletes;   // Replace's and the history limits'
  std::vector<Note> events;
  std::optional<Time> next;  // when the schedule next names a time (none: suspended, ...)
};

// `jobs`: the Jobs the CronJob controls (controller reference by uid), as stored.
CronJobPlan PlanCronJob(const nlohmann::json& cronjob,
                        const std::vector<const nlohmann::json*>& jobs, Time now);

class CronJobController : public Controller {
 public:
  // `now`: the wall clock (tests pass their own instant to SyncAll instead).
  CronJobController() = default;
  std::string name() const override { return "cronjob controller"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Without a thread (tests): binds the controller to `store` and `api`, reads what
  // is stored.
  void Attach(ObjectStore& store, ApiHandler& api);
  void Apply(const control::Change& change);
  // Syncs the CronJobs that changed, whose Jobs changed, or whose time came.
  void SyncDue(Time now);
  // The earliest instant a CronJob's schedule names next; nullopt: none.
  std::optional<Time> NextWake() const;

 private:
  struct Entry {
    std::shared_ptr<const nlohmann::json> object;  // null: only its Jobs were seen
    std::optional<Time> next;
    bool dirty = true;
  };
  void Sync(Entry& entry, Time now);
  // Carries the plan out; the CronJob as its status write stored it (none: no write).
  std::optional<nlohmann::json> Execute(const nlohmann::json& cronjob, CronJobPlan& plan, Time now);
  void RecordEvent(const nlohmann::json& cronjob, const CronJobPlan::Note& note, Time now);

  ObjectStore* store_ = nullptr;
  ApiHandler* api_ = nullptr;
  std::map<std::string, Entry> cronjobs_;      // by "<namespace>/<name>"
  std::map<std::string, std::string> by_uid_;  // CronJob uid -> its id
  // Jobs a CronJob controls: CronJob uid -> "<namespace>/<name>" -> the Job.
  // (the changes' own copies, shared).
  std::map<std::string, std::map<std::string, std::shared_ptr<const nlohmann::json>>> jobs_;
  std::map<std::string, std::string> job_owner_;  // Job id -> the CronJob uid it is under
  int64_t event_sequence_ = 0;
  StoreChangeLoop loop_;
};

}  // namespace muster::server
