// TtlAfterFinishedController: serve's counterpart of kube-controller-manager's
// ttl-after-finished controller. A batch/v1 Job with spec.ttlSecondsAfterFinished
// is deleted that many seconds after its Complete or Failed condition's
// lastTransitionTime, with background cascading: the garbage collector then takes
// its Pods, and the scheduler its Workload. The instants come from the stored Jobs
// (control/job_deadlines.h), so Jobs that expired while the server was down go at
// start-up. The delete carries the Job's uid, so one re-created under the same name
// is never taken for the old one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/change.h"
#include "control/object_reader.h"
#include "core/clock.h"
#include "server/serve.h"
#include "server/store_change_loop.h"

namespace muster::server {

// The Jobs waiting for their time to live to run out (no thread, no clock: tests).
class TtlTracker {
 public:
  struct Target {
    control::ObjectKey key;
    std::string uid;
    Time expiry = 0;
  };
  // A Job as stored now (added or updated) or deleted.
  void Apply(const control::Change& change);
  // The Jobs whose time is up at `now`, forgotten here.
  std::vector<Target> TakeDue(Time now);
  // The earliest expiry; nullopt when no Job waits.
  std::optional<Time> Next() const;
  size_t size() const { return targets_.size(); }

 private:
  std::map<std::string, Target> targets_;  // by "<namespace>/<name>"
};

class TtlAfterFinishedController : public Controller {
 public:
  std::string name() const override { return "ttl-after-finished controller"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Deletes `due` (also used by tests).
  static void Execute(ObjectStore& store, const std::vector<TtlTracker::Target>& due);

 private:
  ObjectStore* store_ = nullptr;
  TtlTracker tracker_;  // the loop's thread only, after Start
  StoreChangeLoop loop_;
};

}  // namespace muster::server
