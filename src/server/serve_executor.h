// ServeExecutor: what runs bound gangs in `muster serve` — the reconciler's
// GangRuntime (control/gang_runtime.h: Started / Stopped from the engine, polling for
// outcomes, pod counts for job status, adoption after a restart) plus what only serve
// has: processes a previous server left, and a process count for /metrics.
// LocalExecutor runs pods as local processes; EmulatedExecutor only pretends (pods
// Running at once, success after the job's sim.muster.dev/duration), so the whole
// server path can be measured at thousands of nodes on one machine.
// Called from the controller thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/gang_runtime.h"
#include "engine/engine.h"
#include "server/adopted_pods.h"
#include "server/process_supervisor.h"

namespace muster::server {

// The process ids the executors give the pods of `plan` (a pod is named after its
// rank's hostname), in plan order: what a restarted server looks for to adopt a gang.
std::vector<std::string> GangProcessIds(const model::Workload& workload,
                                        const placement::GangPlan& plan);

// Which executor `muster serve --executor` runs.
enum class ExecutorKind { kLocal, kEmulated };

class ServeExecutor : public control::GangRuntime {
 public:
  // The processes a previous server left, for the adoptions of the reconciler's
  // build at start-up (cleared after it).
  void SetRecovered(std::map<std::string, RecoveredProcess> recovered) {
    recovered_ = std::move(recovered);
    sweeper_.reset();  // called before and after the build: one index per start-up
  }
  // A gang a previous server started, or a pod let go of (LetGo) now taken over by
  // its own one-pod workload.
  void Adopt(const engine::WorkloadRecord& record, Time now) final;
  // Takes over a gang a previous server started (after Engine::Adopt). `recovered`:
  // the processes the previous server left (empty for executors without processes).
  virtual void AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                              const std::map<std::string, RecoveredProcess>& recovered) = 0;

  std::vector<std::string> TakeChangedGangs() final {
    std::vector<std::string> out(changed_.begin(), changed_.end());
    changed_.clear();
    return out;
  }

  // The server is stopping: let go of the store (subscriptions); processes are left
  // running for the next server to adopt. Called once, before the store closes.
  virtual void Shutdown() {}

  // The admission of the current gang of `key` is durable: the store committed the
  // Workload that records it (control::Reconciler::TakeRecordedAdmissions). An
  // executor that starts processes starts none of a gang before this, so no process
  // runs whose admission a restarted server would not find (it would admit and run
  // the job again). Adopted gangs were recorded by the server that started them.
  // True when a gang waited for it. Default: nothing waits (the emulated executor
  // starts no process).
  virtual bool Release(const std::string& key) {
    (void)key;
    return false;
  }

  // Work that must not run inside ObjectStore::Batch (it would hold the store's lock):
  // starting processes (fork). Called before Poll, outside any batch.
  virtual void Run(Time now) { (void)now; }
  // Local processes running now (0 when nothing runs as a process).
  virtual int32_t RunningProcesses() const = 0;

 protected:
  // A pod of the gang of `key` changed state: its job status is written again.
  void MarkChanged(const std::string& key) { changed_.insert(key); }
  // A pod of namespace `ns` let go of (LetGo) with its process running: the one-pod
  // workload that takes it over adopts that process.
  void NoteLetGo(const std::string& ns, const std::string& pod);
  // ...and no workload took it over: stopped, no longer waiting for one.
  void ForgetLetGo(const std::string& id) { let_go_.erase(id); }
  // For AdoptRecovered: the start-up's index of Pod objects by owner.
  AdoptedPodSweeper& Sweeper(ObjectStore& store) {
    if (!sweeper_) sweeper_ = std::make_unique<AdoptedPodSweeper>(store);
    return *sweeper_;
  }

 private:
  std::map<std::string, RecoveredProcess> recovered_;
  std::map<std::string, RecoveredProcess> let_go_;  // by process id, until taken over
  std::unique_ptr<AdoptedPodSweeper> sweeper_;
  std::set<std::string> changed_;
};

}  // namespace muster::server
