// Enqueue / Remove / Requeue, parking (Kueue's inadmissible workloads), pending
// reasons and invariants.
#include <algorithm>
#include <utility>

#include "admission/admitter_impl.h"
#include "workloads/elastic.h"

namespace muster::admission {

PendingQueue* AdmitterImpl::QueueFor(const WorkloadState& ws) {
  switch (ws.route) {
    case Route::kKueue:
      return &cq_pending_[ws.queue];
    case Route::kVolcano:
      return &vq_pending_[ws.queue];
    case Route::kNoQueue:
      return &no_queue_pending_;
    case Route::kHeld:
      return nullptr;
  }
  return nullptr;
}

// Decides where the workload queues. Queue objects are static, so a workload that
// cannot be admitted for configuration reasons (missing or stopped queue) is held
// aside with its reason instead of occupying a queue.
void AdmitterImpl::Resolve(WorkloadState& ws) {
  DropReservation(ws);  // charged to the ClusterQueue it may leave
  const model::Workload& wl = ws.wl();
  ws.route = Route::kHeld;
  ws.queue = -1;
  ws.local_queue = wl.local_queue;
  ws.flavors_gen = -1;  // the queue (and so the tree) may differ now
  ws.flavor_inputs.reset();
  ws.pending_text = -1;  // every path below rewrites `pending`: never tried since
  ws.plain = false;
  ws.qkey.share = 0;
  ws.qkey.sla_deadline = kNoSlaDeadline;
  auto hold = [&](std::string_view reason, const std::string& message) {
    ws.pending = InternNote(reason, message);
  };
  if (!wl.local_queue.empty()) {
    const std::string ns = NamespaceOf(wl.meta.namespace_);
    auto it = local_queues_.find(ns + "/" + wl.local_queue);
    if (it == local_queues_.end()) {
      return hold("LocalQueueNotFound", "LocalQueue " + wl.local_queue + " doesn't exist");
    }
    const LocalQueueState& lq = it->second;
    if (lq.cq < 0) {
      return hold("ClusterQueueNotFound", "ClusterQueue " + lq.cluster_queue + " doesn't exist");
    }
    ws.queue = lq.cq;  // for QueueOf even while held
    const ClusterQueueSpec& cq = cqs_[lq.cq];
    if (!cq.inactive_message.empty()) return hold("ClusterQueueInactive", cq.inactive_message);
    if (cq.terminating) {
      return hold("ClusterQueueTerminating",
                  "ClusterQueue " + cq.name + " is terminating or missing");
    }
    if (cq.stop_policy != model::StopPolicy::kNone) {
      return hold("ClusterQueueStopped", "ClusterQueue " + cq.name + " is stopped");
    }
    if (lq.stop != model::StopPolicy::kNone) {
      return hold("LocalQueueStopped", "LocalQueue " + lq.name + " is stopped");
    }
    if (!NamespaceMatches(cq.namespace_selector, ns, NamespaceLabels(ns))) {
      return hold("NamespaceMismatch", "Workload namespace " + ns + " doesn't match ClusterQueue " +
                                           cq.name + " selector");
    }
    // Kueue's scheduler finds such a head inadmissible before assigning flavors.
    if (!wl.inadmissible.empty()) return hold("Inadmissible", wl.inadmissible);
    ws.route = Route::kKueue;
    ws.plain = PlainShape(ws);
    ws.pending = InternNote("Pending", "waiting for admission in ClusterQueue " + cq.name);
    return;
  }
  if (!wl.volcano_queue.empty()) {
    auto q = volcano_.Find(wl.volcano_queue);
    if (!q) return hold("QueueNotFound", "Volcano queue " + wl.volcano_queue + " doesn't exist");
    ws.queue = *q;
    if (!volcano_.queue(*q).open)
      return hold("QueueClosed", "Volcano queue " + wl.volcano_queue + " is closed");
    // Its pods could not be created (kube-apiserver's LimitRanger would refuse them).
    if (!wl.inadmissible.empty()) return hold("Inadmissible", wl.inadmissible);
    ws.route = Route::kVolcano;
    ws.qkey.share = VolcanoShare(ws.request);
    ws.qkey.sla_deadline = SlaDeadline(ws);
    ws.pending =
        InternNote("Pending", "waiting for admission in Volcano queue " + wl.volcano_queue);
    return;
  }
  if (!wl.inadmissible.empty()) return hold("Inadmissible", wl.inadmissible);
  ws.route = Route::kNoQueue;
  ws.qkey.sla_deadline = SlaDeadline(ws);
  ws.pending = InternNote("Pending", "waiting for nodes (no queue)");
}

void AdmitterImpl::Enqueue(std::shared_ptr<const model::Workload> workload, Time now, void* owner) {
  // One lookup for a new workload, and its state built in place (no copy to move).
  auto [pos, inserted] = workloads_.try_emplace(workload->key);
  Time created = now;
  if (!inserted) {
    // Re-enqueue of a known workload: replace its spec, keep its queue position.
    created = pos->second.qkey.created;
    Remove(workload->key);
    pos = workloads_.try_emplace(workload->key).first;
  }
  WorkloadState& stored = pos->second;
  InitState(stored, std::move(workload), created);
  stored.owner = owner;
  Place(stored);
  if (PendingQueue* q = QueueFor(stored)) q->Push(stored.qkey);
}

void AdmitterImpl::InitState(WorkloadState& ws, std::shared_ptr<const model::Workload> shared,
                             Time created) {
  ws.workload = std::move(shared);
  const model::Workload& workload = ws.wl();
  ws.shape = ShapeOf(workload);
  ws.qkey = QueueKey{workload.priority, 0, created, workload.meta.order, workload.key};
  ws.request = model::TotalRequest(workload);
  ws.preemption_never = workload.preemption_never;
  ws.elastic_in_kueue = workloads::IsElastic(workload, /*kueue_queued=*/true);
  ws.elastic_elsewhere = workloads::IsElastic(workload, /*kueue_queued=*/false);
  Resolve(ws);
}

void AdmitterImpl::Place(WorkloadState& stored) {
  stored.qkey.state = &stored;  // map nodes stay put: valid until Remove
  if (!held_for_preemptor_.empty()) SyncHeld(stored.wl().key);
  if (stored.route == Route::kVolcano) volcano_.queue(stored.queue).request += stored.request;
}

void AdmitterImpl::Charge(WorkloadState& ws, int64_t admit_seq) {
  ws.admitted = true;
  ws.admit_seq = admit_seq;
  switch (ws.route) {
    case Route::kKueue: {
      tree_.AddUsage(cqs_[ws.queue].node, ws.usage);
      cq_admitted_[ws.queue].emplace(ws.wl().key, &ws);
      ws.charged_rank =
          CandidateRank{ws.wl().priority, ws.qkey.created, ws.qkey.order, ws.wl().key};
      admitted_index_.Add(ws.queue, ws.charged_rank, ws.usage);
      BumpGeneration(ws.queue);
      AdmittedChanged(ws, /*charged=*/true);
      break;
    }
    case Route::kVolcano:
      volcano_.queue(ws.queue).allocated += ws.allocated;
      vq_admitted_[ws.queue].insert(ws.wl().key);
      break;
    case Route::kNoQueue:
      no_queue_admitted_.insert(ws.wl().key);
      break;
    case Route::kHeld:
      break;
  }
}

void AdmitterImpl::Release(WorkloadState& ws) {
  if (!ws.admitted) return;
  ws.admitted = false;
  switch (ws.route) {
    case Route::kKueue: {
      tree_.RemoveUsage(cqs_[ws.queue].node, ws.usage);
      cq_admitted_[ws.queue].erase(ws.wl().key);
      admitted_index_.Remove(ws.queue, ws.charged_rank, ws.usage);
      BumpGeneration(ws.queue);
      AdmittedChanged(ws, /*charged=*/false);
      break;
    }
    case Route::kVolcano:
      volcano_.queue(ws.queue).allocated -= ws.allocated;
      vq_admitted_[ws.queue].erase(ws.wl().key);
      break;
    case Route::kNoQueue:
      no_queue_admitted_.erase(ws.wl().key);
      break;
    case Route::kHeld:
      break;
  }
  ws.usage.clear();
  ws.allocated = ResourceList{};
  ws.assignment = Assignment{};
}

void AdmitterImpl::UnparkQueue(Route route, int32_t queue) {
  PendingQueue* q = route == Route::kKueue     ? &cq_pending_[queue]
                    : route == Route::kVolcano ? &vq_pending_[queue]
                                               : &no_queue_pending_;
  q->UnparkAll();
}

// Freed quota helps the released workload's cohort tree (Kueue requeues the
// cohort's inadmissible workloads); freed nodes help anyone waiting for nodes.
void AdmitterImpl::UnparkAfterRelease(const WorkloadState& ws) {
  if (ws.route == Route::kKueue) {
    for (int32_t cq : cqs_by_root_[tree_.Root(cqs_[ws.queue].node)]) UnparkQueue(Route::kKueue, cq);
  } else if (ws.route == Route::kVolcano) {
    for (int32_t q = 0; q < volcano_.size(); ++q) UnparkQueue(Route::kVolcano, q);
  }
  UnparkPhysical();
}

void AdmitterImpl::UnparkNominationWaiters(Cycle* cycle) {
  if (!nomination_waiters_) return;
  nomination_waiters_ = false;
  for (auto it = physically_parked_.begin(); it != physically_parked_.end();) {
    auto ws = workloads_.find(*it);
    if (ws == workloads_.end() || NoteReason(ws->second) != kReasonNodesNominated) {
      ++it;
      continue;
    }
    if (ws->second.route == Route::kKueue) WakeBeforeUnpark(ws->second.queue, cycle);
    if (PendingQueue* q = QueueFor(ws->second)) q->Unpark(ws->second.qkey);
    ws->second.parked_physical = false;
    it = physically_parked_.erase(it);
  }
}

void AdmitterImpl::UnparkPhysical() {
  for (const std::string& key : physically_parked_) {
    auto it = workloads_.find(key);
    if (it == workloads_.end()) continue;
    if (PendingQueue* q = QueueFor(it->second)) q->Unpark(it->second.qkey);
    it->second.parked_physical = false;
  }
  physically_parked_.clear();
  nomination_waiters_ = false;
}

void AdmitterImpl::Remove(const std::string& key) {
  auto it = workloads_.find(key);
  if (it == workloads_.end()) return;
  ReleaseHeldVictims(key);
  if (auto held = held_for_preemptor_.find(key); held != held_for_preemptor_.end()) Unhold(held);
  WorkloadState& ws = it->second;
  bool held_quota = ws.admitted || !ws.reserved.empty();
  // Heads kept off its nominated nodes may have room now.
  if (ws.nominated) UnparkNominationWaiters();
  DropReservation(ws);
  Release(ws);
  if (PendingQueue* q = QueueFor(ws)) q->Erase(ws.qkey);
  if (ws.route == Route::kVolcano) volcano_.queue(ws.queue).request -= ws.request;
  physically_parked_.erase(key);
  draining_.erase(key);
  // A smaller Volcano demand raises the other queues' deserved shares.
  if (held_quota || ws.route == Route::kVolcano) UnparkAfterRelease(ws);
  workloads_.erase(it);
}

void AdmitterImpl::Requeue(const std::string& key, Time /*now*/) {
  auto it = workloads_.find(key);
  if (it == workloads_.end()) return;
  WorkloadState& ws = it->second;
  bool held_quota = ws.admitted;
  Release(ws);
  draining_.erase(key);
  // Stop policies may have changed where it can go; it keeps its creation time.
  if (PendingQueue* q = QueueFor(ws)) q->Erase(ws.qkey);
  if (ws.route == Route::kVolcano) volcano_.queue(ws.queue).request -= ws.request;
  Resolve(ws);
  if (ws.route != Route::kHeld) {
    ws.pending = InternNote("Evicted", "requeued after eviction; " + ws.pending->message);
  }
  if (PendingQueue* q = QueueFor(ws)) q->Push(ws.qkey);
  if (ws.route == Route::kVolcano) volcano_.queue(ws.queue).request += ws.request;
  if (held_quota) UnparkAfterRelease(ws);
}

void AdmitterImpl::NotifyCapacityChanged() {
  // Capacity or configuration moved outside the quota tree: every parked workload
  // may fit now. The caches stay: flavor assignments and candidate lists depend on
  // the tree's usage and the admitted sets only, and every change to those (Charge,
  // Release, a stop policy) bumps its root's generation itself. Re-assigning the
  // flavors of every pending workload after each preemption was most of a
  // preempting cycle's cost.
  // Kueue queues are unparked when the next cycle begins, unless their tree is quiet
  // then (BeginQuiet); until then they read as unparked.
  unpark_all_due_ = true;
  for (auto& q : vq_pending_) q.UnparkAll();
  no_queue_pending_.UnparkAll();
  for (const std::string& key : physically_parked_) {
    auto it = workloads_.find(key);
    if (it != workloads_.end()) it->second.parked_physical = false;
  }
  physically_parked_.clear();
  nomination_waiters_ = false;
}

void AdmitterImpl::SetPending(WorkloadState& ws, std::string_view reason, std::string_view message,
                              std::vector<Decision>* out) {
  // Most heads stay pending for the same reason cycle after cycle: compared first, so
  // an unchanged text is neither hashed nor emitted.
  if (ws.pending != nullptr && ws.pending->reason == reason && ws.pending->message == message) {
    if (ws.pending_text < 0) {
      ws.pending = InternNote(reason, message);
      ws.pending_text = ws.pending->id;
    }
    return;
  }
  // No note reads as empty texts (an adopted workload's, before its first cycle).
  const bool changed = ws.pending != nullptr || !reason.empty() || !message.empty();
  ws.pending = InternNote(reason, message);
  ws.pending_text = ws.pending->id;
  if (out && changed) out->push_back(PendingDecisionOf(ws));
}

void AdmitterImpl::SetPending(WorkloadState& ws, const NoteRef& note, std::vector<Decision>* out) {
  if (ws.pending == note && note->id >= 0) {
    ws.pending_text = note->id;  // it was -1 or this id
    return;
  }
  // An interned note of another text is taken as it is (its text not hashed again);
  // the rest is what the texts say, decided in one place (an equal text keeps the
  // note and id it has).
  const bool other_text = ws.pending == nullptr ? !note->reason.empty() || !note->message.empty()
                                                : ws.pending->reason != note->reason ||
                                                      ws.pending->message != note->message;
  if (note->id < 0 || !other_text) return SetPending(ws, note->reason, note->message, out);
  ws.pending = note;
  ws.pending_text = note->id;
  if (out) out->push_back(PendingDecisionOf(ws));
}

Decision AdmitterImpl::PendingDecisionOf(const WorkloadState& ws) {
  Decision d;
  if (ws.pending == nullptr) return d;
  d.kind = Decision::Kind::kPending;
  d.workload_key = ws.wl().key;
  d.reason = ws.pending->reason;
  d.message = ws.pending->message;
  if (ws.pending->id >= 0) d.text = ws.pending;
  d.owner = ws.owner;
  return d;
}

const std::string& AdmitterImpl::NoteReason(const WorkloadState& ws) {
  static const std::string kNone;
  return ws.pending == nullptr ? kNone : ws.pending->reason;
}

const std::string& AdmitterImpl::NoteMessage(const WorkloadState& ws) {
  static const std::string kNone;
  return ws.pending == nullptr ? kNone : ws.pending->message;
}

const AdmitterImpl::NoteRef& AdmitterImpl::InternNote(std::string_view reason,
                                                      std::string_view message) {
  constexpr size_t kMaxPendingTexts = 1 << 16;
  auto found = pending_texts_.find(PendingText{reason, message});
  if (found != pending_texts_.end()) return found->second;
  if (pending_texts_.size() >= kMaxPendingTexts) pending_texts_.clear();
  std::string text;
  text.reserve(reason.size() + 1 + message.size());
  text.append(reason).push_back('\0');
  text.append(message);
  auto note = std::make_shared<const PendingNote>(
      PendingNote{{std::string(reason), std::string(message)}, next_pending_text_++});
  return pending_texts_.emplace(std::move(text), std::move(note)).first->second;
}

// The candidates of the tree: victims chosen this cycle stay in the list (a workload
// needing them is skipped as overlapping). With workloads draining, a copy without
// them, cached per root for the cycle: only an admission in that tree (which bumps
// its admitted_gen_) changes the admitted set or what it admitted this cycle.
const std::vector<PreemptionCandidate>& AdmitterImpl::AdmittedInTree(int32_t cq, Cycle& cycle) {
  NodeId root_node = RootOf(cq);
  // Nothing draining: the root's list as it is; the readers skip what was admitted
  // in this cycle (IncomingWorkload::max_admit_seq), so no copy per cycle and tree.
  if (draining_.empty()) return AdmittedInRoot(root_node);
  if (cycle.candidates.size() < admitted_gen_.size()) {
    cycle.candidates.resize(admitted_gen_.size(), {-1, {}});
  }
  auto& slot = cycle.candidates[static_cast<size_t>(root_node)];
  if (slot.first == admitted_gen_[root_node]) return slot.second;
  slot.first = admitted_gen_[root_node];
  std::vector<PreemptionCandidate>& out = slot.second;
  out.clear();
  const std::vector<PreemptionCandidate>& all = AdmittedInRoot(root_node);
  out.reserve(all.size());
  for (const PreemptionCandidate& c : all) {
    // Admitted this cycle (Charge gave it a newer admit_seq): never a victim.
    // Victims chosen this cycle stay: a workload needing them is skipped (overlap).
    if (c.admit_seq > cycle.first_admit_seq) continue;
    if (!draining_.empty() && draining_.count(std::string(c.key))) continue;
    out.push_back(c);
  }
  return out;
}

const std::vector<PreemptionCandidate>& AdmitterImpl::AdmittedInRoot(NodeId root_node) const {
  auto& slot = admitted_by_root_[static_cast<size_t>(root_node)];
  if (slot.first == admitted_gen_[root_node]) return slot.second;
  slot.first = admitted_gen_[root_node];
  BuildAdmittedInRoot(root_node, slot.second);
  return slot.second;
}

void AdmitterImpl::BuildAdmittedInRoot(NodeId root_node,
                                       std::vector<PreemptionCandidate>& out) const {
  out.clear();
  for (int32_t c : cqs_by_root_[root_node]) {
    for (const auto& [key, state] : cq_admitted_[c]) out.push_back(AsCandidate(*state, c));
  }
}

void AdmitterImpl::AdmittedChanged(const WorkloadState& ws, bool charged) {
  const NodeId root = RootOf(ws.queue);
  const int64_t gen_before = std::exchange(admitted_gen_[root], ++generation_);
  auto& slot = admitted_by_root_[static_cast<size_t>(root)];
  if (slot.first != gen_before) return;
  std::vector<PreemptionCandidate>& list = slot.second;
  // AdmittedInRoot's order: ClusterQueues by name (their rank: no string read), then keys.
  auto before = [this](const PreemptionCandidate& a, const PreemptionCandidate& b) {
    if (a.cq != b.cq) return cq_name_rank_[a.cq] < cq_name_rank_[b.cq];
    return a.key < b.key;
  };
  PreemptionCandidate pc = AsCandidate(ws, ws.queue);
  auto at = std::lower_bound(list.begin(), list.end(), pc, before);
  const bool present = at != list.end() && at->cq == pc.cq && at->key == pc.key;
  if (charged == present) {  // not what a rebuild would hold: rebuild then
    slot.first = -1;
    return;
  }
  if (charged) {
    list.insert(at, pc);
  } else {
    list.erase(at);
  }
  slot.first = admitted_gen_[root];
}

PreemptionCandidate AdmitterImpl::AsCandidate(const WorkloadState& ws, int32_t cq) {
  PreemptionCandidate pc;
  pc.key = ws.wl().key;  // lives as long as the workload state
  pc.cq = cq;
  pc.priority = ws.wl().priority;
  pc.created = ws.qkey.created;
  pc.order = ws.qkey.order;
  pc.admit_seq = ws.admit_seq;
  pc.usage = &ws.usage;
  pc.uses = FrMask::OfUsage(ws.usage);
  return pc;
}

// Volcano drf: the job's dominant share, max over resources of its request over the
// cluster total. muster admits whole gangs, so this is the share drf's allocated
// accounting reaches once the job's tasks are bound; jobs that would hold less of
// the cluster go first among equal priorities.
int64_t AdmitterImpl::VolcanoShare(const ResourceList& request) const {
  int64_t share = 0;
  if (!volcano_cfg_.drf_job_order) return share;  // no drf plugin: creation order
  const ResourceList& total = volcano_.total();
  for (ResourceId id : request.SortedIds()) {
    int64_t have = total.Get(id), want = request.Get(id);
    if (want <= 0) continue;
    int64_t s = have <= 0 ? 1000000 : std::min<int64_t>(1000000, want * 1000000 / have);
    share = std::max(share, s);
  }
  return share;
}

void AdmitterImpl::RekeyVolcano() {
  for (int32_t q = 0; q < volcano_.size(); ++q) {
    for (const QueueKey& old : vq_pending_[q].All()) {
      WorkloadState& ws = *static_cast<WorkloadState*>(old.state);
      ws.qkey.share = VolcanoShare(ws.request);
      vq_pending_[q].Replace(old, ws.qkey);
    }
  }
}

void AdmitterImpl::SetClusterCapacity(const ResourceList& total) {
  volcano_.SetTotal(total);
  RekeyVolcano();
}

// Kueue reacts to a stopPolicy edit at once: Hold and HoldAndDrain stop admitting
// (HoldAndDrain also evicts what the queue admitted, in the next cycle's
// DrainStopped); None puts the held workloads back in line with their original
// creation time.
std::optional<int32_t> AdmitterImpl::FindClusterQueue(const std::string& name) const {
  auto it = std::lower_bound(cq_by_name_.begin(), cq_by_name_.end(), name,
                             [&](int32_t c, const std::string& n) { return cqs_[c].name < n; });
  if (it == cq_by_name_.end() || cqs_[*it].name != name) return std::nullopt;
  return *it;
}

QueueInfo AdmitterImpl::QueueOf(const std::string& key) const {
  auto it = workloads_.find(key);
  return it == workloads_.end() ? QueueInfo{} : QueueInfoOf(it->second);
}

QueueInfo AdmitterImpl::QueueInfoOf(const WorkloadState& ws) const {
  QueueInfo info;
  info.local_queue = ws.local_queue;
  if (!ws.wl().local_queue.empty()) {
    if (ws.queue >= 0) info.cluster_queue = cqs_[ws.queue].name;
  } else if (!ws.wl().volcano_queue.empty()) {
    info.cluster_queue = ws.wl().volcano_queue;
    info.volcano = true;
  }
  return info;
}

std::optional<Decision> AdmitterImpl::PendingReason(const std::string& key) const {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || it->second.admitted) return std::nullopt;
  const WorkloadState& ws = it->second;
  Decision d = PendingDecisionOf(ws);
  // Behind a blocked StrictFIFO head, the head's reason is this workload's reason.
  if (ws.route == Route::kKueue && d.reason == "Pending" &&
      cqs_[ws.queue].strategy == model::QueueingStrategy::kStrictFIFO) {
    const QueueKey* head = cq_pending_[ws.queue].First();
    if (head && head->key != key) {
      const WorkloadState& hs = *static_cast<const WorkloadState*>(head->state);
      if (NoteReason(hs) != "Pending") {
        d.text = nullptr;  // the text is this one's own
        d.reason = "StrictFIFOBlocked";
        d.message = "waiting behind " + hs.wl().key + " in StrictFIFO ClusterQueue " +
                    cqs_[ws.queue].name + ": " + NoteMessage(hs);
      }
    }
  }
  return d;
}

