#include "engine/engine.h"

#include <fmt/format.h>

#include <utility>

#include "engine/lifecycle.h"
#include "workloads/workloads.h"

namespace muster::engine {

Result<EngineParts> BuildEngineParts(const model::ManifestSet& manifests) {
  EngineParts parts;
  auto admitter = admission::MakeAdmitter(manifests);
  if (!admitter.ok()) return admitter.status();
  parts.admitter = std::move(admitter).value();
  auto cluster = placement::BuildClusterState(manifests.nodes, manifests.node_topologies,
                                              manifests.topologies, manifests.hyper_nodes);
  if (!cluster.ok()) return cluster.status();
  parts.cluster = std::move(cluster).value();
  parts.planner = placement::MakeGangPlanner(
      manifests.scheduler_config.value_or(model::SchedulerConfiguration{}));
  return parts;
}

Engine::Engine(const model::ManifestSet& manifests, std::vector<model::Workload> workloads,
               EngineParts parts, const Clock& clock, EngineOptions options)
    : clock_(clock),
      options_(options),
      parts_(std::move(parts)),
      bridge_(manifests.resource_flavors, *parts_.cluster) {
  bridge_.SetPlanner(parts_.planner.get());
  if (manifests.kueue_config) pods_ready_ = manifests.kueue_config->wait_for_pods_ready;
  if (manifests.scheduler_config) {
    drf_growth_order_ = manifests.scheduler_config->volcano.drf_job_order;
    bridge_.SetReservationAfter(manifests.scheduler_config->reservation_after_seconds);
    bridge_.SetSla(manifests.scheduler_config->volcano.sla,
                   manifests.scheduler_config->volcano.sla_waiting_seconds);
  }
  // Every known workload is looked up by key on Submit: no rehash while they arrive
  // (here and in the admitter's states).
  records_.Reserve(workloads.size());
  if (parts_.admitter) parts_.admitter->Reserve(workloads.size());
  for (auto& w : workloads) {
    if (records_.Find(w.key) != nullptr) {
      errors_.push_back("workload " + w.key + " is defined twice; the second is ignored");
      continue;
    }
    records_.Add(std::move(w));
  }
}

Result<std::unique_ptr<Engine>> Engine::Create(const model::ManifestSet& manifests,
                                               const Clock& clock, EngineOptions options) {
  auto workloads = workloads::BuildWorkloads(manifests);
  if (!workloads.ok()) return workloads.status();
  auto parts = BuildEngineParts(manifests);
  if (!parts.ok()) return parts.status();
  return std::make_unique<Engine>(manifests, std::move(workloads).value(), std::move(parts).value(),
                                  clock, options);
}

const WorkloadRecord* Engine::Find(const std::string& key) const { return records_.Find(key); }

WorkloadRecord* Engine::FindMutable(const std::string& key) { return records_.Find(key); }

// ---------------------------------------------------------------------------
// Events

Status Engine::Submit(const std::string& key) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (r->submitted) return FailedPrecondition("workload " + key + " was already submitted");
  r->submitted = true;
  r->submit_time = Now();
  r->phase = Phase::kPending;
  ++generation_;
  parts_.admitter->Enqueue(r->SharedWorkload(), Now(), r);
  RememberQueue(*r);
  log_.Add({Now(), key, "Submit", "", ""});
  return Status::Ok();
}

Status Engine::Succeed(const std::string& key) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (r->phase != Phase::kRunning) {
    return FailedPrecondition(
        fmt::format("workload {} is {}, not Running", key, PhaseName(r->phase)));
  }
  StopGang(*r, StopCause::kSucceeded);
  parts_.admitter->Remove(key);
  parts_.admitter->NotifyCapacityChanged();
  ++generation_;
  r->phase = Phase::kSucceeded;
  r->finish_time = Now();
  log_.Add({Now(), key, "Finish", "Succeeded", ""});
  return Status::Ok();
}

