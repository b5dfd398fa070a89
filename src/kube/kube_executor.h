// KubeExecutor: the engine's Executor in a cluster. The engine calls it inside a cycle;
// writes to the API server happen after the cycle (KubeController::Sync), so the
// executor only records what to do: a gang that started needs its admission written
// (Workload admission, template injection, unsuspend) and its pods bound; a gang that
// stopped by eviction needs its job suspended (restarts after a failure are the
// job controller's: backoffLimit, restartPolicy).
#pragma once

#include <map>
#include <string>

#include "engine/executor.h"

namespace muster::kube {

class KubeExecutor : public engine::Executor {
 public:
  enum class Action { kAdmit, kSuspend };

  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;

  // What to write, by workload key; the latest decision wins (a gang evicted and
  // re-admitted in one cycle is admitted). Cleared by the controller as it writes.
  std::map<std::string, Action>& pending() { return pending_; }

 private:
  std::map<std::string, Action> pending_;
};

}  // namespace muster::kube
