// RunCycle: Kueue's scheduling cycle over every queue of the tree, admitting more
// than one workload per queue per cycle (rounds of heads until nothing moves).
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

Assignment QuotaFreeAssignment(const model::Workload& wl) {
  Assignment a;
  for (const auto& ps : wl.pod_sets) a.pod_sets.push_back(PodSetAssignment{ps.name, ps.count, {}});
  return a;
}

const std::set<std::string> kNone;

std::string Plural(size_t n) { return std::to_string(n) + (n == 1 ? " workload" : " workloads"); }

}  // namespace

std::vector<Decision> AdmitterImpl::RunCycle(Time now, PlacementOracle& oracle) {
  std::vector<Decision> out;
  RunCycleInto(out, now, oracle);
  return out;
}

void AdmitterImpl::RunCycleInto(std::vector<Decision>& out, Time now, PlacementOracle& oracle) {
  out.clear();
  if (drop_caches_) DropCaches();
  if (!preempts_later_.empty() && now != preempts_later_at_) ForgetPreemptsLater();
  preempts_later_at_ = now;
  DrainStopped(out);
  for (const std::string& key : std::exchange(nominations_to_end_, {})) {
    auto it = workloads_.find(key);
    if (it == workloads_.end() || !it->second.nominated || it->second.route != Route::kHeld) {
      continue;
    }
    oracle.Unnominate(key);
    it->second.nominated = false;
    UnparkNominationWaiters();
  }
  if (!reserving_.empty()) ChargeReservations();
  volcano_.ComputeDeserved();
  Cycle cycle;
  cycle.out = &out;
  cycle.first_admit_seq = admit_seq_;
  cycle.blocked.assign(BlockedSlot(Route::kNoQueue, -1) + 1, 0);
  BeginQuiet(cycle);
  std::vector<Entry> entries;  // a round's heads; reused, as the rounds are many
  for (;;) {
    ++cycle.round;
    // Heads were unparked: scan every queue. Sleepers sleep on; a queue heads were
    // unparked into woke before (WakeBeforeUnpark).
    if (woke_queue_) cycle.rescan = true;
    woke_queue_ = false;
    WakeDue(cycle);
    CollectHeads(cycle, entries);
    if (entries.empty()) {
      if (NextWake(cycle)) continue;
      break;
    }
    // By index: a sleeper woken mid-round inserts its head further on.
    cycle.entries = &entries;
    for (size_t i = 0; i < entries.size(); ++i) {
      cycle.pos = i;
      Entry e = entries[i];
      WorkloadState& ws = *e.ws;
      Outcome o = Process(e, cycle, oracle, out);
      ++heads_tried_;
      if (e.route == Route::kKueue && cycle.sleeping > 0) {
        WakeRoot(RootOf(e.queue), cycle);
      }
      bool quota_wait = e.quota_wait && o == Outcome::kPending;
      if (e.route == Route::kKueue && !quota_wait) cycle.stirred[RootOf(e.queue)] = 1;
      // A preemptor that neither admits nor preempts has given up for now: its
      // victims may compete again.
      if (o != Outcome::kPreempting && ws.held) {
        ReleaseHeldVictims(ws.wl().key, &cycle);
      }
      // A nomination ends: heads parked while its nodes were kept from them (reason
      // NodesNominated) may fit now, on what the preemptor left or gave back.
      if (o != Outcome::kPreempting && ws.nominated) {
        if (o == Outcome::kPending) oracle.Unnominate(ws.wl().key);  // Commit ended it else
        ws.nominated = false;
        UnparkNominationWaiters(&cycle);
      }
      if (o == Outcome::kAdmitted) continue;
      bool strict = e.route == Route::kKueue &&
                    cqs_[e.queue].strategy == model::QueueingStrategy::kStrictFIFO;
      if (o == Outcome::kPreempting || strict) {
        cycle.blocked[BlockedSlot(e.route, e.queue)] = 1;
        if (e.route == Route::kKueue) cycle.stirred[RootOf(e.queue)] = 1;
        continue;
      }
      // BestEffortFIFO: park the head so the ones behind it get their turn.
      QueueFor(ws)->Park(ws.qkey);
      if (ws.parked_physical) {
        physically_parked_.insert(ws.wl().key);
        nomination_waiters_ |= NoteReason(ws) == kReasonNodesNominated;
      }
      if (quota_wait) MaybeSleep(e, cycle);
    }
  }
  EndQuiet(cycle);
}