Status Engine::FailPods(const std::string& key, const std::string& message,
                        FailureDirective directive) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (!r->Active()) {
    return FailedPrecondition(
        fmt::format("workload {} is {}, it has no pods", key, PhaseName(r->phase)));
  }
  // A pod failure is not an eviction: the restart shows in the decision log only.
  WorkloadRecord& rec = *r;
  FailureVerdict verdict;
  if (directive == FailureDirective::kPolicy) {
    verdict = DecideOnFailure(rec.workload.lifecycle, rec.failures, kEventPodFailed);
    rec.failures++;
  } else if (directive == FailureDirective::kFail) {
    verdict = {FailureAction::kFail, "its failure policy fails the job"};
    rec.failures++;
  } else {
    verdict = {FailureAction::kRestart, "its failure policy restarts the job (not counted)"};
    rec.uncounted_restarts++;
  }
  ++generation_;
  if (verdict.action == FailureAction::kRestart) {
    StopGang(rec, StopCause::kEvicted);
    rec.phase = Phase::kPending;
    parts_.admitter->Requeue(key, Now());
    log_.Add({Now(), key, "Restart", "PodFailed", message + "; " + verdict.why});
  } else {
    StopGang(rec, StopCause::kFailed);
    parts_.admitter->Remove(key);
    rec.phase = Phase::kFailed;
    rec.finish_time = Now();
    rec.failure_message = message + "; " + verdict.why;
    log_.Add({Now(), key, "Fail", "PodFailed", rec.failure_message});
  }
  parts_.admitter->NotifyCapacityChanged();
  return Status::Ok();
}

Status Engine::NodeLost(const std::string& node, const std::string& detail) {
  auto idx = parts_.cluster->FindNode(node);
  if (!idx) return NotFound("node " + node + " not found");
  parts_.cluster->SetNodeReady(*idx, false);
  bridge_.Reset();
  UpdateClusterCapacity();
  log_.Add({Now(), node, "NodeLost", "NodeFailure", detail});
  ++generation_;
  for (WorkloadRecord* r : GangsOnNode(*idx, node)) {
    HandleFailure(*r, Eviction{Now(), kReasonNodeFailure, detail, ""}, kEventPodFailed);
  }
  parts_.admitter->NotifyCapacityChanged();
  return Status::Ok();
}

std::vector<WorkloadRecord*> Engine::GangsOnNode(placement::NodeIndex idx,
                                                 const std::string& node) {
  std::vector<WorkloadRecord*> out;
  // Sorted by key: evictions happen in a deterministic order.
  for (const std::string& key : parts_.cluster->WorkloadsOnNode(idx)) {
    WorkloadRecord* r = FindMutable(key);
    if (r == nullptr || !r->Active()) {
      errors_.push_back(fmt::format("node {} holds pods of {}, which is not active", node, key));
      parts_.cluster->Release(key);
      continue;
    }
    out.push_back(r);
  }
  return out;
}

Status Engine::NodeBack(const std::string& node) {
  auto idx = parts_.cluster->FindNode(node);
  if (!idx) return NotFound("node " + node + " not found");
  parts_.cluster->SetNodeReady(*idx, true);
  bridge_.Reset();
  UpdateClusterCapacity();
  parts_.admitter->NotifyCapacityChanged();
  log_.Add({Now(), node, "NodeReady", "", ""});
  return Status::Ok();
}

Status Engine::CordonNode(const std::string& node) {
  auto idx = parts_.cluster->FindNode(node);
  if (!idx) return NotFound("node " + node + " not found");
  // Not ready = takes no new pods; the running ones stay until the node is lost.
  parts_.cluster->SetNodeReady(*idx, false);
  bridge_.Reset();
  UpdateClusterCapacity();
  log_.Add({Now(), node, "Cordon", "SpotReclaimNotice", ""});
  return Status::Ok();
}

void Engine::ConfigurationChanged(const model::SchedulerConfiguration& config) {
  parts_.planner = placement::MakeGangPlanner(config);
  bridge_.SetPlanner(parts_.planner.get());
  bridge_.SetReservationAfter(config.reservation_after_seconds);
  bridge_.SetSla(config.volcano.sla, config.volcano.sla_waiting_seconds);
  drf_growth_order_ = config.volcano.drf_job_order;
  bridge_.Reset();
  parts_.admitter->NotifyCapacityChanged();
  log_.Add({Now(), "", "ConfigurationChanged", "", ""});
}

void Engine::UpdateClusterCapacity() {
  // What Volcano's proportion plugin divides: schedulable, ready nodes only.
  ResourceList total;
  for (placement::NodeIndex i = 0; i < parts_.cluster->NodeCount(); ++i) {
    if (!parts_.cluster->NodeReady(i) || parts_.cluster->GetNode(i).unschedulable) continue;
    total += parts_.cluster->GetNode(i).allocatable;
  }
  cluster_total_ = total;
  parts_.admitter->SetClusterCapacity(total);
}

// ---------------------------------------------------------------------------
// Gang start / stop