std::vector<std::string> AdmitterImpl::CheckInvariants() const {
  std::vector<std::string> out = tree_.CheckInvariants();
  // A tree's candidate list that claims to be current is what a rebuild would hold
  // (Charge and Release patch it in place).
  std::vector<PreemptionCandidate> rebuilt;
  for (NodeId root = 0; root < static_cast<NodeId>(admitted_by_root_.size()); ++root) {
    const auto& cached = admitted_by_root_[static_cast<size_t>(root)];
    if (cached.first != admitted_gen_[root]) continue;
    BuildAdmittedInRoot(root, rebuilt);
    auto same = [](const PreemptionCandidate& a, const PreemptionCandidate& b) {
      return a.key == b.key && a.cq == b.cq && a.priority == b.priority && a.created == b.created &&
             a.order == b.order && a.admit_seq == b.admit_seq && a.usage == b.usage;
    };
    if (!std::equal(rebuilt.begin(), rebuilt.end(), cached.second.begin(), cached.second.end(),
                    same)) {
      out.push_back("cohort tree " + std::to_string(root) +
                    ": the cached admitted list differs from the admitted workloads");
    }
  }
  // What the tree holds at each ClusterQueue equals what its admitted workloads charge.
  for (size_t c = 0; c < cqs_.size(); ++c) {
    std::vector<int64_t> sum(tree_.FrCount(), 0);
    for (const auto& [key, state] : cq_admitted_[c]) {
      for (const auto& [fr, v] : state->usage) sum[fr] += v;
    }
    for (const std::string& key : reserving_) {  // a preemptor's reservation
      const WorkloadState& ws = workloads_.at(key);
      if (ws.queue != static_cast<int32_t>(c)) continue;
      for (const auto& [fr, v] : ws.reserved) sum[fr] += v;
    }
    for (FrId fr = 0; fr < tree_.FrCount(); ++fr) {
      if (sum[fr] != tree_.Usage(cqs_[c].node, fr)) {
        out.push_back("ClusterQueue " + cqs_[c].name + ": usage of " +
                      ResourceNames::Name(tree_.FrOf(fr).second) +
                      " does not match its admitted workloads and reservations");
      }
    }
  }
  for (int32_t q = 0; q < volcano_.size(); ++q) {
    const auto& vq = volcano_.queue(q);
    for (const auto& [id, cap] : vq.capability) {
      if (vq.allocated.Get(id) > cap) {
        out.push_back("Volcano queue " + vq.name + ": allocated " + ResourceNames::Name(id) +
                      " exceeds capability");
      }
    }
  }
  std::vector<std::string> missing;
  for (const auto& [key, ws] : workloads_) {
    if (!ws.admitted && (NoteReason(ws).empty() || NoteMessage(ws).empty())) {
      missing.push_back("workload " + key + " is pending without a reason");
    }
  }
  std::sort(missing.begin(), missing.end());
  out.insert(out.end(), missing.begin(), missing.end());
  return out;
}

}  // namespace muster::admission
