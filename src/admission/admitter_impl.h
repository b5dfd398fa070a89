// AdmitterImpl: the queue tree (Kueue ClusterQueues/Cohorts and Volcano queues),
// the pending queues and what admitted workloads hold. Split by concern:
// admitter_build.cc (MakeAdmitter), admitter_queueing.cc (enqueue, requeue,
// parking, reasons, invariants, stop policies), admitter_adopt.cc (taking over
// running workloads), admission_cycle.cc (RunCycle),
// kueue_plan.cc (one Kueue head: fit, preempt, partial admission), fair_sharing.cc
// (shares and the fair-sharing order of heads).
//
// Throughput: a ClusterQueue's flavor assignment and preemption candidates depend
// only on the usage of its cohort tree, so each root carries a generation bumped on
// every usage or configuration change there; results are cached per generation and
// an admission invalidates only its own tree.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "admission/admission.h"
#include "admission/admitted_index.h"
#include "admission/cluster_queue.h"
#include "admission/flavor_assigner.h"
#include "admission/preemptor.h"
#include "admission/quota_tree.h"
#include "admission/volcano_proportion.h"

namespace muster::admission {

// kueue_plan.cc: whether Kueue may admit fewer pods than asked (partial admission).
bool CanBePartiallyAdmitted(const model::Workload& wl);
// Request of the pods an assignment admits (its per-pod-set counts).
ResourceList AssignedRequest(const model::Workload& wl, const Assignment& assignment);
// `base` (its flavors) with an elastic workload's minimum counts.
Assignment ElasticMinimum(const model::Workload& wl, const Assignment& base);

// A namespaced object's namespace, "default" when its manifest named none (as the
// API server defaults it).
inline std::string NamespaceOf(const std::string& ns) { return ns.empty() ? "default" : ns; }

class AdmitterImpl : public Admitter {
 public:
  static Result<std::unique_ptr<AdmitterImpl>> Build(const model::ManifestSet& manifests);

  void Reserve(size_t workloads) override { workloads_.reserve(workloads); }
  using Admitter::Adopt;
  using Admitter::Enqueue;
  void Enqueue(std::shared_ptr<const model::Workload> workload, Time now, void* owner) override;
  void Remove(const std::string& workload_key) override;
  void Requeue(const std::string& workload_key, Time now) override;
  void NotifyCapacityChanged() override;
  std::vector<Decision> RunCycle(Time now, PlacementOracle& oracle) override;
  void RunCycleInto(std::vector<Decision>& out, Time now, PlacementOracle& oracle) override;
  QueueInfo QueueOf(const std::string& workload_key) const override;
  std::optional<Decision> PendingReason(const std::string& workload_key) const override;
  std::vector<std::string> CheckInvariants() const override;
  void SetClusterCapacity(const ResourceList& total) override;
  // admitter_queue_edits.cc
  Status UpdateStopPolicy(const std::string& cluster_queue, model::StopPolicy policy,
                          bool terminating = false) override;
  Status PutLocalQueue(const model::LocalQueue& lq) override;
  Status RemoveLocalQueue(const std::string& namespace_, const std::string& name) override;
  Status PutNamespace(const model::Namespace& ns) override;
  Status RemoveNamespace(const std::string& name) override;
  Status UpdateQuotas(const std::string& name,
                      const std::vector<model::ResourceGroup>& groups) override;  // build.cc
  Status Adopt(const std::shared_ptr<const model::Workload>& workload, const Assignment& assignment,
               Time now) override;
  AdmissionSnapshot Snapshot() const override;  // admitter_snapshot.cc
  Status CheckResize(const std::string& workload_key, const Assignment& assignment) override;
  Status Resize(const std::string& workload_key, const Assignment& assignment) override;
  // Forgets every cached flavor assignment and candidate list without unparking
  // anything: results must not change (tests check the caches against this).
  void DropCaches() {
    for (auto& g : root_gen_) g = ++generation_;
    for (auto& g : admitted_gen_) g = ++generation_;
  }
  // Every head computes its own flavor assignment whenever its tree moved
  // (SharedFlavors off, no first choice kept), for the same check.
  void StopSharingFlavors() { share_flavors_ = false; }
  // Every head is visited: no queue sleeps through a run of heads (admission_sleep.cc).
  void StopSleeping() { sleep_ = false; }
  // All three, and the caches dropped before every cycle.
  void DisableShortcuts() override {
    StopSharingFlavors();
    StopSleeping();
    drop_caches_ = true;
  }
  // Heads a cycle tried (Process), since the admitter was made.
  int64_t heads_tried() const { return heads_tried_; }

 private:
  enum class Route { kKueue, kVolcano, kNoQueue, kHeld };