void Engine::Start(WorkloadRecord& record, placement::GangPlan plan) {
  record.plan = std::move(plan);
  record.bound = true;
  record.phase = Phase::kRunning;
  record.start_time = Now();
  // Without readiness reports (simulation) a bound gang's pods count as ready,
  // unless its sim spec delays that (the simulator then reports it).
  record.pods_ready = !options_.pods_ready_reported && !record.workload.sim.pods_ready_after;
  record.ready_lost_time.reset();
  placement_waits_.erase(record.key());
  log_.Add({Now(), record.key(), "Start", "", fmt::format("{} pods", record.plan.pods.size())});
  TrackGrowth(record);
  // Placed on a node with a NoExecute taint it tolerates for a while: due then (the
  // filter let no pod onto one it does not tolerate).
  ApplyNoExecute(record, false);
  if (executor_ != nullptr) executor_->Started(record, Now());
}

void Engine::StopGang(WorkloadRecord& record, StopCause cause) {
  growable_.erase(record.key());
  taint_evictions_.erase(record.key());
  record.pods_ready = false;
  record.ready_lost_time.reset();
  if (record.bound) {
    parts_.cluster->Release(record.key());
    record.bound = false;
  }
  if (record.phase == Phase::kRunning && executor_ != nullptr) {
    executor_->Stopped(record, Now(), cause);
  }
  if (cause != StopCause::kSucceeded) {
    // An evicted or failed workload holds no admission any more; a finished one
    // keeps its last placement for reporting.
    record.plan.pods.clear();
    record.assignment = admission::Assignment{};
  }
  placement_waits_.erase(record.key());
}

void Engine::EvictAndRequeue(WorkloadRecord& record, Eviction eviction) {
  StopGang(record, StopCause::kEvicted);
  record.phase = Phase::kPending;
  log_.Add({eviction.time, record.key(), "Evict", eviction.reason,
            eviction.detail + (eviction.by.empty() ? "" : " by " + eviction.by)});
  record.evictions.push_back(std::move(eviction));
  parts_.admitter->Requeue(record.key(), Now());
}

void Engine::HandleFailure(WorkloadRecord& record, Eviction eviction, const std::string& event) {
  FailureVerdict verdict = DecideOnFailure(record.workload.lifecycle, record.failures, event);
  record.failures++;
  if (verdict.action == FailureAction::kRestart) {
    EvictAndRequeue(record, std::move(eviction));
    return;
  }
  StopGang(record, StopCause::kFailed);
  parts_.admitter->Remove(record.key());
  record.phase = Phase::kFailed;
  record.finish_time = Now();
  record.failure_message = eviction.detail + "; " + verdict.why;
  log_.Add({Now(), record.key(), "Fail", eviction.reason, record.failure_message});
  record.evictions.push_back(std::move(eviction));
}

// ---------------------------------------------------------------------------
// The cycle

Status Engine::RunCycle() {
  settled_ = false;
  // Time moves only between calls: readiness timeouts and backoffs fall due here.
  RunPodsReadyTimers();
  RunTaintEvictions();
  for (int i = 0; i < options_.max_cycles_per_instant; ++i) {
    if (options_.max_cycles_per_call > 0 && i == options_.max_cycles_per_call) {
      return Status::Ok();  // not settled: the next call goes on
    }
    ++cycles_;
    // A starving gang's reservation (reservations.h) is made, kept or ended first.
    std::vector<LogEntry> reserved = bridge_.UpdateReservations(
        Now(), [this](const std::string& k) { return Find(k); }, *parts_.admitter);
    if (!reserved.empty()) parts_.admitter->NotifyCapacityChanged();
    for (LogEntry& e : reserved) log_.Add(std::move(e));
    bool changed = PlaceAdmitted();
    // Kept from cycle to cycle (a member): its storage is reused.
    std::vector<admission::Decision>& decisions = decisions_;
    admission_blocked_ = AdmissionBlocked();
    if (admission_blocked_) {
      MarkBlocked();  // blockAdmission: Kueue's scheduler waits, so does this pass
    } else {
      parts_.admitter->RunCycleInto(decisions, Now(), bridge_);
    }
    for (auto& d : decisions) changed |= ApplyDecision(d);
    // Elastic gangs grow into what is left once admission has settled at this
    // instant (Volcano orders jobs below their minimum first): never into
    // capacity a preemption freed for its preemptor.
    if (!changed) changed |= GrowElastic();
    // Admission reports pending reasons only when they change.
    if (changed || !decisions.empty() || !reserved.empty()) ++generation_;
    decisions.clear();  // what they hold, not the vector's storage
    ReleaseUntaken();
    bridge_.Reset();
    if (options_.check_invariants) {
      std::vector<std::string> broken = CheckInvariants();
      if (!broken.empty()) {
        std::string msg = fmt::format("invariants broken at t={}:", Now());
        for (const auto& b : broken) msg += "\n  " + b;
        return Internal(msg);
      }
    }
    if (!changed) {
      settled_ = true;
      return Status::Ok();
    }
  }
  return Internal(
      fmt::format("scheduling did not settle after {} cycles at t={}: admission keeps changing its "
                  "decisions (a preemption loop?)",
                  options_.max_cycles_per_instant, Now()));
}

