// Simulator: the discrete-event loop of `muster simulate`. Virtual time jumps from
// event to event (submissions, completions, node failures, recoveries, spot
// reclaims); after the events of an instant the engine runs its cycle. The
// simulator is also the engine's Executor: a gang that starts gets a completion
// event after its (remaining) duration.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
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
  // Admission without its shortcuts (Admitter::DisableShortcuts): same decisions, slower.
  bool no_shortcuts = false;
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
  // The same on engine parts built elsewhere (tests tune a part: an admitter that
  // visits every head, say).
  static Result<std::unique_ptr<Simulator>> Create(const model::ManifestSet& manifests,
                                                   std::vector<model::Workload> workloads,
                                                   engine::EngineParts parts,
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
  // An elastic gang grew or shrank: its work (duration) is unchanged; usage
  // accounting switches to the new size from `now`.
  void Resized(const engine::WorkloadRecord& record,
               const std::vector<placement::PodPlacement>& added,
               const std::vector<placement::PodPlacement>& removed, Time now) override;
  bool SupportsResize() const override { return true; }

 private:
  // What the simulator tracks per workload beyond the engine's record.
  struct RunState {
    std::optional<double> remaining;  // work left; nullopt = runs until the end
    uint64_t generation = 0;          // bumps on every start and stop
    Time run_start = 0;
    Time size_start = 0;                    // the current run's size holds since then
    int64_t gpus = 0;                       // GPUs held by the current run
    std::optional<Time> notice_checkpoint;  // checkpoint taken at a spot notice
    double gpu_seconds_used = 0;            // closed runs
    double gpu_seconds_lost = 0;
    // For the report's metrics (issue 5).
    int64_t cpu_milli = 0;  // cpu held by the current run
    std::string queue;      // ClusterQueue / Volcano queue, "" when none
    std::optional<Time> first_start;
    double cpu_milli_seconds_used = 0;
  };

  // Usage now, added to by Started and taken away by Stopped, sampled after each
  // instant: incremental because a scan of every node per instant would dominate
  // trace replays.
  struct Usage {
    int64_t gpus = 0;
    int64_t cpu_milli = 0;
    std::map<std::string, int64_t> queue_gpus;
    std::set<std::string> dirty_queues;  // changed since the last sample
    std::vector<SeriesPoint> gpu_series;
    std::vector<SeriesPoint> cpu_series;
    std::map<std::string, std::vector<SeriesPoint>> queue_series;
    int64_t multi_pod_starts = 0;
    int64_t multi_pod_one_rack = 0;
    int64_t gpu_pods = 0;
    int64_t gpu_pods_one_numa = 0;
  };

  // Usage bookkeeping for a run that starts or stops (report_metrics.cc).
  void NoteStart(const engine::WorkloadRecord& record, RunState& run, Time now);
  void NoteStop(RunState& run, double elapsed);
  void NoteResize(const engine::WorkloadRecord& record, RunState& run);
  void SampleUsage(Time t);
  // Free GPUs on ready nodes that cannot fit the smallest waiting GPU pod shape.
  int64_t FragmentedGpus() const;
  void FillReportMetrics(SimulationResult& out) const;

  void ScheduleInitialEvents(const model::ManifestSet& manifests);
  Status Apply(const Event& event);
  // Wakes the engine when its next waitForPodsReady deadline falls due.
  void ScheduleTimer(Time now);

  SimOptions options_;
  SimClock clock_;
  std::unique_ptr<engine::Engine> engine_;
  EventQueue events_;
  std::optional<Time> timer_;      // the kTimer event in events_, if any
  size_t timer_events_ = 0;        // kTimer events in events_
  bool bounded_requeues_ = false;  // waitForPodsReady has a backoffLimitCount
  // By workload key, looked up per event and never walked in order: hashed, where a
  // tree's string compares along a cold path grew with the trace.
  std::unordered_map<std::string, RunState> runs_;
  int64_t cluster_gpus_ = 0;
  int64_t cluster_cpu_milli_ = 0;
  std::map<std::string, double> queue_gpu_quota_;
  std::vector<std::string> rack_of_node_;  // by node index; "" = no rack label
  bool any_rack_ = false;
  Usage usage_;
  Time end_time_ = 0;
};

// GPUs of each queue's nominal quota: a ClusterQueue's nvidia.com/gpu over all
// flavors; a Volcano queue's deserved, else capability. Queues without one are absent.
std::map<std::string, double> QueueGpuQuotas(const model::ManifestSet& manifests);
// The node's rack: label topology.kubernetes.io/rack, else the first label whose key
// contains "rack"; "" when none.
std::string RackOf(const model::Node& node);

// Builds, runs and reports in one go.
Result<SimulationResult> Simulate(const model::ManifestSet& manifests, const SimOptions& options);

}  // namespace muster::sim