  // Why a workload waits: immutable, and interned (InternNote) wherever the text
  // repeats, so the heads of a queue short of the same quota hold one note, where a
  // Decision each took 240 bytes of the state (admission-1k-cq x4: 200,000 states,
  // whose size is what outgrows the last-level cache) and copies of both strings.
  // reason and message are Decision::reason and Decision::message.
  struct PendingNote : PendingText {
    int64_t id = -1;  // InternNote's id; -1: not interned (a preemptor's victim list)
  };
  using NoteRef = std::shared_ptr<const PendingNote>;

  struct WorkloadState {
    // Read of every head a cycle looks at, like heads included (SameShortfall): kept
    // together at the front, in one cache line, rather than behind the workload.
    Route route = Route::kHeld;
    int32_t queue = -1;  // ClusterQueue or Volcano queue index
    // Interned flavor inputs (flavor_shape.cc): equal shapes, equal inputs; -1: the
    // inputs are not shareable. `plain`: a shape, and neither elastic nor partially
    // admissible (set by Resolve, which fixes the route).
    int64_t shape = -1;
    bool plain = false;
    // In held_for_preemptor_ as a victim or in held_victims_ as a preemptor (SyncHeld):
    // asked of every like head, where two lookups by key string cost more.
    bool held = false;
    bool admitted = false;
    bool parked_physical = false;
    bool nominated = false;  // the oracle holds nodes for it (Nominate)
    // Preempts nobody until time moves (preempts_later_): evicted by a preemption at
    // this instant, or it preempted kMaxPreemptionsPerInstant times at it. It may be
    // admitted into free room.
    bool preempts_later = false;
    int8_t preemptions_now = 0;  // preemptions it made at this instant
    // Of the workload, read for every head (PreemptsNow, Elastic): copied here by
    // InitState so a head's checks do not reach into the workload (a cache miss).
    bool preemption_never = false;
    bool elastic_in_kueue = false;   // workloads::IsElastic when Kueue queues it
    bool elastic_elsewhere = false;  // ... and when it is not

    // `pending`'s id, set by SetPending alone (InternNote), so like heads compare one
    // integer instead of two strings; -1 after every other writer of `pending`
    // (Resolve's "waiting for admission" marks a head never tried: Untried).
    int64_t pending_text = -1;
    // Flavor assignment of the full counts against the tree at root generation
    // `flavors_gen` (-1: none cached); possibly shared with other heads of the
    // queue (SharedFlavors).
    int64_t flavors_gen = -1;
    // Not const: an assignment held by this workload alone is recomputed in place.
    std::shared_ptr<FlavorAssignment> flavors;
    // Its flavor inputs compiled for its ClusterQueue (FlavorInputsOf), shared by the
    // heads of its shape there; reset by Resolve, which may change the queue.
    std::shared_ptr<const FlavorInputs> flavor_inputs;
    // The workload itself, shared with its owner (the engine's record; Enqueue): the
    // admitter keeps no copy of its own.
    std::shared_ptr<const model::Workload> workload;
    const model::Workload& wl() const { return *workload; }
    void* owner = nullptr;  // Enqueue's handle, copied into its decisions
    std::string local_queue;
    QueueKey qkey;
    Assignment assignment;
    FrAmounts usage;         // Kueue quota charged while admitted
    ResourceList request;    // total request of every pod (Volcano accounting)
    ResourceList allocated;  // request of the admitted pods (Volcano `allocated`)
    int64_t admit_seq = 0;
    CandidateRank charged_rank;  // what Charge put in admitted_index_
    NoteRef pending;             // latest reason while not admitted; null while admitted
    // A preemptor's claim on the quota it preempted for (admission_reservation.cc):
    // `reserved` is charged to its ClusterQueue in the tree now, `reserve_full` is
    // the whole claim, charged once its victims are gone.
    FrAmounts reserved;
    FrAmounts reserve_full;
  };

  // The last flavor assignment computed for a ClusterQueue: a head with the same
  // flavor inputs (pod set names, counts and requests, priority, preemption_never)
  // at the same root generation gets the same assignment, so it is reused instead of
  // recomputed (a cycle takes the heads of a tree many times after each admission).
  struct SharedFlavors {
    int64_t gen = -1;
    int64_t shape = -1;  // WorkloadState::shape of the inputs
    std::shared_ptr<FlavorAssignment> flavors;
  };
  std::vector<SharedFlavors> shared_flavors_;  // by ClusterQueue index
  bool share_flavors_ = true;
  bool sleep_ = true;
  bool drop_caches_ = false;  // DropCaches() before every cycle
  int64_t heads_tried_ = 0;

