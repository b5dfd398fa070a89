// Simulator: the discrete-event loop of `muster simulate`. Virtual time jumps from
// event to event (submissions, completions, node failures, recoveries, spot
// reclaims); after the events of an instant the engine runs its cycle. The
// simulator is also the engine's Executor: a gang that starts gets a completion
// event after its (remaining) duration.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "model/manifest_set.h"
#include "sim/event_queue.h"
#include "sim/result.h"

namespace muster::sim {

struct SimOptions {
  std::optional<Time> until;  // stop here even if events remain
  uint64_t seed = 0;          // for randomised inputs (traces); the loop itself is fixed
  bool check_invariants = false;
  // Time between a spot reclaim notice and the node's loss (GCE gives 30 s).
  double spot_notice_seconds = 30;
};

class Simulator : public engine::Executor {
 public:
  static Result<std::unique_ptr<Simulator>> Create(const model::ManifestSet& manifests,
                                                   const SimOptions& options);
  // The same with the workloads given (e.g. manifests' jobs plus a trace's, see
  // `--trace`), in creation order; `manifests` supplies cluster and queues.
  static Result<std::unique_ptr<Simulator>> Create(const model::ManifestSet& manifests,
                                                   std::vector<model::Workload> workloads,
                                                   const SimOptions& options);
  // For tests: an engine built elsewhere (it must use clock()).
  Simulator(const model::ManifestSet& manifests, const SimOptions& options);
  void SetEngine(std::unique_ptr<engine::Engine> engine);

  // Runs to the end. A non-OK status means the engine broke (an invariant, a
  // cycle that does not settle): the result is not trustworthy.
  Status Run();
  SimulationResult BuildResult() const;

  const engine::Engine& engine() const { return *engine_; }
  const Clock& clock() const { return clock_; }
  Time end_time() const { return end_time_; }

  // engine::Executor
  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;

 private:
  // What the simulator tracks per workload beyond the engine's record.
  struct RunState {
    std::optional<double> remaining;  // work left; nullopt = runs until the end
    uint64_t generation = 0;          // bumps on every start and stop
    Time run_start = 0;
    int64_t gpus = 0;                       // GPUs held by the current run
    std::optional<Time> notice_checkpoint;  // checkpoint taken at a spot notice
    double gpu_seconds_used = 0;            // closed runs
    double gpu_seconds_lost = 0;
  };

  void ScheduleInitialEvents(const model::ManifestSet& manifests);
  Status Apply(const Event& event);

  SimOptions options_;
  SimClock clock_;
  std::unique_ptr<engine::Engine> engine_;
  EventQueue events_;
  std::map<std::string, RunState> runs_;
  int64_t cluster_gpus_ = 0;
  Time end_time_ = 0;
};

// Builds, runs and reports in one go.
Result<SimulationResult> Simulate(const model::ManifestSet& manifests, const SimOptions& options);

}  // namespace muster::sim