// HoldAndDrain evicts what its ClusterQueue or LocalQueue admitted.
void AdmitterImpl::DrainStopped(std::vector<Decision>& out) {
  // Most cycles have no draining queue: skip the walk over every admitted workload.
  bool any = std::any_of(cqs_.begin(), cqs_.end(), [](const ClusterQueueSpec& c) {
    return c.stop_policy == model::StopPolicy::kHoldAndDrain;
  });
  for (const auto& [name, lq] : local_queues_) {
    any = any || lq.stop == model::StopPolicy::kHoldAndDrain;
  }
  if (!any) return;
  std::vector<std::pair<std::string, std::string>> evict;  // key, message
  for (int32_t c : cq_by_name_) {
    for (const auto& [key_view, state] : cq_admitted_[c]) {
      const WorkloadState& ws = *state;
      const std::string& key = ws.wl().key;
      auto lq = local_queues_.find(ws.wl().meta.namespace_ + "/" + ws.local_queue);
      if (cqs_[c].stop_policy == model::StopPolicy::kHoldAndDrain) {
        evict.emplace_back(key, "ClusterQueue " + cqs_[c].name + " is stopped");
      } else if (lq != local_queues_.end() && lq->second.stop == model::StopPolicy::kHoldAndDrain) {
        evict.emplace_back(key, "LocalQueue " + lq->second.name + " is stopped");
      }
    }
  }
  for (auto& [key, message] : evict) {
    if (!draining_.insert(key).second) continue;
    Decision d;
    d.kind = Decision::Kind::kEvict;
    d.workload_key = key;
    d.reason = "ClusterQueueStopped";
    d.message = message;
    out.push_back(std::move(d));
  }
}

void AdmitterImpl::CollectHeads(Cycle& cycle, std::vector<Entry>& entries) {
  entries.clear();
  std::vector<std::pair<Route, int32_t>>& live = cycle.next_live;
  live.clear();
  auto add = [&](Route route, int32_t queue, const PendingQueue& pq) {
    if (cycle.blocked[BlockedSlot(route, queue)]) return;
    if (route == Route::kKueue && cycle.sleeping > 0 && cycle.sleep[queue].gen >= 0) return;
    const QueueKey* head = pq.Head();
    if (!head) return;
    Entry e;
    e.route = route;
    e.queue = queue;
    e.ws = static_cast<WorkloadState*>(head->state);
    if (route == Route::kKueue) e.borrows = FlavorsFor(*e.ws).assignment.borrows;
    entries.push_back(e);
    live.emplace_back(route, queue);
  };
  if (cycle.rescan) {
    for (int32_t c : cq_by_name_) add(Route::kKueue, c, cq_pending_[c]);
    for (int32_t q = 0; q < volcano_.size(); ++q) add(Route::kVolcano, q, vq_pending_[q]);
    add(Route::kNoQueue, -1, no_queue_pending_);
    cycle.rescan = false;
  } else {
    for (const auto& [route, queue] : cycle.live) {
      switch (route) {
        case Route::kKueue:
          add(route, queue, cq_pending_[queue]);
          break;
        case Route::kVolcano:
          add(route, queue, vq_pending_[queue]);
          break;
        case Route::kNoQueue:
        case Route::kHeld:
          add(route, queue, no_queue_pending_);
          break;
      }
    }
  }
  cycle.live.swap(live);
  if (fair_sharing_) {
    FairSharingOrder(entries);
    return;
  }
  // Kueue's entryOrdering: not borrowing first, then priority, then creation; input
  // order and key break ties.
  std::sort(entries.begin(), entries.end(), EntryBefore);
}