  // Victims evicted for a preemptor wait until it is admitted or gives up, so the
  // capacity they free goes to the preemptor (kube-scheduler's nominated node, for
  // quota): otherwise an older or higher-priority victim can win its quota back in
  // the next cycle and the two flap forever within one instant.
  std::map<std::string, std::string> held_for_preemptor_;  // victim -> preemptor
  // The same by preemptor, victims in key order: every head that does not preempt
  // releases its victims, and a walk over every held victim for each was
  // quadratic in a wave's preemptions (5 % of admission-1k-cq's instructions at x4).
  std::unordered_map<std::string, std::set<std::string>> held_victims_;
  void HoldForPreemptor(const std::string& victim, const std::string& preemptor);
  // Erases `it` from held_for_preemptor_ (and from held_victims_); the next entry.
  std::map<std::string, std::string>::iterator Unhold(
      std::map<std::string, std::string>::iterator it);
  bool HeldForPreemptor(WorkloadState& ws, std::vector<Decision>& out);
  // Takes `victim` out of held_victims_[preemptor] (the entry too once empty).
  void ForgetHeldVictim(const std::string& preemptor, const std::string& victim);
  struct Cycle;  // per-cycle bookkeeping (below)
  // `cycle`: the cycle its preemptor lets them go in (nullptr between cycles).
  void ReleaseHeldVictims(const std::string& preemptor, Cycle* cycle = nullptr);
  // WorkloadState::held of `key` from the two maps; every change to them calls it.
  void SyncHeld(const std::string& key);
  // Set when ReleaseHeldVictims unparks a victim: a cycle's next round rescans
  // every queue.
  bool woke_queue_ = false;

  struct LocalQueueState {
    std::string name;
    std::string cluster_queue;
    int32_t cq = -1;
    model::StopPolicy stop = model::StopPolicy::kNone;
  };

  // Per-cycle bookkeeping.
  struct Entry;
  struct Cycle {
    // Queues done for this cycle, by BlockedSlot: CollectHeads asks of every queue
    // every round, a set lookup each time.
    std::vector<char> blocked;
    // Queues that gave a head in the last round, in scan order: only they can give
    // one in the next (admitting or parking a head never wakes another queue), so a
    // round visits them instead of every queue. `rescan`: scan every queue (the
    // first round, or after a queue was unparked mid-cycle).
    std::vector<std::pair<Route, int32_t>> live;
    std::vector<std::pair<Route, int32_t>> next_live;  // CollectHeads' scratch
    bool rescan = true;
    // ClassicalTargets' answers by ClusterQueue, valid at one root generation
    // (kueue_plan.cc): the heads of a full queue ask the same question round after
    // round while nothing in their tree moves.
    struct TargetsMemo {
      int64_t gen = -1;
      int32_t priority = 0;
      Time created = 0;
      int64_t order = 0;
      FrAmounts usage;
      std::vector<FrId> preempt_frs;
      std::vector<PreemptionTarget> targets;
    };
    std::vector<std::vector<TargetsMemo>> targets_memo;
    std::set<std::string> victims;  // chosen for preemption this cycle
    // Roots whose tree counts a preemptor's claim beside victims of other queues
    // that the engine evicts once the cycle ends (ClaimQuota).
    std::set<NodeId> overcounted;
    // admit_seq_ when the cycle began: a workload admitted in it has a larger one
    // (AdmittedThisCycle), and is never a victim.
    int64_t first_admit_seq = 0;
    // Admitted workloads of a cohort tree as preemption candidates, per root, valid
    // while the root's generation is unchanged.
    // By root NodeId (a vector: one lookup per head); gen -1: not built.
    std::vector<std::pair<int64_t, std::vector<PreemptionCandidate>>> candidates;
    // By root NodeId (admission_quiet.cc): its generation when the cycle began,
    // whether some of its workloads were parked then, and whether a head of it did
    // anything but wait for quota.
    std::vector<int64_t> gen_at_start;
    std::vector<char> parked_at_start;
    std::vector<char> stirred;
    // Sleeping ClusterQueues (admission_sleep.cc), by ClusterQueue index.
    struct Sleep {
      int64_t gen = -1;      // root generation its head was found short at; -1: awake
      int64_t round = 0;     // the round of that head
      int32_t run = 0;       // heads after it that would be found short the same way
      bool borrows = false;  // their entries' sort key
      uint64_t id = 0;       // tells a stale wake_at entry from this sleep's
      // The head's shape and pending note, which a run head never tried
      // (SameShortfall's `untried`) gets when it is parked (ParkRun).
      int64_t shape = -1;
      NoteRef note;
    };
    int64_t round = 0;
    std::vector<Sleep> sleep;
    // By ClusterQueue: the last head MaybeSleep compared the heads behind it with,
    // and the last of them found the same. Until heads are unparked into the queue
    // (WakeBeforeUnpark forgets it), those heads wait unvisited, so a later head
    // found like `ref` shares the same run without comparing them again.
    struct Verified {
      const WorkloadState* ref = nullptr;
      const WorkloadState* last = nullptr;
    };
    std::vector<Verified> verified;
    size_t sleeping = 0;
    uint64_t sleep_ids = 0;
    std::vector<std::vector<int32_t>> sleeping_by_root;  // by root NodeId
    std::vector<int32_t> wake_scratch;                   // WakeRoot's copy of a root's sleepers
    // When each sleeper's run ends: a min-heap by (round, id), so equal rounds wake
    // in the order the queues fell asleep (no tree node allocated per sleep).
    struct WakeAt {
      int64_t round = 0;
      uint64_t id = 0;
      int32_t cq = -1;
      friend bool operator>(const WakeAt& a, const WakeAt& b) {
        return a.round != b.round ? a.round > b.round : a.id > b.id;
      }
    };
    std::vector<WakeAt> wake_at;
    void PushWake(WakeAt w) {
      wake_at.push_back(w);
      std::push_heap(wake_at.begin(), wake_at.end(), std::greater<>());
    }
    void PopWake() {
      std::pop_heap(wake_at.begin(), wake_at.end(), std::greater<>());
      wake_at.pop_back();
    }
    std::vector<Decision>* out = nullptr;  // the cycle's decisions (ParkRun adds to them)
    // The round's heads and the one being processed: a queue woken by a head's
    // processing gives its head of this round after it (WakeQueue).
    std::vector<Entry>* entries = nullptr;
    size_t pos = 0;
  };

