#include "sim/simulator.h"

#include <fmt/format.h>

#include <cmath>

#include "workloads/workloads.h"

namespace muster::sim {

Simulator::Simulator(const model::ManifestSet& manifests, const SimOptions& options)
    : options_(options) {
  for (const auto& node : manifests.nodes) {
    cluster_gpus_ += node.allocatable.Get(kNvidiaGpu);
    cluster_cpu_milli_ += node.allocatable.Get(kCpu);
  }
  queue_gpu_quota_ = QueueGpuQuotas(manifests);
  if (manifests.kueue_config)
    bounded_requeues_ = manifests.kueue_config->wait_for_pods_ready.backoff_limit_count.has_value();
}

Result<std::unique_ptr<Simulator>> Simulator::Create(const model::ManifestSet& manifests,
                                                     const SimOptions& options) {
  auto workloads = workloads::BuildWorkloads(manifests);
  if (!workloads.ok()) return workloads.status();
  return Create(manifests, std::move(workloads).value(), options);
}

Result<std::unique_ptr<Simulator>> Simulator::Create(const model::ManifestSet& manifests,
                                                     std::vector<model::Workload> workloads,
                                                     const SimOptions& options) {
  auto parts = engine::BuildEngineParts(manifests);
  if (!parts.ok()) return parts.status();
  return Create(manifests, std::move(workloads), std::move(parts).value(), options);
}

Result<std::unique_ptr<Simulator>> Simulator::Create(const model::ManifestSet& manifests,
                                                     std::vector<model::Workload> workloads,
                                                     engine::EngineParts parts,
                                                     const SimOptions& options) {
  auto sim = std::make_unique<Simulator>(manifests, options);
  engine::EngineOptions engine_options;
  engine_options.check_invariants = options.check_invariants;
  if (options.no_shortcuts) parts.admitter->DisableShortcuts();
  sim->SetEngine(std::make_unique<engine::Engine>(manifests, std::move(workloads), std::move(parts),
                                                  sim->clock_, engine_options));
  sim->ScheduleInitialEvents(manifests);
  return sim;
}

void Simulator::SetEngine(std::unique_ptr<engine::Engine> engine) {
  engine_ = std::move(engine);
  engine_->SetExecutor(this);
  runs_.reserve(engine_->workloads().size());
  for (const auto& r : engine_->workloads()) runs_[r.key()].remaining = r.workload.sim.duration;
  const placement::ClusterState& cluster = engine_->cluster();
  rack_of_node_.clear();
  for (placement::NodeIndex i = 0; i < cluster.NodeCount(); ++i) {
    rack_of_node_.push_back(RackOf(cluster.GetNode(i)));
    if (!rack_of_node_.back().empty()) any_rack_ = true;
  }
}

void Simulator::ScheduleInitialEvents(const model::ManifestSet& manifests) {
  // Workloads in input order: equal submit times keep that order.
  for (const auto& r : engine_->workloads()) {
    events_.Push(r.workload.sim.submit_at, EventKind::kSubmit, r.key());
  }
  for (const auto& node : manifests.nodes) {
    const std::string& name = node.meta.name;
    if (node.sim.fail_at) events_.Push(*node.sim.fail_at, EventKind::kNodeFail, name);
    if (node.sim.recover_at) events_.Push(*node.sim.recover_at, EventKind::kNodeRecover, name);
    if (node.sim.reclaim_at) events_.Push(*node.sim.reclaim_at, EventKind::kReclaimNotice, name);
  }
}

Status Simulator::Run() {
  if (engine_ == nullptr) return FailedPrecondition("simulator has no engine");
  Time last = 0;
  while (!events_.empty()) {
    Time t = events_.top().time;
    if (options_.until && t > *options_.until) break;
    clock_.Set(t);
    // Every event of this instant first, then one (settling) scheduling pass.
    while (!events_.empty() && events_.top().time == t) {
      Status st = Apply(events_.Pop());
      if (!st.ok()) return st;
    }
    Status st = engine_->RunCycle();
    if (!st.ok()) return st;
    ScheduleTimer(t);
    SampleUsage(t);
    last = t;
  }
  end_time_ = options_.until ? *options_.until : last;
  clock_.Set(end_time_);
  return Status::Ok();
}

void Simulator::ScheduleTimer(Time now) {
  if (timer_ && *timer_ <= now) timer_.reset();
  std::optional<Time> due = engine_->NextTimedEvent();
  if (!due || *due <= now || (timer_ && *timer_ <= *due)) return;
  // Timers alone could go on for ever (a gang that never gets nodes, requeued
  // without a backoffLimitCount): they wake the engine only while something
  // else is still to happen, or while the requeues are bounded.
  if (!bounded_requeues_ && events_.size() == timer_events_) return;
  timer_ = *due;
  events_.Push(*timer_, EventKind::kTimer, "");
  ++timer_events_;
}

Status Simulator::Apply(const Event& e) {
  switch (e.kind) {
    case EventKind::kTimer:
      --timer_events_;
      return Status::Ok();  // the cycle after this instant's events acts
    case EventKind::kSubmit:
      return engine_->Submit(e.target);
    case EventKind::kPodsReady: {
      const engine::WorkloadRecord* r = engine_->Find(e.target);
      // Stale when the run it belonged to stopped meanwhile.
      if (r == nullptr || r->phase != engine::Phase::kRunning ||
          runs_[e.target].generation != e.generation) {
        return Status::Ok();
      }
      return engine_->SetPodsReady(e.target, true);
    }
    case EventKind::kFinish: {
      const engine::WorkloadRecord* r = engine_->Find(e.target);
      // A stale completion: the run it belonged to was evicted meanwhile.
      if (r == nullptr || r->phase != engine::Phase::kRunning ||
          runs_[e.target].generation != e.generation) {
        return Status::Ok();
      }
      return engine_->Succeed(e.target);
    }
    case EventKind::kNodeFail:
      return engine_->NodeLost(e.target, "node " + e.target + " failed");
    case EventKind::kNodeRecover:
      return engine_->NodeBack(e.target);
    case EventKind::kReclaimNotice: {
      // Jobs that checkpoint save their progress when told, before the node goes.
      if (auto idx = engine_->cluster().FindNode(e.target)) {
        for (const std::string& key : engine_->cluster().WorkloadsOnNode(*idx)) {
          const engine::WorkloadRecord* r = engine_->Find(key);
          if (r != nullptr && r->workload.sim.checkpoint_interval) {
            runs_[key].notice_checkpoint = clock_.Now();
          }
        }
      }
      events_.Push(clock_.Now() + options_.spot_notice_seconds, EventKind::kReclaimLoss, e.target);
      return engine_->CordonNode(e.target);
    }
    case EventKind::kReclaimLoss:
      return engine_->NodeLost(e.target, "spot node " + e.target + " reclaimed");
  }
  return Status::Ok();
}

void Simulator::Started(const engine::WorkloadRecord& record, Time now) {
  RunState& run = runs_[record.key()];
  run.generation++;
  run.run_start = now;
  run.size_start = now;
  run.gpus = engine::PlacedGpus(record);
  run.notice_checkpoint.reset();
  NoteStart(record, run, now);
  if (run.remaining) {
    events_.Push(now + std::max(0.0, *run.remaining), EventKind::kFinish, record.key(),
                 run.generation);
  }
  const std::optional<double>& ready_after = record.workload.sim.pods_ready_after;
  if (ready_after && std::isfinite(*ready_after)) {
    events_.Push(now + *ready_after, EventKind::kPodsReady, record.key(), run.generation);
  }
}

void Simulator::Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) {
  RunState& run = runs_[record.key()];
  run.generation++;
  double elapsed = std::max(0.0, now - run.run_start);
  double sized = std::max(0.0, now - run.size_start);  // at the current size
  auto gpus = static_cast<double>(run.gpus);
  run.gpu_seconds_used += sized * gpus;
  NoteStop(run, sized);
  if (cause == engine::StopCause::kSucceeded) {
    run.remaining = 0;
  } else {
    // Progress survives only up to the last checkpoint; the rest is redone.
    double saved = 0;
    const auto& interval = record.workload.sim.checkpoint_interval;
    if (interval && *interval > 0) {
      saved = std::floor(elapsed / *interval) * *interval;
      if (run.notice_checkpoint) saved = std::max(saved, *run.notice_checkpoint - run.run_start);
      saved = std::min(saved, elapsed);
    }
    if (run.remaining) run.remaining = std::max(0.0, *run.remaining - saved);
    run.gpu_seconds_lost += (elapsed - saved) * gpus;
  }
  run.gpus = 0;
  run.notice_checkpoint.reset();
}

void Simulator::Resized(const engine::WorkloadRecord& record,
                        const std::vector<placement::PodPlacement>& /*added*/,
                        const std::vector<placement::PodPlacement>& /*removed*/, Time now) {
  RunState& run = runs_[record.key()];
  double sized = std::max(0.0, now - run.size_start);
  run.gpu_seconds_used += sized * static_cast<double>(run.gpus);
  NoteStop(run, sized);  // the old size leaves the usage series...
  run.size_start = now;
  run.gpus = engine::PlacedGpus(record);
  NoteResize(record, run);  // ...and the new one enters it
}

Result<SimulationResult> Simulate(const model::ManifestSet& manifests, const SimOptions& options) {
  auto sim = Simulator::Create(manifests, options);
  if (!sim.ok()) return sim.status();
  Status st = (*sim)->Run();
  if (!st.ok()) return st;
  return (*sim)->BuildResult();
}

}  // namespace muster::sim