// The assignment depends on the workload and on the usage of its cohort tree only:
// recomputed when that tree's generation moved (an admission, a release, a config
// change there), not when another tree changed.
const FlavorAssignment& AdmitterImpl::FlavorsFor(WorkloadState& ws) {
  int64_t gen = root_gen_[RootOf(ws.queue)];
  if (ws.flavors_gen == gen) return *ws.flavors;
  // The tree moved, but a first choice that still fits is what assigning again
  // would answer (flavor_assigner.h). flavors_gen -1 says the cached one no longer
  // applies at all (another queue, preemption rules changed).
  if (ws.flavors_gen >= 0 && share_flavors_ &&
      FitsAsFirstChoice(*ws.flavors, cqs_[ws.queue], tree_)) {
    ws.flavors_gen = gen;
    return *ws.flavors;
  }
  ws.flavors_gen = gen;
  if (ws.preempts_later) {  // it may not preempt now: its answer is its own
    Reassign(ws, AssignOptionsFor(ws));
    return *ws.flavors;
  }
  if (shared_flavors_.size() < cqs_.size()) shared_flavors_.resize(cqs_.size());
  SharedFlavors& shared = shared_flavors_[static_cast<size_t>(ws.queue)];
  if (SameFlavorInputs(shared, ws, gen)) {
    ws.flavors = shared.flavors;
    return *ws.flavors;
  }
  AssignOptions options = AssignOptionsFor(ws);
  // has_candidates reads the head's creation and order only for
  // LowerOrNewerEqualPriority; an answer that depended on them is not shared.
  bool asked = false;
  options.asked_candidates = &asked;
  Reassign(ws, std::move(options));
  bool order_dependent = asked && cqs_[ws.queue].preemption.within_cluster_queue ==
                                      model::PreemptionPolicy::kLowerOrNewerEqualPriority;
  if (order_dependent || !share_flavors_ || ws.shape < 0) {
    shared.gen = -1;
    return *ws.flavors;
  }
  shared.gen = gen;
  shared.shape = ws.shape;
  shared.flavors = ws.flavors;
  return *ws.flavors;
}

void AdmitterImpl::Reassign(WorkloadState& ws, AssignOptions options) {
  // Held besides only by its queue's shared slot, which is out of date (another
  // generation): the slot lets go, and the assignment is recomputed in place
  // instead of in a new object (56,645 of them, six allocations each, at x1).
  if (ws.flavors != nullptr && ws.flavors.use_count() == 2 &&
      static_cast<size_t>(ws.queue) < shared_flavors_.size()) {
    SharedFlavors& shared = shared_flavors_[static_cast<size_t>(ws.queue)];
    if (shared.flavors == ws.flavors && shared.gen != root_gen_[RootOf(ws.queue)]) {
      shared.flavors.reset();
      shared.gen = -1;
    }
  }
  // Shared with other heads (SharedFlavors): they keep theirs, this one gets a new one.
  if (ws.flavors == nullptr || ws.flavors.use_count() > 1) {
    ws.flavors = std::make_shared<FlavorAssignment>();
  }
  options.scratch = &assign_scratch_;
  if (!share_flavors_) {  // without shortcuts: compiled for every assignment
    AssignFlavorsInto(*ws.flavors, ws.wl(), cqs_[ws.queue], tree_, flavors_, options);
    return;
  }
  AssignFlavorsInto(*ws.flavors, FlavorInputsOf(ws), cqs_[ws.queue], tree_, flavors_, options);
}

const FlavorInputs& AdmitterImpl::FlavorInputsOf(WorkloadState& ws) {
  if (ws.flavor_inputs != nullptr) return *ws.flavor_inputs;
  auto compile = [&] {
    auto inputs = std::make_shared<FlavorInputs>();
    CompileFlavorInputs(*inputs, ws.wl(), cqs_[ws.queue], tree_, flavors_);
    return inputs;
  };
  if (ws.shape < 0) {
    ws.flavor_inputs = compile();
    return *ws.flavor_inputs;
  }
  constexpr size_t kMaxInputs = 1 << 16;
  if (flavor_inputs_.size() >= kMaxInputs) flavor_inputs_.clear();
  auto& slot = flavor_inputs_[InputsKey{ws.queue, ws.shape}];
  if (slot == nullptr) slot = compile();
  ws.flavor_inputs = slot;
  return *ws.flavor_inputs;
}

