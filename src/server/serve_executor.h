// ServeExecutor: what the scheduler controller of `muster serve` needs from the
// thing that runs bound gangs, beyond the engine's Executor (Started / Stopped):
// polling for outcomes, pod counts for job status, and adoption after a restart.
// LocalExecutor runs pods as local processes; EmulatedExecutor only pretends (pods
// Running at once, success after the job's sim.muster.dev/duration), so the whole
// server path can be measured at thousands of nodes on one machine.
// Called from the controller thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/executor.h"
#include "server/process_supervisor.h"

namespace muster::server {

// Which executor `muster serve --executor` runs.
enum class ExecutorKind { kLocal, kEmulated };

struct GangOutcome {
  std::string key;
  bool succeeded = false;
  std::string message;  // failures: which pod exited how
};

struct GangPodCounts {
  int32_t waiting = 0, running = 0, succeeded = 0, failed = 0;
};

class ServeExecutor : public engine::Executor {
 public:
  // The engine whose cluster names the plan's nodes; reset after every rebuild.
  virtual void SetEngine(const engine::Engine* engine) = 0;

  // Takes over a gang a previous server started (after Engine::Adopt). `recovered`:
  // the processes the previous server left (empty for executors without processes).
  virtual void Adopt(const engine::WorkloadRecord& record, Time now,
                     const std::map<std::string, RecoveredProcess>& recovered) = 0;

  // Advances running gangs to `now`; returns the gangs that finished (succeeded or
  // failed) since the last call, each once.
  virtual std::vector<GangOutcome> Poll(Time now) = 0;

  // Pods of the current gang of `key` by state (of its last gang once stopped).
  virtual GangPodCounts Counts(const std::string& key) const = 0;
  // Every pod of the current gang of `key` runs.
  virtual bool PodsReady(const std::string& key) const = 0;
  // Local processes running now (0 when nothing runs as a process).
  virtual int32_t RunningProcesses() const = 0;
  // Grows whenever a pod's state changes (cheap "anything new?" for status sync).
  virtual uint64_t changes() const = 0;
};

}  // namespace muster::server
