// Sleeping ClusterQueues. A cycle's rounds take one head per queue; a BestEffortFIFO
// queue whose head was found short of quota parks it and gives the next head in the
// next round. When the heads behind it have the same flavor inputs (pod sets,
// priority, preemption), already carry the reason the head got, and nothing in
// their cohort tree changes (its generation holds), each would be found short the
// same way: the same shared flavor assignment, the same (empty) preemption targets,
// no oracle query, no decision. Such a queue sleeps through their rounds, and the
// heads are parked when it wakes: at the round after the run, at the first
// generation change in its tree (mid-round, at the place the round's sorted order
// gives the head of that round), or before heads are unparked into it (a victim,
// a preemptor's tree giving up its claim, a nomination's waiters). Rounds
// and decisions stay exactly those of visiting every head; a cycle visited most
// heads only to park them again. A run may also hold heads never tried since they
// were queued (a wave of new workloads behind a head short of quota): visited, each
// would get the head's pending decision, which it gets when the run is parked;
// only where that decision stands among the cycle's others (of other workloads)
// differs.
#include <algorithm>

#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

// A long run is split: its queue wakes, gives one head and sleeps again.
constexpr int32_t kMaxRun = 64;

}  // namespace

// `next` would get what `head` just got at this generation: the same flavor inputs
// (so FlavorsFor shares the assignment), a creation time that decides nothing
// (MaybeSleep excludes LowerOrNewerEqualPriority), nothing per workload that
// ProcessKueue treats apart (held, holding victims, elastic, partial admission),
// and SetPending would neither emit nor rebuild its reason.
bool AdmitterImpl::SameShortfall(const WorkloadState& head, const WorkloadState& next,
                                 bool untried) const {
  // Equal shapes: equal flavor inputs; `plain`: not elastic, not partial.
  if (!next.plain || head.shape != next.shape || next.held) return false;
  // A victim of this instant is kept from preempting: its inputs are not its shape's.
  if (head.preempts_later || next.preempts_later) return false;
  // Interned texts: one integer each, no string read (a cache miss per head).
  if (head.pending_text >= 0 && next.pending_text >= 0) {
    return head.pending_text == next.pending_text;
  }
  if (untried && Untried(next)) return true;
  if (next.pending == nullptr || head.pending == nullptr) return false;
  return next.pending == head.pending || (next.pending->reason == head.pending->reason &&
                                          next.pending->message == head.pending->message);
}

// Queued and not tried since (Resolve's pending decision, no text interned): no
// claim on quota, no nodes held, nothing ProcessKueue treats apart beyond what
// SameShortfall asks. Tried, it would be found as the head was and only get the
// head's pending decision.
bool AdmitterImpl::Untried(const WorkloadState& ws) {
  return ws.pending_text < 0 && ws.reserved.empty() && !ws.nominated && ws.pending != nullptr &&
         ws.pending->reason == "Pending";
}

// `e` was just parked, pending for quota alone.
void AdmitterImpl::MaybeSleep(const Entry& e, Cycle& cycle) {
  if (!sleep_ || fair_sharing_ || e.route != Route::kKueue) return;
  const ClusterQueueSpec& spec = cqs_[e.queue];
  if (spec.strategy != model::QueueingStrategy::kBestEffortFIFO ||
      spec.preemption.within_cluster_queue == model::PreemptionPolicy::kLowerOrNewerEqualPriority) {
    return;
  }
  const WorkloadState& head = *e.ws;
  if (head.shape < 0 || head.pending == nullptr) return;
  if (cycle.sleep.size() < cqs_.size()) {
    cycle.sleep.resize(cqs_.size());
    cycle.verified.resize(cqs_.size());
    cycle.sleeping_by_root.resize(static_cast<size_t>(tree_.NodeCount()));
  }
  Cycle::Verified& v = cycle.verified[static_cast<size_t>(e.queue)];
  const PendingQueue::Range active = cq_pending_[e.queue].active();
  auto it = active.begin();
  int32_t run = 0;
  if (v.ref != nullptr && !(v.last->qkey < head.qkey) && SameShortfall(*v.ref, head, false)) {
    // Found like `ref`: so are the heads it was compared with, which wait still.
    for (; it != active.end() && run < kMaxRun && !(v.last->qkey < *it); ++it) ++run;
  }
  for (; it != active.end() && run < kMaxRun; ++it, ++run) {
    const auto* next = static_cast<const WorkloadState*>(it->state);
    if (!SameShortfall(head, *next, /*untried=*/true)) break;
    v.last = next;
  }
  v.ref = run > 0 ? &head : nullptr;
  if (run == 0) return;
  Cycle::Sleep& s = cycle.sleep[static_cast<size_t>(e.queue)];
  NodeId root = RootOf(e.queue);
  s.gen = root_gen_[root];
  s.round = cycle.round;
  s.run = run;
  s.borrows = head.flavors->assignment.borrows;
  s.id = ++cycle.sleep_ids;
  s.shape = head.shape;
  s.note = head.pending;
  ++cycle.sleeping;
  cycle.sleeping_by_root[root].push_back(e.queue);
  cycle.PushWake({.round = cycle.round + run + 1, .id = s.id, .cq = e.queue});
}

