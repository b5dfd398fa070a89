// LocalExecutor: the engine's Executor in `muster serve`. A bound gang's pods run as
// local processes (ProcessSupervisor): the container's command + args, in a
// working directory per pod, with the rank identity env the workloads layer
// computes (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, a MASTER_PORT free on this
// machine and unique among running jobs, PET_*, TF_CONFIG, ...), and
// CUDA_VISIBLE_DEVICES set to the physical GPUs placement assigned. Pod objects in
// the store follow each process (Pending, Running, Succeeded, Failed).
//
// A gang starts all at once, and only when no process of an earlier gang still holds
// one of its GPUs or pod names (a preempted victim gets its termination grace
// period to checkpoint before the preemptor's processes start). Stopping sends
// SIGTERM, then SIGKILL after the pod's terminationGracePeriodSeconds.
//
// Success follows the job kind's upstream rule: PyTorchJob master (else every
// worker), TFJob chief (else worker 0), MPIJob launcher, every other kind all pods
// (the other ranks then get their termination grace period to finish on their own
// before they are stopped); until then any pod exiting non-zero fails the gang (its lifecycle
// policy then restarts or fails it). Called from the controller thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/executor.h"
#include "server/object_store.h"
#include "server/process_supervisor.h"
#include "server/serve_executor.h"

namespace muster::server {

// The process ids the executor gives the pods of `plan` (a pod is named after its
// rank's hostname), in plan order: what a restarted server looks for to adopt a gang.
std::vector<std::string> GangProcessIds(const model::Workload& workload,
                                        const placement::GangPlan& plan);

class LocalExecutor : public ServeExecutor {
 public:
  LocalExecutor(ObjectStore& store, ProcessSupervisor& processes);

  // The engine whose cluster names the plan's nodes; reset after every rebuild.
  void SetEngine(const engine::Engine* engine) override { engine_ = engine; }

  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;

  // Takes over a gang a previous server started (after Engine::Adopt): its pods'
  // processes are running, or finished while the server was down (`recovered`).
  // A pod with no process at all counts as failed.
  void AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                      const std::map<std::string, RecoveredProcess>& recovered) override;

  // Starts gangs whose GPUs and pod names are free, reaps exits, enforces kill
  // deadlines and updates pod objects. Returns what happened to running gangs.
  std::vector<control::GangOutcome> Poll(Time now) override;

  control::GangPodCounts Counts(const std::string& key) const override;
  bool PodsReady(const std::string& key) const override;
  int32_t RunningProcesses() const override;
  uint64_t changes() const { return changes_; }
  // Nothing left to wait for: no process running or waiting to start.
  bool Idle() const;

 private:
  enum class PodState { kWaiting, kRunning, kSucceeded, kFailed };
  struct PodRun {
    std::string name;  // pod object name (the rank's hostname)
    std::string id;    // process id
    int32_t pod_set = 0;
    int32_t index = 0;
    std::string node;
    std::vector<int32_t> gpus;  // placement device indices on `node`
    PodState state = PodState::kWaiting;
    int exit_code = 0;
    std::string message;
    std::string started_at, finished_at;
    int32_t restarts = 0;
  };
  struct Gang {
    std::string key;
    std::string namespace_;
    model::Workload workload;
    std::vector<PodRun> pods;
    bool launched = false;
    bool stopping = false;
    bool deleted = false;
    bool reported = false;  // an outcome was returned for it
    int master_port = 0;
    Time decided_at = -1;  // when its success was decided (other ranks may still run)
  };

  void Launch(Gang& gang, Time now);
  bool CanLaunch(const Gang& gang) const;
  std::optional<control::GangOutcome> Evaluate(Gang& gang, Time now) const;
  void WritePod(const Gang& gang, const PodRun& pod, Time now);
  void DeletePods(const Gang& gang);
  std::vector<std::string> PhysicalGpus(const std::string& node) const;
  std::string NodeName(int32_t node_index) const;

  ObjectStore& store_;
  ProcessSupervisor& processes_;
  const engine::Engine* engine_ = nullptr;
  int64_t next_attempt_ = 1;
  uint64_t changes_ = 0;
  std::map<int64_t, Gang> gangs_;           // by attempt, oldest first
  std::map<std::string, int64_t> current_;  // workload key -> its live attempt
  std::map<std::string, std::pair<int64_t, size_t>> by_process_;  // process id -> pod
  std::map<std::string, int32_t> restarts_;                       // pod object key -> starts so far
  std::map<std::string, control::GangPodCounts> last_counts_;  // of the last stopped gang per key
};

}  // namespace muster::server
