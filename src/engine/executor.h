// Executor: how a bound gang starts and stops. The engine calls it; the simulator
// schedules completion in virtual time, the server starts local processes, the
// Kubernetes adapter binds pods. The engine never knows which.
#pragma once

#include <vector>

#include "core/clock.h"
#include "engine/workload_record.h"

namespace muster::engine {

enum class StopCause {
  kSucceeded,  // the job finished
  kEvicted,    // preempted or lost its node; it will be requeued
  kFailed,     // failed for good
  kDeleted,    // the job was deleted (Engine::RemoveWorkload); nothing follows
};

class Executor {
 public:
  virtual ~Executor() = default;
  // The gang of `record` is bound (record.plan) and starts now.
  virtual void Started(const WorkloadRecord& record, Time now) = 0;
  // The gang stops now; `record` still holds the plan it ran with.
  virtual void Stopped(const WorkloadRecord& record, Time now, StopCause cause) = 0;
  // Added (elastic workloads): the running gang changed size in place; `record`
  // holds the new plan. `added` pods are bound and start now; `removed` pods
  // (no longer in the plan) stop now. The others keep running.
  virtual void Resized(const WorkloadRecord& /*record*/,
                       const std::vector<placement::PodPlacement>& /*added*/,
                       const std::vector<placement::PodPlacement>& /*removed*/, Time /*now*/) {}
  // Whether Resized starts and stops pods of a running gang. An executor that
  // cannot (yet) never sees a gang change size: elastic gangs still start with what
  // fits, but do not grow, and a preemptor evicts them whole.
  virtual bool SupportsResize() const { return false; }
};

}  // namespace muster::engine
