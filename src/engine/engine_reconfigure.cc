// Engine::Reconfigured and Engine::Readmitted: the cluster, queue or flavor
// configuration of a long-running server changed in a way no in-place event covers.
// The lower layers (Readmitted: admission only) are rebuilt from the new manifests,
// and every workload carries over in memory: its record, its order, its history, and,
// for a running gang, its nodes and quota. Nothing is re-read or re-adopted from
// stored objects and the executor hears only of gangs that must stop.
#include <fmt/format.h>

#include <utility>

#include "engine/engine.h"

namespace muster::engine {

std::unique_ptr<Engine> Engine::Reconfigured(std::unique_ptr<Engine> old,
                                             const model::ManifestSet& manifests,
                                             EngineParts parts) {
  auto fresh = std::make_unique<Engine>(manifests, std::vector<model::Workload>{}, std::move(parts),
                                        old->clock_, old->options_);
  CarryOver(*old, *fresh, /*placement_kept=*/false);
  return fresh;
}

std::unique_ptr<Engine> Engine::Readmitted(std::unique_ptr<Engine> old,
                                           const model::ManifestSet& manifests,
                                           std::unique_ptr<admission::Admitter> admitter) {
  EngineParts parts;
  parts.admitter = std::move(admitter);
  // The same objects: fresh's bridge binds to the state old's bound pods are in.
  parts.cluster = std::move(old->parts_.cluster);
  parts.planner = std::move(old->parts_.planner);
  auto fresh = std::make_unique<Engine>(manifests, std::vector<model::Workload>{}, std::move(parts),
                                        old->clock_, old->options_);
  CarryOver(*old, *fresh, /*placement_kept=*/true);
  return fresh;
}

void Engine::CarryOver(Engine& old, Engine& e, bool placement_kept) {
  e.executor_ = old.executor_;
  e.log_ = std::move(old.log_);
  e.cycles_ = old.cycles_;
  e.generation_ = old.generation_ + 1;
  e.errors_ = std::move(old.errors_);
  e.records_ = std::move(old.records_);
  e.taint_evictions_ = std::move(old.taint_evictions_);
  e.UpdateClusterCapacity();
  placement::ClusterState& cluster = *e.parts_.cluster;
  const Time now = e.Now();

  // Waiting workloads queue again at their original submission time (their place in
  // line); admitted gangs still waiting for nodes start over from the queue.
  std::vector<WorkloadRecord*> running;
  for (WorkloadRecord& r : e.records_) {
    if (!r.submitted || r.Finished()) continue;
    // Deactivated, or waiting out a waitForPodsReady backoff: not in line now.
    if (r.phase == Phase::kPending && (r.deactivated || r.requeue_at)) continue;
    if (r.phase == Phase::kRunning && r.bound) {
      running.push_back(&r);
      continue;
    }
    if (r.phase == Phase::kAdmitted) {
      // A kept cluster may hold its plan; a fresh one never saw it.
      if (placement_kept && r.bound) cluster.Release(r.key());
      r.assignment = admission::Assignment{};
      r.plan.pods.clear();
      r.bound = false;
      r.phase = Phase::kPending;
    }
    e.parts_.admitter->Enqueue(r.SharedWorkload(), r.submit_time.value_or(now), &r);
  }
  // Running gangs stay on their nodes with their quota: in a kept cluster as they
  // are, in a fresh one committed again (node indices mapped by name).
  size_t kept = 0;
  for (WorkloadRecord* r : running) {
    placement::GangPlan plan = r->plan;
    std::string lost;
    Status st = Status::Ok();
    if (!placement_kept) {
      const placement::ClusterState& before = *old.parts_.cluster;
      for (placement::PodPlacement& pod : plan.pods) {
        const std::string& name = before.GetNode(pod.node).meta.name;
        auto index = cluster.FindNode(name);
        if (!index) {
          lost = "node " + name + " was removed";
          break;
        }
        pod.node = *index;
      }
      st = lost.empty() ? cluster.Commit(plan, r->workload) : FailedPrecondition(lost);
    }
    if (st.ok()) {
      st = e.parts_.admitter->Adopt(r->SharedWorkload(), r->assignment, now);
      if (!st.ok()) cluster.Release(r->key());
    }
    if (st.ok()) {
      r->plan = std::move(plan);
      e.RememberQueue(*r);
      // Its nodes' NoExecute taints as they are now (a rebuild may have changed
      // them): evicted at the next cycle if it does not tolerate one.
      e.ApplyNoExecute(*r, false);
      e.TrackGrowth(*r);  // an elastic gang below its counts may still grow
      ++kept;
      continue;
    }
    // Its node is gone or no longer takes it, or its queue no longer admits it: it
    // stops (the executor still knows the plan by the old cluster's indices, which
    // it resolved when the gang started) and waits again.
    const std::string reason = lost.empty() ? kReasonConfigurationChanged : kReasonNodeFailure;
    if (e.executor_ != nullptr) e.executor_->Stopped(*r, now, StopCause::kEvicted);
    e.taint_evictions_.erase(r->key());
    r->bound = false;
    r->plan.pods.clear();
    r->assignment = admission::Assignment{};
    r->phase = Phase::kPending;
    e.log_.Add({now, r->key(), "Evict", reason, st.message()});
    r->evictions.push_back(Eviction{now, reason, st.message(), ""});
    e.parts_.admitter->Enqueue(r->SharedWorkload(), r->submit_time.value_or(now), r);
  }
  e.parts_.admitter->NotifyCapacityChanged();
  e.log_.Add({now, "", "Reconfigured", placement_kept ? "QueuesChanged" : "",
              fmt::format("{} nodes, {} running gangs kept",
                          cluster.NodeCount() - cluster.RemovedNodeCount(), kept)});
}

}  // namespace muster::engine
