// GangRuntime: what runs the gangs the engine starts when muster itself is the
// kubelet (`muster serve`: local processes, or emulated pods). The engine calls
// Started / Stopped inside a cycle; the reconciler calls the rest between cycles, on
// its own thread. In cluster mode (`muster kube`) the cluster's controllers and
// kubelets run the pods and the reconciler follows them from pod and job changes, so
// there is no GangRuntime.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/engine.h"
#include "engine/executor.h"

namespace muster::control {

struct GangOutcome {
  std::string key;
  bool succeeded = false;
  std::string message;  // failures: which pod exited how
  // Failures: what the job's failure policy decided (JobSet failurePolicy.rules).
  engine::FailureDirective directive = engine::FailureDirective::kPolicy;
  // A failure a Job's podFailurePolicy decided (job_failure_policy.h): kFail fails
  // the job at once with `reason`; kIgnore restarts it without counting a failure.
  enum class Policy { kCount, kIgnore, kFail };
  Policy policy = Policy::kCount;
  std::string reason = {};
};

struct GangPodCounts {
  int32_t waiting = 0, running = 0, succeeded = 0, failed = 0;
  // The indexes of the first pod set's pods that succeeded (a batch Job's completion
  // indexes), ascending.
  std::vector<int32_t> succeeded_indexes = {};
};

class GangRuntime : public engine::Executor {
 public:
  // The engine whose cluster names the plans' nodes; set again after a reconfigure.
  virtual void SetEngine(const engine::Engine* engine) = 0;
  // Takes over a gang that already ran before the reconciler started (after
  // Engine::Adopt): its pods run, or finished while nobody watched.
  virtual void Adopt(const engine::WorkloadRecord& record, Time now) = 0;
  // Advances running gangs to `now`; returns the gangs that finished (succeeded or
  // failed) since the last call, each once.
  virtual std::vector<GangOutcome> Poll(Time now) = 0;
  // Pods of the current gang of `key` by state (of its last gang once stopped).
  virtual GangPodCounts Counts(const std::string& key) const = 0;
  // Every pod of the current gang of `key` runs.
  virtual bool PodsReady(const std::string& key) const = 0;
  // Gangs whose pods changed state since the last call (their job status and
  // Workload PodsReady condition are written again); each key once.
  virtual std::vector<std::string> TakeChangedGangs() = 0;
  // The job of `key` is gone (after Engine::RemoveWorkload): drop what is kept of
  // its last gang, so a server that runs jobs for ever does not keep one entry per
  // job it ever ran.
  virtual void Forget(const std::string& /*key*/) {}
  // The job of `key` was deleted with its dependents orphaned (kubectl delete
  // --cascade=orphan), before Engine::RemoveWorkload: the running pods of its gang
  // named in `pods` are let go of rather than stopped with it, as a kubelet runs an
  // unowned pod on. Returns the names of those let go of; each runs on until a
  // one-pod workload takes it over (Adopt, after Engine::Adopt) or StopLetGo.
  // Default: none (the whole gang is stopped).
  virtual std::set<std::string> LetGo(const std::string& /*key*/,
                                      const std::set<std::string>& /*pods*/) {
    return {};
  }
  // A pod let go of that no workload could take over: stopped.
  virtual void StopLetGo(const std::string& /*ns*/, const std::string& /*pod*/) {}
};

}  // namespace muster::control