// AssignFlavors reads a pod set's name, count, requests, tolerations, node
// selector and required node affinity. Only workloads with none of the last three
// share assignments, so comparing the first three is enough.
bool AdmitterImpl::FlavorInputsShareable(const model::Workload& wl) {
  return std::all_of(wl.pod_sets.begin(), wl.pod_sets.end(), [](const model::PodSet& ps) {
    return ps.tolerations.empty() && ps.node_selector.empty() && ps.node_affinity.required.empty();
  });
}

AssignOptions AdmitterImpl::AssignOptionsFor(const WorkloadState& ws) const {
  AssignOptions options;
  options.fair_sharing = fair_sharing_;
  if (!PreemptsNow(ws)) {
    // It preempts nobody: a flavor that needs preemption has no candidates for it.
    options.has_candidates = [](const std::vector<FrId>&) { return false; };
    return options;
  }
  options.has_candidates = [this, &ws](const std::vector<FrId>& frs) {
    IncomingWorkload in;
    in.cq = ws.queue;
    in.priority = ws.wl().priority;
    in.created = ws.qkey.created;
    in.order = ws.qkey.order;
    return admitted_index_.AnyCandidate(in, frs, tree_, cqs_, cqs_by_root_[RootOf(ws.queue)]);
  };
  return options;
}

AdmitterImpl::Outcome AdmitterImpl::Process(Entry& e, Cycle& cycle, PlacementOracle& oracle,
                                            std::vector<Decision>& out) {
  WorkloadState& ws = *e.ws;
  ws.parked_physical = false;
  if (HeldForPreemptor(ws, out)) return Outcome::kPending;
  switch (e.route) {
    case Route::kKueue:
      return ProcessKueue(e, cycle, oracle, out);
    case Route::kVolcano:
      return ProcessVolcano(e, cycle, oracle, out);
    case Route::kNoQueue:
    case Route::kHeld:
      break;
  }
  // No queue: no quota, but still a gang the nodes must hold at once.
  Assignment asg = QuotaFreeAssignment(ws.wl());
  if (Elastic(ws)) {
    // As many pods as fit, down to the minimum; nothing is preempted without a queue.
    auto fit = LargestElasticFit(
        ws.wl(), asg, [&](const Assignment& a) { return oracle.CanPlace(ws.wl(), a, {}).fits; });
    if (fit) return Admit(ws, std::move(*fit), {}, cycle, oracle, out);
    asg = ElasticMinimum(ws.wl(), asg);
  }
  PlacementOracle::Check check = oracle.CanPlace(ws.wl(), asg, {});
  if (check.fits) return Admit(ws, std::move(asg), {}, cycle, oracle, out);
  ws.parked_physical = true;
  SetPending(ws, check.reason.empty() ? "Unschedulable" : check.reason, check.message, &out);
  return Outcome::kPending;
}

AdmitterImpl::Outcome AdmitterImpl::ProcessKueue(Entry& e, Cycle& cycle, PlacementOracle& oracle,
                                                 std::vector<Decision>& out) {
  FrAmounts taken = TakeReservation(*e.ws);
  Outcome o = PlanAndApplyKueue(e, cycle, oracle, out);
  // Short of quota only because a preemptor of its tree this cycle is counted
  // beside victims the engine has not evicted yet: it keeps its claim and is tried
  // again next cycle (Kueue skips a workload that no longer fits after another
  // one of its cohort) instead of giving up what its own preemption made.
  if (o == Outcome::kPending && !taken.empty() && !e.ws->parked_physical &&
      cycle.overcounted.count(RootOf(e.queue))) {
    o = Outcome::kPreempting;
  }
  SettleReservation(*e.ws, o, std::move(taken), cycle);
  return o;
}