  struct Entry {
    Route route = Route::kNoQueue;
    int32_t queue = -1;
    WorkloadState* ws = nullptr;
    bool borrows = false;  // Kueue only: the nominated assignment borrows
    // Kueue only: it stays pending for quota alone, decided without the oracle, the
    // cycle's victims or a smaller count (admission_quiet.cc).
    bool quota_wait = false;
  };

  enum class Outcome { kAdmitted, kPending, kPreempting };

  // admission_reservation.cc: the quota a preemptor needs is charged to its
  // ClusterQueue from its preemption until it is admitted or gives up, so no other
  // head of the tree takes what its victims free.
  std::set<std::string> reserving_;  // keys with a reservation charged
  // When a cycle begins: each reservation that no longer fits (a victim stayed) ends.
  void ChargeReservations();
  // A workload evicted by a preemption preempts nobody at the same instant. Its
  // pods take time to stop and it is requeued after (Kueue); at one instant of
  // virtual time a victim that preempted at once could evict a third workload,
  // whose own preemption evicts a fourth, round a cycle of queues for ever (each
  // step allowed by the policies: reclaim of a borrowing queue, then a higher
  // priority in the queue that borrows now). It is admitted into free room as
  // ever, and preempts once the clock moves.
  // A preemptor, too, preempts at most twice at one instant (the second for nodes
  // once its quota was made, say): its victims are gone at once in virtual time, so
  // a preemptor whose room went to another head would preempt again each cycle,
  // another's victims in turn, and the instant never settle. With each workload's
  // preemptions bounded per instant, so are the instant's evictions: once they are
  // spent, cycles only admit, and the instant settles.
  std::vector<std::string> preempts_later_;
  Time preempts_later_at_ = 0;
  static constexpr int8_t kMaxPreemptionsPerInstant = 2;
  void MarkPreemptsLater(const std::string& key);
  // After a preemption by `ws`: counted, and marked once it reached the bound.
  void CountPreemption(WorkloadState& ws);
  void ForgetPreemptsLater();
  bool PreemptsNow(const WorkloadState& ws) const {
    return !ws.preemption_never && !ws.preempts_later;
  }
  static constexpr const char* kFreshVictimNote =
      " (it was preempted at this instant and preempts nobody until time moves)";
  static constexpr const char* kPreemptedEnoughNote =
      " (it preempted twice at this instant and preempts no more until time moves)";
  const char* PreemptsLaterNote(const WorkloadState& ws) const {
    return ws.preemptions_now >= kMaxPreemptionsPerInstant ? kPreemptedEnoughNote
                                                           : kFreshVictimNote;
  }

  void ClaimQuota(WorkloadState& ws, FrAmounts usage, const std::vector<Victim>& victims,
                  Cycle& cycle);
  // Takes `ws`'s charged reservation out of the tree before it plans (it plans for
  // the room it reserved); what was charged.
  FrAmounts TakeReservation(WorkloadState& ws);
  // After `ws` was processed with `taken` out: admitted or given up, the claim
  // ends; still preempting, `taken` is charged again for the rest of the cycle.
  void SettleReservation(WorkloadState& ws, Outcome outcome, FrAmounts taken, Cycle& cycle);
  void DropReservation(WorkloadState& ws);
  // `cycle`: the cycle it is given up in (nullptr between cycles).
  void UnparkReservationTree(const WorkloadState& ws, Cycle* cycle);

