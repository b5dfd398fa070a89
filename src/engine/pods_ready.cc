// Kueue's waitForPodsReady (Configuration .waitForPodsReady), driven by the
// engine's clock: an admitted workload whose pods are not all ready within
// `timeout` of its admission (or within `recoveryTimeout` of losing readiness) is
// evicted with reason PodsReadyTimeout and kept out of line for an exponential
// backoff (requeueState); past backoffLimitCount requeues it is deactivated.
// blockAdmission admits nothing while an admitted workload is not ready yet.
// Upstream adds a 0.01% random jitter to the backoff; muster adds none, so the
// same inputs give the same decisions.
#include <fmt/format.h>

#include <algorithm>

#include "engine/engine.h"

namespace muster::engine {
namespace {

constexpr const char* kBlockedReason = "WaitingForPodsReady";
constexpr const char* kBlockedMessage =
    "waiting for all admitted workloads to be in PodsReady condition";

// base * 2^(count-1), capped at max_seconds (Kueue's wait.Backoff with factor 2).
double Backoff(const model::WaitForPodsReadyConfig& cfg, int32_t count) {
  double wait = cfg.backoff_base_seconds;
  for (int32_t i = 1; i < count && wait < cfg.backoff_max_seconds; ++i) wait *= 2;
  return std::min(wait, cfg.backoff_max_seconds);
}

constexpr const char* kDeactivatedMessage =
    "The workload is deactivated due to exceeding the maximum number of re-queuing retries";

std::string BackoffMessage(Time requeue_at) {
  return fmt::format("evicted after the PodsReady timeout; requeued after a backoff at t={}",
                     requeue_at);
}

// waitForPodsReady is Kueue's: it watches workloads queued in a LocalQueue, not
// Volcano's jobs or jobs without a queue.
bool KueueManaged(const WorkloadRecord& r) { return !r.workload.local_queue.empty(); }

}  // namespace

Status Engine::SetPodsReady(const std::string& key, bool ready) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (r->phase != Phase::kRunning || r->pods_ready == ready) return Status::Ok();
  r->pods_ready = ready;
  if (!PodsReadyEnabled()) return Status::Ok();
  ++generation_;
  if (ready) {
    r->ready_lost_time.reset();
    log_.Add({Now(), key, "PodsReady", "PodsReady", "all pods are ready"});
  } else {
    r->ready_lost_time = Now();
    log_.Add({Now(), key, "PodsNotReady", "WaitForRecovery", "a pod lost its readiness"});
  }
  return Status::Ok();
}

Status Engine::RestoreRequeueState(const std::string& key, const RequeueState& state) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (r->phase != Phase::kPending || !r->submitted) return Status::Ok();
  // Without waitForPodsReady no timer would end the backoff: only deactivation stays.
  if (!state.deactivated && !PodsReadyEnabled()) return Status::Ok();
  r->requeue_count = state.count;
  r->requeue_at = state.requeue_at;
  r->restored_eviction_time = state.evicted_at;
  r->deactivated = state.deactivated;
  if (r->deactivated) {
    r->requeue_at.reset();
    r->requeue_count = 0;
    r->pending_note = {true, "Inactive", kDeactivatedMessage, nullptr};
  } else if (r->requeue_at) {
    r->pending_note = {true, "Backoff", BackoffMessage(*r->requeue_at), nullptr};
  } else {
    return Status::Ok();  // in line already, as Submit put it
  }
  parts_.admitter->Remove(key);
  parts_.admitter->NotifyCapacityChanged();
  ++generation_;
  return Status::Ok();
}

std::optional<Time> Engine::ReadyDeadline(const WorkloadRecord& r) const {
  if (!r.Active() || r.pods_ready || !KueueManaged(r)) return std::nullopt;
  if (r.ready_lost_time) {
    // Ready once in this admission: only recoveryTimeout bounds the wait.
    if (!pods_ready_.recovery_timeout_seconds) return std::nullopt;
    return *r.ready_lost_time + *pods_ready_.recovery_timeout_seconds;
  }
  if (!r.admit_time) return std::nullopt;
  return *r.admit_time + pods_ready_.timeout_seconds;
}