AdmitterImpl::Outcome AdmitterImpl::PlanAndApplyKueue(Entry& e, Cycle& cycle,
                                                      PlacementOracle& oracle,
                                                      std::vector<Decision>& out) {
  WorkloadState& ws = *e.ws;
  bool elastic = Elastic(ws);
  Plan plan =
      elastic ? PlanElasticKueue(ws, cycle, oracle) : PlanKueue(ws, FlavorsFor(ws), cycle, oracle);
  // Kueue tries smaller counts only when the full counts can neither be admitted
  // nor preempt their way in.
  if (plan.kind == Plan::Kind::kPending && !elastic) {
    if (auto partial = PlanPartial(ws, cycle, oracle)) plan = std::move(*partial);
  }
  switch (plan.kind) {
    case Plan::Kind::kAdmit:
      return Admit(ws, std::move(plan.flavors.assignment), std::move(plan.flavors.usage), cycle,
                   oracle, out);
    case Plan::Kind::kPreempt: {
      std::vector<Victim> victims =
          PreferShrinking(ws, plan.flavors.assignment, std::move(plan.victims), oracle);
      ClaimQuota(ws, std::move(plan.flavors.usage), victims, cycle);
      return EmitPreemption(ws, plan.flavors.assignment, std::move(victims), plan.physical, cycle,
                            oracle, out);
    }
    case Plan::Kind::kBlocked:
      SetPending(ws, plan.reason, plan.message, &out);
      return Outcome::kPreempting;  // retried next cycle, not parked
    case Plan::Kind::kPending:
      break;
  }
  ws.parked_physical = plan.physical;
  // Pending without the oracle (the physical case asks it) and without probing
  // smaller counts: only the tree's usage and admitted workloads decided this.
  e.quota_wait = !plan.physical && !elastic && !CanBePartiallyAdmitted(ws.wl());
  SetPending(ws, plan.reason, plan.message, &out);
  return Outcome::kPending;
}

AdmitterImpl::Outcome AdmitterImpl::ProcessVolcano(Entry& e, Cycle& cycle, PlacementOracle& oracle,
                                                   std::vector<Decision>& out) {
  WorkloadState& ws = *e.ws;
  int32_t q = e.queue;
  Assignment asg = QuotaFreeAssignment(ws.wl());
  if (Elastic(ws)) {
    // As many tasks as the queue and the nodes take without preempting anyone...
    auto fit = LargestElasticFit(ws.wl(), asg, [&](const Assignment& a) {
      return volcano_.NotAllocatable(q, AssignedRequest(ws.wl(), a)).empty() &&
             oracle.CanPlace(ws.wl(), a, {}).fits;
    });
    if (fit) return Admit(ws, std::move(*fit), {}, cycle, oracle, out);
    // ...else only its minimum may preempt (Volcano's starving jobs).
    asg = ElasticMinimum(ws.wl(), asg);
  }
  std::string why = volcano_.NotAllocatable(q, AssignedRequest(ws.wl(), asg));
  if (!why.empty()) {
    SetPending(ws, "QueueQuotaExceeded", why, &out);
    return Outcome::kPending;
  }
  PlacementOracle::Check check = oracle.CanPlace(ws.wl(), asg, {});
  if (check.fits) return Admit(ws, std::move(asg), {}, cycle, oracle, out);
  if (PreemptsNow(ws) && (volcano_cfg_.preempt || volcano_cfg_.reclaim)) {
    struct Cand {
      const WorkloadState* ws;
      int32_t queue;
    };
    auto order = [](const Cand& a, const Cand& b) {
      if (a.ws->wl().priority != b.ws->wl().priority)
        return a.ws->wl().priority < b.ws->wl().priority;
      if (a.ws->admit_seq != b.ws->admit_seq) return a.ws->admit_seq > b.ws->admit_seq;
      return a.ws->wl().key < b.ws->wl().key;
    };
    std::vector<Victim> optional;
    // Volcano's preempt action: lower-priority jobs of the same queue.
    std::vector<Cand> own;
    for (const std::string& key : volcano_cfg_.preempt ? vq_admitted_[q] : kNone) {
      const WorkloadState& c = workloads_.at(key);
      if (c.wl().priority < ws.wl().priority && !AdmittedThisCycle(c, cycle))
        own.push_back({&c, q});
    }
    std::sort(own.begin(), own.end(), order);
    optional.reserve(optional.size() + own.size());
    for (const Cand& c : own) optional.push_back({c.ws->wl().key, kVolcanoPreempt});
    // Reclaim: from other reclaimable queues while they stay above deserved.
    std::vector<Cand> others;
    for (int32_t oq = 0; volcano_cfg_.reclaim && oq < volcano_.size(); ++oq) {
      if (oq == q || !volcano_.queue(oq).reclaimable) continue;
      for (const std::string& key : vq_admitted_[oq]) {
        const WorkloadState& c = workloads_.at(key);
        if (!AdmittedThisCycle(c, cycle)) others.push_back({&c, oq});
      }
    }
    std::sort(others.begin(), others.end(), order);
    std::map<int32_t, ResourceList> allocated;
    for (const Cand& c : others) {
      auto it = allocated.try_emplace(c.queue, volcano_.queue(c.queue).allocated).first;
      if (!volcano_.OverusedWith(c.queue, it->second)) continue;
      it->second -= c.ws->allocated;
      optional.push_back({c.ws->wl().key, kVolcanoReclaim});
    }
    auto victims = PhysicalPreemption(ws, asg, {}, optional, cycle, oracle);
    if (victims) {
      return EmitPreemption(ws, asg, PreferShrinking(ws, asg, std::move(*victims), oracle),
                            /*for_nodes=*/true, cycle, oracle, out);
    }
  }
  ws.parked_physical = true;
  SetPending(ws, check.reason.empty() ? "Unschedulable" : check.reason, check.message, &out);
  return Outcome::kPending;
}