// Parks the first `count` active heads, as their rounds would have; one never tried
// gets the pending decision its round would have given it.
void AdmitterImpl::ParkRun(int32_t cq, int64_t count, Cycle& cycle) {
  PendingQueue& q = cq_pending_[cq];
  const Cycle::Sleep& s = cycle.sleep[static_cast<size_t>(cq)];
  for (int64_t i = 0; i < count; ++i) {
    auto* ws = static_cast<WorkloadState*>(q.Head()->state);
    ws->parked_physical = false;
    // Only the run's untried heads: a head unparked into the queue while it slept
    // may be among the first (tried, it keeps its decision).
    if (ws->shape == s.shape && Untried(*ws)) {
      SetPending(*ws, s.note, cycle.out);
    }
    q.ParkHead();
  }
}

void AdmitterImpl::Awaken(int32_t cq, int64_t consumed, Cycle& cycle) {
  ParkRun(cq, consumed, cycle);
  cycle.sleep[static_cast<size_t>(cq)].gen = -1;
  --cycle.sleeping;
  std::vector<int32_t>& list = cycle.sleeping_by_root[RootOf(cq)];
  list.erase(std::find(list.begin(), list.end(), cq));
}

// Queues whose run ended in the last round give their next head in this one.
void AdmitterImpl::WakeDue(Cycle& cycle) {
  while (!cycle.wake_at.empty() && cycle.wake_at.front().round <= cycle.round) {
    const auto [round, id, cq] = cycle.wake_at.front();
    cycle.PopWake();
    const Cycle::Sleep& s = cycle.sleep[static_cast<size_t>(cq)];
    if (s.gen < 0 || s.id != id) continue;  // woken early
    Awaken(cq, s.run, cycle);
    cycle.live.emplace_back(Route::kKueue, cq);
  }
}

// A round without entries: skip to the next round in which a sleeper wakes.
bool AdmitterImpl::NextWake(Cycle& cycle) {
  while (!cycle.wake_at.empty()) {
    const auto [round, id, cq] = cycle.wake_at.front();
    const Cycle::Sleep& s = cycle.sleep[static_cast<size_t>(cq)];
    if (s.gen >= 0 && s.id == id) {
      cycle.round = round - 1;
      return true;
    }
    cycle.PopWake();
  }
  return false;
}

// The round's head at cycle.pos (of tree `root`) was just processed. If it moved the
// tree's generation, its sleepers' heads of this round may be answered differently:
// the one this round's order put before it was parked with the old answer, one after
// it is inserted into the rest of the round.
void AdmitterImpl::WakeRoot(NodeId root, Cycle& cycle) {
  if (static_cast<size_t>(root) >= cycle.sleeping_by_root.size()) return;
  const std::vector<int32_t>& sleepers = cycle.sleeping_by_root[static_cast<size_t>(root)];
  if (sleepers.empty()) return;
  // A copy (Awaken edits the list), into storage kept across calls: this runs after
  // every head of a tree with sleepers.
  std::vector<int32_t>& cqs = cycle.wake_scratch;
  cqs.assign(sleepers.begin(), sleepers.end());
  for (int32_t cq : cqs) {
    if (cycle.sleep[static_cast<size_t>(cq)].gen != root_gen_[root]) {
      WakeQueue(cq, cycle);
    }
  }
}

// Heads are about to be unparked into `cq` mid-cycle (`cycle`; nullptr between
// cycles). Sleeping, it wakes first, while its run heads are still its first active
// ones (Awaken parks the first `consumed`). Asleep or not, the heads MaybeSleep
// verified may no longer follow each other: a later head of the queue found short
// would otherwise sleep over the unparked ones unvisited.
void AdmitterImpl::WakeBeforeUnpark(int32_t cq, Cycle* cycle) {
  if (cycle == nullptr) return;
  auto c = static_cast<size_t>(cq);
  if (c < cycle->verified.size()) cycle->verified[c] = Cycle::Verified{};
  if (c < cycle->sleep.size() && cycle->sleep[c].gen >= 0) {
    WakeQueue(cq, *cycle);
  }
}

void AdmitterImpl::WakeQueue(int32_t cq, Cycle& cycle) {
  std::vector<Entry>& entries = *cycle.entries;
  const size_t pos = cycle.pos;
  const Cycle::Sleep s = cycle.sleep[static_cast<size_t>(cq)];
  if (s.round == cycle.round) {
    Awaken(cq, 0, cycle);  // it gave a head this round: in cycle.live already
    return;
  }
  int64_t j = cycle.round - s.round;  // this round's head is the j-th of the run
  auto head = cq_pending_[cq].active().begin();
  std::advance(head, j - 1);
  Entry ve;
  ve.route = Route::kKueue;
  ve.queue = cq;
  ve.ws = static_cast<WorkloadState*>(head->state);
  ve.borrows = s.borrows;
  cycle.live.emplace_back(Route::kKueue, cq);
  if (EntryBefore(ve, entries[pos])) {
    Awaken(cq, j, cycle);
    return;
  }
  Awaken(cq, j - 1, cycle);
  auto at = std::upper_bound(entries.begin() + static_cast<std::ptrdiff_t>(pos) + 1, entries.end(),
                             ve, EntryBefore);
  entries.insert(at, ve);
}

}  // namespace muster::admission