std::optional<Time> Engine::NextPodsReadyDeadline() const {
  if (!PodsReadyEnabled()) return std::nullopt;
  std::optional<Time> next;
  auto take = [&](std::optional<Time> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  for (const WorkloadRecord& r : records_) {
    take(ReadyDeadline(r));
    if (r.phase == Phase::kPending && !r.deactivated) take(r.requeue_at);
  }
  return next;
}

bool Engine::RunPodsReadyTimers() {
  if (!PodsReadyEnabled()) return false;
  bool changed = false;
  for (WorkloadRecord& r : records_) {
    if (r.phase == Phase::kPending && r.requeue_at && !r.deactivated && Now() >= *r.requeue_at) {
      // Backoff over: back in line, ordered per requeuingStrategy.timestamp.
      r.requeue_at.reset();
      std::optional<Time> evicted = r.restored_eviction_time;
      if (!r.evictions.empty()) evicted = r.evictions.back().time;
      const bool by_eviction = pods_ready_.requeuing_timestamp != "Creation" && evicted;
      const Time order = by_eviction ? *evicted : r.submit_time.value_or(Now());
      parts_.admitter->Enqueue(r.SharedWorkload(), order, &r);
      log_.Add({Now(), r.key(), "Requeue", "BackoffFinished", "The workload backoff was finished"});
      changed = true;
      continue;
    }
    std::optional<Time> deadline = ReadyDeadline(r);
    if (!deadline || Now() < *deadline) continue;
    PodsReadyTimeout(r);
    changed = true;
  }
  if (changed) {
    parts_.admitter->NotifyCapacityChanged();
    ++generation_;
  }
  return changed;
}

void Engine::PodsReadyTimeout(WorkloadRecord& r) {
  StopGang(r, StopCause::kEvicted);
  r.phase = Phase::kPending;
  // Out of line until requeue_at (or for good): its quota goes back now.
  parts_.admitter->Remove(r.key());
  const std::optional<int32_t>& limit = pods_ready_.backoff_limit_count;
  Eviction eviction{Now(), kReasonPodsReadyTimeout, "Exceeded the PodsReady timeout " + r.key(),
                    ""};
  std::string waits;
  if (limit && r.requeue_count + 1 > *limit) {
    // Kueue: spec.active=false, evicted with reason Deactivated, requeueState cleared.
    r.deactivated = true;
    r.requeue_at.reset();
    r.requeue_count = 0;
    eviction.reason = kReasonDeactivatedRequeuingLimit;
    eviction.detail = kDeactivatedMessage;
    waits = eviction.detail;
    r.pending_note = {true, "Inactive", waits, nullptr};
  } else {
    r.requeue_count++;
    r.requeue_at = Now() + Backoff(pods_ready_, r.requeue_count);
    waits = BackoffMessage(*r.requeue_at);
    r.pending_note = {true, "Backoff", waits, nullptr};
  }
  log_.Add({Now(), r.key(), "Evict", eviction.reason, eviction.detail});
  r.evictions.push_back(std::move(eviction));
}

bool Engine::AdmissionBlocked() const {
  if (!PodsReadyEnabled() || !pods_ready_.block_admission) return false;
  return std::any_of(records_.begin(), records_.end(), [](const WorkloadRecord& r) {
    return r.Active() && !r.pods_ready && KueueManaged(r);
  });
}

void Engine::TakeBackAdmission(WorkloadRecord& r, const admission::Decision& d) {
  // Admission charged the quota and (through the oracle) bound the nodes already.
  if (bridge_.TakeCommitted(d.workload_key)) parts_.cluster->Release(d.workload_key);
  parts_.admitter->Requeue(d.workload_key, Now());
  admission::Decision wait;
  wait.kind = admission::Decision::Kind::kPending;
  wait.workload_key = d.workload_key;
  wait.reason = kBlockedReason;
  wait.message = kBlockedMessage;
  LogPending(r, wait);
}

void Engine::MarkBlocked() {
  admission::Decision wait;
  wait.kind = admission::Decision::Kind::kPending;
  wait.reason = kBlockedReason;
  wait.message = kBlockedMessage;
  for (WorkloadRecord& r : records_) {
    if (r.phase != Phase::kPending || !r.submitted || r.deactivated || r.requeue_at) continue;
    wait.workload_key = r.key();
    LogPending(r, wait);
  }
}

}  // namespace muster::engine