bool Engine::ApplyDecision(admission::Decision& d) {
  // The admitter hands back the record the workload was enqueued with: no lookup by
  // key (a few cache misses each, for every decision of a cycle).
  WorkloadRecord* r =
      d.owner != nullptr ? static_cast<WorkloadRecord*>(d.owner) : FindMutable(d.workload_key);
  if (r != nullptr && r->key() != d.workload_key) {
    errors_.push_back("admission decided on " + d.workload_key + " with the record of " + r->key());
    return false;
  }
  if (r == nullptr) {
    errors_.push_back("admission decided on unknown workload " + d.workload_key);
    return false;
  }
  switch (d.kind) {
    case admission::Decision::Kind::kAdmit:
      if (AdmissionBlocked()) {
        // An earlier admission of this pass is not ready yet: one at a time.
        TakeBackAdmission(*r, d);
        return true;
      }
      return ApplyAdmit(*r, d);
    case admission::Decision::Kind::kPreempt:
      LogPending(*r, d);
      return ApplyPreempt(d);
    case admission::Decision::Kind::kPending:
      LogPending(*r, std::move(d));  // nothing reads the decision after it
      return false;
    case admission::Decision::Kind::kEvict: {
      if (!r->Active()) return false;
      std::string reason = d.reason.empty() ? std::string(kReasonDeactivated) : d.reason;
      EvictAndRequeue(*r, Eviction{Now(), reason, d.message, ""});
      parts_.admitter->NotifyCapacityChanged();
      return true;
    }
  }
  return false;
}

bool Engine::ApplyAdmit(WorkloadRecord& r, admission::Decision& d) {
  if (r.Active() || r.Finished() || !r.submitted) {
    errors_.push_back(fmt::format("admission admitted {}, which is {}{}", r.key(),
                                  PhaseName(r.phase), r.submitted ? "" : " (not submitted)"));
    return false;
  }
  r.pending_note = {};
  // What RememberQueue would ask the admitter for, carried by the decision.
  if (d.queue.known()) r.queue = std::move(d.queue);
  r.assignment = std::move(d.assignment);
  r.admit_time = Now();
  if (!r.first_admit_time) r.first_admit_time = Now();
  r.phase = Phase::kAdmitted;
  log_.Add({Now(), r.key(), "Admit", std::move(d.reason), std::move(d.message)});

  std::optional<placement::GangPlan> plan = bridge_.TakeCommitted(r.key());
  if (!plan) {
    // Admission did not commit through the oracle (quota-only admission): place now.
    auto placed = bridge_.PlaceNow(r.workload, r.assignment);
    if (auto* p = std::get_if<placement::GangPlan>(&placed)) {
      plan = std::move(*p);
    } else {
      std::string why = bridge_.CommitError(r.key());
      if (why.empty()) why = std::get<placement::PlacementFailure>(placed).message;
      placement_waits_[r.key()] = why;
      log_.Add({Now(), r.key(), "WaitForNodes", "Unschedulable", why});
      return true;
    }
  }
  Start(r, std::move(*plan));
  return true;
}

bool Engine::ApplyPreempt(const admission::Decision& d) {
  bool changed = false;
  for (const auto& victim : d.victims) {
    WorkloadRecord* v = FindMutable(victim.workload_key);
    if (v == nullptr || !v->Active()) {
      // Already gone (finished or evicted earlier at this instant): nothing to do.
      continue;
    }
    Eviction why{Now(), kReasonPreempted, victim.detail, d.workload_key};
    if (!victim.shrink_to.empty() && v->phase == Phase::kRunning && v->bound && CanResize()) {
      ShrinkGang(*v, victim.shrink_to, why);  // elastic: gives up pods above its minimum
    } else {
      EvictAndRequeue(*v, std::move(why));
    }
    changed = true;
  }
  if (changed) parts_.admitter->NotifyCapacityChanged();
  return changed;
}