  // Cycle::blocked's index of a queue: ClusterQueues, then Volcano queues, then the
  // queue of workloads without one.
  size_t BlockedSlot(Route route, int32_t queue) const {
    switch (route) {
      case Route::kKueue:
        return static_cast<size_t>(queue);
      case Route::kVolcano:
        return cqs_.size() + static_cast<size_t>(queue);
      case Route::kNoQueue:
      case Route::kHeld:
        break;
    }
    return cqs_.size() + static_cast<size_t>(volcano_.size());
  }

  // Charge gave it a newer admit_seq than any before the cycle (a resize keeps its
  // old one): a set of the cycle's keys cost an allocation per admission.
  static bool AdmittedThisCycle(const WorkloadState& ws, const Cycle& cycle) {
    return ws.admit_seq > cycle.first_admit_seq;
  }

  // What one Kueue head would do now (kueue_plan.cc); no side effects but oracle queries.
  struct Plan {
    enum class Kind { kAdmit, kPreempt, kPending, kBlocked };
    Kind kind = Kind::kPending;
    FlavorAssignment flavors;  // assignment and usage to admit or preempt for
    std::vector<Victim> victims;
    std::string reason;
    std::string message;
    // Pending: because nodes, not quota, are short. Preempt: victims were chosen
    // for nodes too, not for quota alone.
    bool physical = false;
  };

  AdmitterImpl() = default;

  // admitter_queueing.cc
  // A state for `workload` (created at `created`), resolved to its queue; Enqueue
  // and Adopt build theirs so.
  void InitState(WorkloadState& ws, std::shared_ptr<const model::Workload> workload, Time created);
  // `stored`, now in workloads_ for good: its queue key points at it, its held flag
  // and its Volcano queue's request count it.
  void Place(WorkloadState& stored);
  PendingQueue* QueueFor(const WorkloadState& ws);
  // The queues `ws` goes through, as QueueOf reports them.
  QueueInfo QueueInfoOf(const WorkloadState& ws) const;
  void Resolve(WorkloadState& ws);
  // Resolve for a workload that is not admitted, taking it out of the queue it
  // waits in first and putting it in the one it waits in now, if any
  // (admitter_queue_edits.cc, as the next one).
  void Reroute(WorkloadState& ws);
  // Reroutes every workload of LocalQueue `ns`/`name` that is not admitted.
  void RerouteLocalQueue(const std::string& ns, const std::string& name);
  void RerouteNamespace(const std::string& ns);
  const model::StringMap* NamespaceLabels(const std::string& ns) const;
  // Makes `ws` pending with this reason and message; a change goes into `out`.
  void SetPending(WorkloadState& ws, std::string_view reason, std::string_view message,
                  std::vector<Decision>* out);
  // The same with a note SetPending gave another head.
  void SetPending(WorkloadState& ws, const NoteRef& note, std::vector<Decision>* out);
  // The pending decision `ws`'s note stands for (a default Decision without a note).
  static Decision PendingDecisionOf(const WorkloadState& ws);
  // Its note's texts; empty without one.
  static const std::string& NoteReason(const WorkloadState& ws);
  static const std::string& NoteMessage(const WorkloadState& ws);
  // Charges an admission, the latest one (a new admit_seq) or, for a resize, one
  // that keeps its place in the admission order (`admit_seq`).
  void Charge(WorkloadState& ws) { Charge(ws, ++admit_seq_); }
  void Charge(WorkloadState& ws, int64_t admit_seq);
  void Release(WorkloadState& ws);
  void UnparkAfterRelease(const WorkloadState& ws);
  // Heads parked for nodes (physically_parked_) go back to their queues.
  void UnparkPhysical();
  // Those of them parked only because nodes were nominated for another
  // (kReasonNodesNominated): a nomination ended.
  void UnparkNominationWaiters(Cycle* cycle = nullptr);
  void UnparkQueue(Route route, int32_t queue);
  const std::vector<PreemptionCandidate>& AdmittedInTree(int32_t cq, Cycle& cycle);
  // Every admitted workload of the cohort tree under `root`, as candidates in
  // ClusterQueue then key order; cached until the root's generation moves.
  const std::vector<PreemptionCandidate>& AdmittedInRoot(NodeId root) const;
  void BuildAdmittedInRoot(NodeId root, std::vector<PreemptionCandidate>& out) const;
  // `ws` was just charged (`charged`) or released in its tree: moves the tree's
  // admitted_gen_, and its list, if it was current, takes the change and stays
  // current; otherwise it is rebuilt when next asked for.
  void AdmittedChanged(const WorkloadState& ws, bool charged);
  // An admitted workload of ClusterQueue `cq` as a preemption candidate.
  static PreemptionCandidate AsCandidate(const WorkloadState& ws, int32_t cq);
  NodeId RootOf(int32_t cq) const { return cq_root_[cq]; }
  // The ClusterQueue index of `name` (cq_by_name_), or nullopt.
  std::optional<int32_t> FindClusterQueue(const std::string& name) const;
  void BumpGeneration(int32_t cq) { root_gen_[cq_root_[cq]] = ++generation_; }
  int64_t VolcanoShare(const ResourceList& request) const;  // ppm, Volcano drf
  // sla.cc: creation plus the job's sla-waiting-time (Volcano's sla plugin), or none.
  Time SlaDeadline(const WorkloadState& ws) const;
  void RekeyVolcano();  // Volcano queue keys after the cluster total changed