std::optional<std::vector<Victim>> AdmitterImpl::PhysicalPreemption(
    WorkloadState& ws, const Assignment& assignment, const std::vector<Victim>& required,
    const std::vector<Victim>& optional, const Cycle& cycle, PlacementOracle& oracle) {
  std::vector<std::string> keys;
  std::map<std::string, std::string> detail;
  for (const auto& v : required) {
    keys.push_back(v.workload_key);
    detail[v.workload_key] = v.detail;
  }
  for (const auto& v : optional) {
    if (cycle.victims.count(v.workload_key) || detail.count(v.workload_key)) continue;
    keys.push_back(v.workload_key);
    detail[v.workload_key] = v.detail;
  }
  if (keys.empty()) return std::nullopt;
  auto chosen = oracle.PhysicalVictims(ws.wl(), assignment, keys);
  if (!chosen) return std::nullopt;
  std::vector<Victim> victims = required;
  for (const std::string& key : *chosen) {
    auto it = detail.find(key);
    if (it == detail.end()) continue;  // the oracle may only pick from candidates
    bool have = std::any_of(victims.begin(), victims.end(),
                            [&](const Victim& v) { return v.workload_key == key; });
    if (!have) victims.push_back({key, it->second});
  }
  if (victims.empty()) return std::nullopt;
  return victims;
}

AdmitterImpl::Outcome AdmitterImpl::Admit(WorkloadState& ws, Assignment assignment, FrAmounts usage,
                                          Cycle& /*cycle*/, PlacementOracle& oracle,
                                          std::vector<Decision>& out) {
  QueueFor(ws)->Erase(ws.qkey);
  physically_parked_.erase(ws.wl().key);
  ws.assignment = std::move(assignment);
  ws.usage = std::move(usage);
  ws.allocated = AssignedRequest(ws.wl(), ws.assignment);
  Charge(ws);  // bumps the tree's generation: its cached results are stale now
  oracle.Commit(ws.wl(), ws.assignment);
  ws.pending = nullptr;
  ws.pending_text = -1;
  Decision d;
  d.kind = Decision::Kind::kAdmit;
  d.workload_key = ws.wl().key;
  d.assignment = ws.assignment;
  d.owner = ws.owner;
  d.queue = QueueInfoOf(ws);
  out.push_back(std::move(d));
  return Outcome::kAdmitted;
}