bool Engine::PlaceAdmitted() {
  // Only admitted-but-unbound workloads are in placement_waits_: no scan of all.
  std::vector<std::string> waiting;
  for (const auto& [key, why] : placement_waits_) waiting.push_back(key);
  bool changed = false;
  for (const std::string& key : waiting) {
    WorkloadRecord* r = FindMutable(key);
    if (r == nullptr || r->phase != Phase::kAdmitted || r->bound) {
      placement_waits_.erase(key);
      continue;
    }
    auto placed = bridge_.PlaceNow(r->workload, r->assignment);
    if (auto* p = std::get_if<placement::GangPlan>(&placed)) {
      Start(*r, std::move(*p));
      changed = true;
    } else {
      std::string& why = placement_waits_[key];
      const std::string& now_why = std::get<placement::PlacementFailure>(placed).message;
      if (why != now_why) ++generation_;
      why = now_why;
    }
  }
  return changed;
}

void Engine::ReleaseUntaken() {
  for (const std::string& key : bridge_.UntakenKeys()) {
    std::optional<placement::GangPlan> plan = bridge_.TakeCommitted(key);
    const WorkloadRecord* r = Find(key);
    if (r != nullptr && r->bound) continue;  // defensive: never unbind a running gang
    parts_.cluster->Release(key);
    errors_.push_back("admission committed " + key + " without admitting it");
  }
}

namespace {

const char* PendingAction(const admission::Decision& d) {
  return d.kind == admission::Decision::Kind::kPreempt ? "Preempt" : "Pending";
}

}  // namespace

// Admission reports a pending reason again when it changes; so does a workload's
// note, and the log only then.
bool Engine::NotePending(WorkloadRecord& r, const admission::Decision& d) {
  WorkloadRecord::PendingNote& note = r.pending_note;
  if (note.noted && d.text != nullptr && note.shared == d.text) return false;
  const bool same = note.noted && note.Reason() == d.reason && note.Message() == d.message;
  note.noted = true;
  if (d.text != nullptr) {
    note.shared = d.text;
    note.reason.clear();
    note.message.clear();
  } else if (!same) {
    note.shared = nullptr;
    note.reason = d.reason;
    note.message = d.message;
  }
  return !same;
}

void Engine::LogPending(WorkloadRecord& r, const admission::Decision& d) {
  if (NotePending(r, d)) log_.Add({Now(), d.workload_key, PendingAction(d), d.reason, d.message});
}

void Engine::LogPending(WorkloadRecord& r, admission::Decision&& d) {
  if (!NotePending(r, d)) return;
  log_.Add({Now(), std::move(d.workload_key), PendingAction(d), std::move(d.reason),
            std::move(d.message)});
}

// ---------------------------------------------------------------------------
// Views

void Engine::RememberQueue(WorkloadRecord& record) {
  // The admitter names a queue only for a workload that asks for one (its copy is
  // of record.workload): skip the lookup for queue-less ones.
  if (record.workload.local_queue.empty() && record.workload.volcano_queue.empty()) return;
  admission::QueueInfo info = parts_.admitter->QueueOf(record.key());
  if (info.known()) record.queue = info;
}

admission::QueueInfo Engine::QueueOf(const std::string& key) const {
  admission::QueueInfo info = parts_.admitter->QueueOf(key);
  if (info.known()) return info;
  if (const WorkloadRecord* r = Find(key)) {
    if (r->queue.known()) return r->queue;
    info.local_queue = r->workload.local_queue;
    if (info.local_queue.empty() && !r->workload.volcano_queue.empty()) {
      info.cluster_queue = r->workload.volcano_queue;
      info.volcano = true;
    }
  }
  return info;
}

std::string Engine::PendingMessage(const std::string& key) const {
  const WorkloadRecord* r = Find(key);
  if (r == nullptr) return "unknown workload";
  switch (r->phase) {
    case Phase::kRunning:
    case Phase::kSucceeded:
      return "";
    case Phase::kFailed:
      return "failed: " + r->failure_message;
    case Phase::kAdmitted: {
      auto it = placement_waits_.find(key);
      return "admitted, waiting for nodes: " +
             (it == placement_waits_.end() ? std::string("not placed yet") : it->second);
    }
    case Phase::kPending:
      break;
  }
  if (!r->submitted) {
    return fmt::format("not created yet (submit-at {}s)", r->workload.sim.submit_at);
  }
  if (r->deactivated || r->requeue_at || admission_blocked_) {
    // Out of line (pods_ready.cc): the engine's own reason, not admission's.
    if (r->pending_note.noted) return r->pending_note.Message();
  }
  if (auto d = parts_.admitter->PendingReason(key); d && !d->message.empty()) return d->message;
  if (r->pending_note.noted && !r->pending_note.Message().empty()) {
    return r->pending_note.Message();
  }
  return "waiting for the next scheduling cycle";
}

}  // namespace muster::engine