  // admitter_adopt.cc: what adopting `assignment` would charge, or why it cannot.
  Result<FrAmounts> AdoptedKueueUsage(const WorkloadState& ws, const Assignment& assignment) const;
  std::string VolcanoCapabilityExceeded(int32_t queue, const ResourceList& request) const;

  // admission_sleep.cc: a ClusterQueue whose head was found short of quota, with
  // heads behind it that would be found short the same way, sleeps through their
  // rounds instead of giving them one by one.
  static bool EntryBefore(const Entry& a, const Entry& b) {
    if (a.borrows != b.borrows) return !a.borrows;
    return a.ws->qkey < b.ws->qkey;
  }
  // `untried`: `next` may also be a head never tried since it was queued, which
  // would get the head's pending decision (ParkRun gives it).
  bool SameShortfall(const WorkloadState& head, const WorkloadState& next, bool untried) const;
  static bool Untried(const WorkloadState& ws);
  // One note per distinct (reason, message), its id telling texts apart: equal ids,
  // equal texts. The table is bounded; once cleared, ids keep counting up, so an old
  // id never matches a new text (two equal texts may then differ in id:
  // SameShortfall only says no), and notes already handed out live on in the states.
  const NoteRef& InternNote(std::string_view reason, std::string_view message);
  // Keys are reason + '\0' + message; a lookup passes the two parts as they are
  // (no joined copy per pending head), hashed as the same bytes.
  struct PendingText {
    std::string_view reason, message;
  };
  struct PendingTextHash {
    using is_transparent = void;
    static uint64_t Add(uint64_t h, std::string_view s) {
      for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;  // FNV-1a
      return h;
    }
    size_t operator()(std::string_view joined) const {
      return static_cast<size_t>(Add(14695981039346656037ULL, joined));
    }
    size_t operator()(const PendingText& t) const {
      // The joined text's bytes: reason, '\0', message.
      uint64_t h = Add(14695981039346656037ULL, t.reason);
      h = Add(h, std::string_view("\0", 1));
      return static_cast<size_t>(Add(h, t.message));
    }
  };
  struct PendingTextEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
    bool operator()(std::string_view joined, const PendingText& t) const {
      return joined.size() == t.reason.size() + 1 + t.message.size() &&
             joined.substr(0, t.reason.size()) == t.reason && joined[t.reason.size()] == '\0' &&
             joined.substr(t.reason.size() + 1) == t.message;
    }
    bool operator()(const PendingText& t, std::string_view joined) const {
      return (*this)(joined, t);
    }
  };
  std::unordered_map<std::string, NoteRef, PendingTextHash, PendingTextEq> pending_texts_;
  int64_t next_pending_text_ = 0;
  void MaybeSleep(const Entry& e, Cycle& cycle);
  void ParkRun(int32_t cq, int64_t count, Cycle& cycle);
  void Awaken(int32_t cq, int64_t consumed, Cycle& cycle);
  void WakeDue(Cycle& cycle);
  bool NextWake(Cycle& cycle);
  void WakeRoot(NodeId root, Cycle& cycle);
  // Wakes `cq` at cycle.pos of the round: its head of this round is parked or goes
  // into the rest of the round, where the round's order puts it.
  void WakeQueue(int32_t cq, Cycle& cycle);
  void WakeBeforeUnpark(int32_t cq, Cycle* cycle);