AdmitterImpl::Outcome AdmitterImpl::EmitPreemption(WorkloadState& ws, const Assignment& assignment,
                                                   std::vector<Victim> victims, bool for_nodes,
                                                   Cycle& cycle, PlacementOracle& oracle,
                                                   std::vector<Decision>& out) {
  std::string names;
  for (const auto& v : victims) {
    cycle.victims.insert(v.workload_key);
    HoldForPreemptor(v.workload_key, ws.wl().key);
    names += (names.empty() ? "" : ", ") + v.workload_key;
    if (v.shrink_to.empty()) MarkPreemptsLater(v.workload_key);
  }
  CountPreemption(ws);
  // Nodes are held only where they were the shortfall: for quota alone the claim
  // holds what matters, and whole nodes kept from everyone below cost preemptions
  // elsewhere (admission-1k-cq: half again as many).
  if (for_nodes) {
    oracle.Nominate(ws.wl(), assignment, victims);
    ws.nominated = true;
  }
  // Its own text (the victims' names): not interned.
  ws.pending = std::make_shared<const PendingNote>(PendingNote{
      {"Preempting", "Pending the preemption of " + Plural(victims.size()) + ": " + names}, -1});
  ws.pending_text = -1;
  Decision d;
  d.kind = Decision::Kind::kPreempt;
  d.workload_key = ws.wl().key;
  d.owner = ws.owner;
  d.assignment = assignment;
  d.victims = std::move(victims);
  d.reason = ws.pending->reason;
  d.message = ws.pending->message;
  out.push_back(std::move(d));
  return Outcome::kPreempting;
}

bool AdmitterImpl::HeldForPreemptor(WorkloadState& ws, std::vector<Decision>& out) {
  if (!ws.held) return false;  // neither a held victim nor a preemptor (SyncHeld)
  auto it = held_for_preemptor_.find(ws.wl().key);
  if (it == held_for_preemptor_.end()) return false;
  auto preemptor = workloads_.find(it->second);
  if (preemptor == workloads_.end() || preemptor->second.admitted) {
    Unhold(it);
    return false;
  }
  SetPending(ws, "WaitingForPreemptor",
             "evicted to make room for " + it->second + ", which is admitted first", &out);
  return true;
}

void AdmitterImpl::HoldForPreemptor(const std::string& victim, const std::string& preemptor) {
  auto [it, inserted] = held_for_preemptor_.try_emplace(victim, preemptor);
  if (!inserted) {
    if (it->second == preemptor) return;
    std::string previous = it->second;
    ForgetHeldVictim(previous, victim);
    it->second = preemptor;
    SyncHeld(previous);
  }
  held_victims_[preemptor].insert(victim);
  SyncHeld(victim);
  SyncHeld(preemptor);
}

void AdmitterImpl::ForgetHeldVictim(const std::string& preemptor, const std::string& victim) {
  auto held = held_victims_.find(preemptor);
  if (held == held_victims_.end()) return;
  held->second.erase(victim);
  if (held->second.empty()) held_victims_.erase(held);
}

std::map<std::string, std::string>::iterator AdmitterImpl::Unhold(
    std::map<std::string, std::string>::iterator it) {
  std::string victim = it->first, preemptor = it->second;
  ForgetHeldVictim(preemptor, victim);
  auto next = held_for_preemptor_.erase(it);
  SyncHeld(victim);
  SyncHeld(preemptor);
  return next;
}

void AdmitterImpl::SyncHeld(const std::string& key) {
  auto w = workloads_.find(key);
  if (w == workloads_.end()) return;
  w->second.held = held_for_preemptor_.count(key) > 0 || held_victims_.count(key) > 0;
}

void AdmitterImpl::ReleaseHeldVictims(const std::string& preemptor, Cycle* cycle) {
  auto held = held_victims_.find(preemptor);
  if (held == held_victims_.end()) return;
  // In key order; Unhold takes each out of the set.
  const std::set<std::string> victims = held->second;
  for (const std::string& key : victims) {
    auto it = held_for_preemptor_.find(key);
    if (it == held_for_preemptor_.end() || it->second != preemptor) continue;
    auto victim = workloads_.find(key);
    if (victim != workloads_.end()) {
      if (victim->second.route == Route::kKueue) WakeBeforeUnpark(victim->second.queue, cycle);
      if (PendingQueue* q = QueueFor(victim->second)) {
        q->Unpark(victim->second.qkey);
        woke_queue_ = true;
      }
    }
    Unhold(it);
  }
}

}  // namespace muster::admission
