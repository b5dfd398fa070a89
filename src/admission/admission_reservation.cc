// A preemptor's reservation: the quota it needs is charged to its ClusterQueue from
// its preemption until it is admitted or gives up. Holding its victims back (held_for_preemptor_)
// is not enough: without the charge a head of another ClusterQueue of the tree that
// does not borrow (Kueue's order puts it first), or that comes in an earlier round,
// takes the room; the preemptor gives up, its victim returns into the room another
// preemptor made, and two or three queues evict each other's workloads for ever at
// one instant. Kueue keeps the same claim within a cycle (a preempting workload's
// usage counts against its cohort for the heads after it); this keeps it until the
// preemption has done its work.
#include <algorithm>
#include <utility>

#include "admission/admitter_impl.h"

namespace muster::admission {

void AdmitterImpl::ChargeReservations() {
  for (auto it = reserving_.begin(); it != reserving_.end();) {
    auto w = workloads_.find(*it);
    if (w == workloads_.end()) {
      it = reserving_.erase(it);
      continue;
    }
    WorkloadState& ws = w->second;
    NodeId node = cqs_[ws.queue].node;
    // Its victims are gone now: the whole of what it needs is charged, which fits
    // unless a victim stayed (or the quota shrank); then it plans again from what
    // is there.
    tree_.RemoveUsage(node, ws.reserved);
    IncomingWorkload claim;
    claim.cq = ws.queue;
    claim.usage = &ws.reserve_full;
    if (WorkloadFits(claim, tree_, cqs_, /*allow_borrowing=*/true)) {
      tree_.AddUsage(node, ws.reserve_full);
      if (ws.reserved != ws.reserve_full) {
        ws.reserved = ws.reserve_full;
        BumpGeneration(ws.queue);
      }
      ++it;
      continue;
    }
    ws.reserved.clear();
    ws.reserve_full.clear();
    BumpGeneration(ws.queue);
    UnparkReservationTree(ws, nullptr);
    it = reserving_.erase(it);
  }
}

FrAmounts AdmitterImpl::TakeReservation(WorkloadState& ws) {
  FrAmounts taken;
  if (ws.reserved.empty()) return taken;
  tree_.RemoveUsage(cqs_[ws.queue].node, ws.reserved);
  BumpGeneration(ws.queue);
  taken.swap(ws.reserved);
  return taken;
}

void AdmitterImpl::ClaimQuota(WorkloadState& ws, FrAmounts usage,
                              const std::vector<Victim>& victims, Cycle& cycle) {
  if (usage.empty()) return;
  // Its victims hold their quota until the engine evicts them, after this cycle.
  // Until then its ClusterQueue is charged what it needs beyond what its own
  // victims there give back: counting both would make the queue look borrowing to
  // the heads after it, which could then reclaim from it what it will not hold.
  // Victims of other queues stay counted where they are, so for the rest of the
  // cycle the cohort holds both (Kueue counts a preempting workload's usage against
  // its cohort for the heads after it the same way).
  FrAmounts now = usage;
  for (const Victim& v : victims) {
    if (!v.shrink_to.empty()) continue;  // shrunk, not evicted
    auto it = workloads_.find(v.workload_key);
    if (it == workloads_.end() || !it->second.admitted || it->second.route != Route::kKueue) {
      continue;
    }
    if (it->second.queue != ws.queue) {
      cycle.overcounted.insert(RootOf(ws.queue));
      continue;
    }
    for (const auto& [fr, amount] : it->second.usage) {
      for (auto& [my_fr, mine] : now) {
        if (my_fr == fr) mine = std::max<int64_t>(0, mine - amount);
      }
    }
  }
  tree_.AddUsage(cqs_[ws.queue].node, now);
  BumpGeneration(ws.queue);
  ws.reserved = std::move(now);
  ws.reserve_full = std::move(usage);
  reserving_.insert(ws.wl().key);
}

void AdmitterImpl::SettleReservation(WorkloadState& ws, Outcome outcome, FrAmounts taken,
                                     Cycle& cycle) {
  if (!ws.reserved.empty()) return;  // it preempted again: ClaimQuota charged the new claim
  if (outcome == Outcome::kPreempting) {
    // Blocked on targets another head chose first: the claim stands. Nothing was
    // charged since `taken` came out, so it fits again as it did.
    if (taken.empty()) return;
    tree_.AddUsage(cqs_[ws.queue].node, taken);
    BumpGeneration(ws.queue);
    ws.reserved = std::move(taken);
    return;
  }
  if (taken.empty()) return;
  ws.reserve_full.clear();
  reserving_.erase(ws.wl().key);
  // Given up: heads of the tree parked behind the claim this cycle may fit now.
  if (outcome == Outcome::kPending) UnparkReservationTree(ws, &cycle);
}

void AdmitterImpl::DropReservation(WorkloadState& ws) {
  if (ws.reserved.empty()) return;
  tree_.RemoveUsage(cqs_[ws.queue].node, ws.reserved);
  BumpGeneration(ws.queue);
  ws.reserved.clear();
  ws.reserve_full.clear();
  UnparkReservationTree(ws, nullptr);
  reserving_.erase(ws.wl().key);
}

// Heads parked while the claim held its quota: the cycle's next round rescans.
void AdmitterImpl::UnparkReservationTree(const WorkloadState& ws, Cycle* cycle) {
  for (int32_t cq : cqs_by_root_[RootOf(ws.queue)]) {
    WakeBeforeUnpark(cq, cycle);
    UnparkQueue(Route::kKueue, cq);
  }
  woke_queue_ = true;
}

void AdmitterImpl::MarkPreemptsLater(const std::string& key) {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || it->second.preempts_later) return;
  it->second.preempts_later = true;
  it->second.flavors_gen = -1;  // its flavors were found with candidates
  preempts_later_.push_back(key);
}

void AdmitterImpl::CountPreemption(WorkloadState& ws) {
  if (ws.preemptions_now == 0) preempts_later_.push_back(ws.wl().key);  // reset when time moves
  if (ws.preemptions_now < kMaxPreemptionsPerInstant) ++ws.preemptions_now;
  if (ws.preemptions_now == kMaxPreemptionsPerInstant && !ws.preempts_later) {
    ws.preempts_later = true;
    ws.flavors_gen = -1;  // its flavors were found with candidates
  }
}

// Time moved: they preempt again, so a head parked for want of candidates is
// tried again.
void AdmitterImpl::ForgetPreemptsLater() {
  for (const std::string& key : preempts_later_) {
    auto it = workloads_.find(key);
    if (it == workloads_.end()) continue;
    WorkloadState& ws = it->second;
    ws.preempts_later = false;
    ws.preemptions_now = 0;
    ws.flavors_gen = -1;
    if (PendingQueue* q = QueueFor(ws)) q->Unpark(ws.qkey);
  }
  preempts_later_.clear();
  woke_queue_ = true;
}

}  // namespace muster::admission