  // admission_cycle.cc
  void DrainStopped(std::vector<Decision>& out);
  // The round's heads into `entries` (cleared first), in the order they are tried.
  void CollectHeads(Cycle& cycle, std::vector<Entry>& entries);
  const FlavorAssignment& FlavorsFor(WorkloadState& ws);
  // Recomputes ws.flavors: in place when no other workload shares it.
  void Reassign(WorkloadState& ws, AssignOptions options);
  AssignScratch assign_scratch_;
  // ws's FlavorInputs for its ClusterQueue, compiled on first use: one per
  // (ClusterQueue, shape), or the workload's own when it has no shape. Compiling
  // them (sorting resource names, finding (flavor, resource) ids, matching taints)
  // was a quarter of an assignment's instructions, paid again for every head after
  // each admission in its tree. They never depend on usage; a change to the
  // flavors or the queues' resource groups builds a new admitter.
  const FlavorInputs& FlavorInputsOf(WorkloadState& ws);
  struct InputsKey {
    int32_t queue;
    int64_t shape;
    bool operator==(const InputsKey&) const = default;
  };
  struct InputsKeyHash {
    size_t operator()(const InputsKey& k) const {
      return std::hash<uint64_t>{}(static_cast<uint64_t>(k.shape) * 1000003u +
                                   static_cast<uint32_t>(k.queue));
    }
  };
  // Bounded like shapes_ (cleared when full; workloads keep what they hold).
  std::unordered_map<InputsKey, std::shared_ptr<const FlavorInputs>, InputsKeyHash> flavor_inputs_;
  static bool FlavorInputsShareable(const model::Workload& wl);
  static bool SameFlavorInputs(const SharedFlavors& shared, const WorkloadState& ws, int64_t gen) {
    return ws.shape >= 0 && shared.gen == gen && shared.shape == ws.shape;
  }
  // flavor_shape.cc: the interned flavor inputs of `wl` (-1: not shareable), and
  // WorkloadState::plain.
  int64_t ShapeOf(const model::Workload& wl);
  bool PlainShape(const WorkloadState& ws) const;
  // Bounded like pending_texts_: cleared when full, ids counting on, so a shape
  // interned before the clear never equals one after it (less sharing, never a
  // wrong one).
  std::unordered_map<std::string, int64_t> shapes_;
  int64_t next_shape_ = 0;
  // AssignFlavors' options for `ws`: fair sharing, and whether a flavor needing
  // preemption has anyone to preempt (Kueue's noPreemptionCandidates).
  AssignOptions AssignOptionsFor(const WorkloadState& ws) const;
  Outcome Process(Entry& e, Cycle& cycle, PlacementOracle& oracle, std::vector<Decision>& out);
  Outcome ProcessKueue(Entry& e, Cycle& cycle, PlacementOracle& oracle, std::vector<Decision>& out);
  Outcome PlanAndApplyKueue(Entry& e, Cycle& cycle, PlacementOracle& oracle,
                            std::vector<Decision>& out);
  // kueue_plan.cc
  Plan PlanKueue(WorkloadState& ws, const FlavorAssignment& fa, Cycle& cycle,
                 PlacementOracle& oracle);
  // ClassicalTargets, remembered for the cycle while the root's generation holds.
  const std::vector<PreemptionTarget>& CachedClassicalTargets(const IncomingWorkload& in,
                                                              Cycle& cycle);
  std::optional<Plan> PlanPartial(WorkloadState& ws, Cycle& cycle, PlacementOracle& oracle);
  Outcome ProcessVolcano(Entry& e, Cycle& cycle, PlacementOracle& oracle,
                         std::vector<Decision>& out);
  Outcome Admit(WorkloadState& ws, Assignment assignment, FrAmounts usage, Cycle& cycle,
                PlacementOracle& oracle, std::vector<Decision>& out);
  Outcome EmitPreemption(WorkloadState& ws, const Assignment& assignment,
                         std::vector<Victim> victims, bool for_nodes, Cycle& cycle,
                         PlacementOracle& oracle, std::vector<Decision>& out);
  // Physical shortfall: victims among `ordered` (quota targets first) per oracle.
  std::optional<std::vector<Victim>> PhysicalPreemption(
      WorkloadState& ws, const Assignment& assignment, const std::vector<Victim>& required,
      const std::vector<Victim>& optional, const Cycle& cycle, PlacementOracle& oracle);
  // elastic_admission.cc: elastic workloads (workloads/elastic.h).
  bool Elastic(const WorkloadState& ws) const;
  // Kueue head: the most pods that are admitted without preempting anyone, else
  // the minimum's plan (which may preempt).
  Plan PlanElasticKueue(WorkloadState& ws, Cycle& cycle, PlacementOracle& oracle);
  // The largest assignment between `base`'s minimum and full counts (flavors from
  // `base`) for which `fits` holds; the oracle's last fitting check is its own.
  std::optional<Assignment> LargestElasticFit(const model::Workload& wl, const Assignment& base,
                                              const std::function<bool(const Assignment&)>& fits);
  // `victims` with those that are elastic and above their minimum shrunk instead
  // of evicted, each by as few pods as still let `preemptor` in.
  std::vector<Victim> PreferShrinking(const WorkloadState& preemptor, const Assignment& assignment,
                                      std::vector<Victim> victims, PlacementOracle& oracle);
  bool PreemptorFits(const WorkloadState& preemptor, const Assignment& assignment,
                     const std::vector<Victim>& victims, bool allow_borrowing,
                     PlacementOracle& oracle);
  // Kueue quota an assignment charges (count x per-pod request per assigned flavor).
  Result<FrAmounts> AssignmentUsage(const WorkloadState& ws, const Assignment& assignment) const;

