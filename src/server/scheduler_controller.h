// SchedulerController: the engine inside `muster serve`. One thread owns the engine
// and the executor (local processes; emulated pods with `--executor emulated`);
// every committed store change is queued by a hub subscription and applied in
// resourceVersion order (the one ordered path):
//   - a job object created / deleted       -> Engine::AddWorkload+Submit / RemoveWorkload
//   - a node, queue, flavor, priority class or configuration changed
//                                           -> the engine is rebuilt from the store and
//                                              running gangs are adopted where they run
//   - a pod process exited                  -> Succeed / FailPods (lifecycle policy)
// then the admission + placement cycle runs and what changed is written back:
// Kueue Workload objects with conditions, the job's status, Pod objects, queue
// status counts, and metrics.
//
// After a restart (kill -9 included) the same rebuild adopts the gangs whose
// processes survived (their Workload object records the admission and placement);
// a gang that can no longer be adopted is stopped and requeued, and finished jobs
// stay finished.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "control/store_snapshot.h"
#include "control/workload_objects.h"
#include "engine/engine.h"
#include "server/process_supervisor.h"
#include "server/serve.h"
#include "server/serve_executor.h"
#include "ui/view_publisher.h"

namespace muster::server {

class SchedulerController : public Controller {
 public:
  // `executor`: local processes (LocalExecutor) or emulated pods (EmulatedExecutor).
  explicit SchedulerController(ExecutorKind executor = ExecutorKind::kLocal)
      : executor_kind_(executor) {}
  ~SchedulerController() override;

  std::string name() const override { return "scheduler"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

 private:
  class WallClock : public Clock {
   public:
    Time Now() const override;
  };
  struct JobState {
    control::JobRef ref;
    nlohmann::json object;  // latest job object seen
    int64_t generation = 0;
    nlohmann::json written_workload;  // the Workload object as last written
    std::string written_status;       // job status as last written (dump)
    bool in_engine = false;
    bool finished = false;  // succeeded or failed: never resubmitted
  };

  void Loop();
  // Rebuilds the engine from the store; adopts what runs. `recovered`: processes a
  // previous server left (start only).
  void Rebuild(const std::map<std::string, RecoveredProcess>& recovered, bool at_start);
  void AdoptFromStore(const std::string& key, JobState& job,
                      const std::map<std::string, RecoveredProcess>& recovered, bool at_start);
  void Apply(const control::Change& change, bool& rebuild);
  void AddJob(JobState& job, model::Workload workload);
  void RemoveJob(const std::string& key);
  void HandleOutcomes(const std::vector<GangOutcome>& outcomes);
  // Writes what changed and updates metrics after a cycle that took `cycle_seconds`.
  void SyncStatus(double cycle_seconds);
  void SyncQueues(control::QueueUsage& usage);
  void WriteEvents();
  void UpdateMetrics(double cycle_seconds, control::QueueUsage& usage);
  void Log(const std::string& line);
  // Builds the scheduler view (control/scheduler_view.h) and publishes it.
  void PublishView();
  std::string Now() const;

  ObjectStore* store_ = nullptr;
  MetricsRegistry* metrics_ = nullptr;
  ui::ViewPublisher* views_ = nullptr;
  std::string data_dir_;
  WallClock clock_;
  std::unique_ptr<ProcessSupervisor> processes_;
  ExecutorKind executor_kind_;
  std::unique_ptr<ServeExecutor> executor_;
  std::unique_ptr<engine::Engine> engine_;
  model::ManifestSet config_;  // the configuration the engine was built from (no jobs)
  uint64_t executor_changes_ = 0;
  std::string engine_error_;                     // why there is no engine (invalid configuration)
  std::map<std::string, JobState> jobs_;         // by workload key "<ns>/<name>"
  std::map<std::string, std::string> job_keys_;  // "<resource>/<ns>/<name>" -> workload key
  std::set<std::string> orphans_;                // processes of no adopted gang, being stopped
  int64_t next_order_ = 0;
  size_t decisions_seen_ = 0;
  int64_t event_counter_ = 0;
  std::map<std::string, nlohmann::json> written_queue_status_;
  // What the engine reads of each config object, to tell real changes from status writes.
  std::map<std::string, std::string> config_seen_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<control::Change> changes_;
  bool stopping_ = false;
  WatchHub::SubscriptionId subscription_ = 0;
  std::thread thread_;
};

}  // namespace muster::server