  // admission_quiet.cc: a capacity change unparks every Kueue queue, but a cohort
  // tree whose every pending workload was last found short of quota, at the
  // generation it still has, with nothing queued or removed since, would find each
  // one short again with no side effect: its queues stay parked.
  struct QuietRoot {
    int64_t gen = -1;  // -1: not quiet
    uint64_t changes = 0;
  };
  void BeginQuiet(Cycle& cycle);  // resolves deferred unparks, notes the start state
  void EndQuiet(const Cycle& cycle);
  uint64_t QueueChanges(NodeId root) const;
  bool Quiet(NodeId root) const;
  std::vector<QuietRoot> quiet_;  // by root NodeId
  std::vector<char> unpark_due_;  // by root NodeId: NotifyCapacityChanged deferred
  // Due at every root (NotifyCapacityChanged: once per finish or eviction, so not a
  // write per tree node each time).
  bool unpark_all_due_ = false;
  bool UnparkDue(NodeId root) const {
    return unpark_all_due_ ||
           (static_cast<size_t>(root) < unpark_due_.size() && unpark_due_[root] != 0);
  }

  // fair_sharing.cc: Kueue's fair-sharing order of heads (a tournament up the tree).
  void FairSharingOrder(std::vector<Entry>& entries);

  std::vector<ClusterQueueSpec> cqs_;
  std::vector<int32_t> cq_by_name_;    // ClusterQueue indices sorted by name
  std::vector<int32_t> cq_name_rank_;  // each ClusterQueue's place in cq_by_name_
  std::vector<PendingQueue> cq_pending_;
  // Admitted workloads per ClusterQueue, in key order; the keys view the states'
  // own keys, so walking them needs no lookup by key.
  std::vector<std::map<std::string_view, const WorkloadState*>> cq_admitted_;
  std::vector<std::vector<int32_t>> cqs_by_root_;  // by root NodeId, sized by the tree
  std::vector<NodeId> cq_root_;                    // root of each ClusterQueue's cohort tree
  std::vector<int64_t> root_gen_;                  // by NodeId: last usage/config change there
  // By NodeId: last change of the set of workloads admitted there (Charge, Release),
  // which is all a tree's candidate lists read; a reservation or quota change moves
  // root_gen_ only.
  std::vector<int64_t> admitted_gen_;
  int64_t generation_ = 0;
  // AdmittedInRoot's lists by root, with the admitted_gen_ each was built at. Its
  // views point into workloads_ (node-based: they stay valid until a release, which
  // bumps the generation). Charge and Release patch a list that was current before
  // their own generation bump (AdmittedChanged), so an admission does not make
  // the next preemption search rebuild its tree's list from every admitted state.
  // By root NodeId, sized by the tree; gen -1: not built.
  mutable std::vector<std::pair<int64_t, std::vector<PreemptionCandidate>>> admitted_by_root_;
  AdmittedIndex admitted_index_;      // cq_admitted_ by resource, for has_candidates
  std::vector<int64_t> node_weight_;  // fairSharing.weight (milli) by NodeId
  VolcanoProportion volcano_;
  std::vector<PendingQueue> vq_pending_;
  std::vector<std::set<std::string>> vq_admitted_;
  PendingQueue no_queue_pending_;
  std::set<std::string> no_queue_admitted_;
  std::map<std::string, LocalQueueState> local_queues_;  // by "namespace/name"
  // The labels of the Namespaces the configuration has, by name (namespaceSelector).
  std::unordered_map<std::string, model::StringMap> namespace_labels_;
  QuotaTree tree_;
  FlavorCatalog flavors_;
  std::unordered_map<std::string, WorkloadState> workloads_;  // lookup only
  std::set<std::string> physically_parked_;
  // Preemptors held (their queue stopped or gone) while nodes were nominated for
  // them: RunCycle ends those nominations through the oracle first.
  std::vector<std::string> nominations_to_end_;
  // Some of them may be parked with kReasonNodesNominated (false: none are), so a
  // nomination's end scans physically_parked_ only when it can find one.
  bool nomination_waiters_ = false;
  std::set<std::string> draining_;  // evicted for HoldAndDrain, not yet requeued
  int64_t admit_seq_ = 0;
  bool fair_sharing_ = false;
  model::FairSharingConfig fair_sharing_config_;
  // Volcano actions and plugins in force (SchedulerConfiguration, or mapped from
  // volcano-scheduler.conf): preempt, reclaim, drf job order, sla.
  model::VolcanoSchedulingConfig volcano_cfg_;
};

}  // namespace muster::admission
