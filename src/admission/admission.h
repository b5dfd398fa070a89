// Public contract of the admission layer (the engine depends only on this file).
// Admission decides whether and when a whole workload may start and whose quota it
// uses: queues (Kueue ClusterQueue/LocalQueue/Cohort and Volcano Queue in one tree),
// flavor assignment, borrowing and lending, preemption and reclaim, fair sharing.
// It never touches nodes itself: it asks a PlacementOracle, so it never admits what
// cannot be placed. No I/O; deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admission/admission_snapshot.h"
#include "core/clock.h"
#include "core/flat_map.h"
#include "core/resource_list.h"
#include "core/status.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::admission {

// The flavor chosen for each resource of one pod set.
struct PodSetAssignment {
  std::string pod_set;
  int32_t count = 0;  // pods admitted (partial admission may lower it)
  // resource name -> flavor name; a few entries, built for every head of a cycle
  FlatMap<std::string, std::string> flavors;
};

struct Assignment {
  std::vector<PodSetAssignment> pod_sets;  // same order as Workload::pod_sets
  bool borrows = false;                    // uses quota beyond the ClusterQueue's nominal
};

// Preemption detail, named as Kueue (and Volcano) name them in CONTRACT section 3.
inline constexpr const char* kInClusterQueue = "InClusterQueue";
inline constexpr const char* kInCohortReclamation = "InCohortReclamation";
inline constexpr const char* kInCohortFairSharing = "InCohortFairSharing";
inline constexpr const char* kInCohortReclaimWhileBorrowing = "InCohortReclaimWhileBorrowing";
inline constexpr const char* kVolcanoReclaim = "VolcanoReclaim";
inline constexpr const char* kVolcanoPreempt = "VolcanoPreempt";

struct Victim {
  Victim() = default;
  Victim(std::string key, std::string why, std::vector<int32_t> shrink = {})
      : workload_key(std::move(key)), detail(std::move(why)), shrink_to(std::move(shrink)) {}

  std::string workload_key;
  std::string detail;  // one of the names above
  // Added (elastic workloads): non-empty = shrink the victim to these pods per pod
  // set (its highest-index pods stop) instead of evicting it: it runs above its
  // minimum and giving up those pods lets the preemptor in.
  std::vector<int32_t> shrink_to;
};

// Victims as the planners take them: the keys evicted whole, and the shrunk ones
// with the pods each keeps per pod set.
struct SplitVictims {
  explicit SplitVictims(const std::vector<Victim>& victims) {
    for (const Victim& v : victims) {
      if (v.shrink_to.empty()) {
        evicted.push_back(v.workload_key);
      } else {
        shrunk.emplace_back(v.workload_key, v.shrink_to);
      }
    }
  }
  std::vector<std::string> evicted;
  std::vector<std::pair<std::string, std::vector<int32_t>>> shrunk;
};

struct QueueInfo {
  std::string local_queue;    // "" when none
  std::string cluster_queue;  // Kueue ClusterQueue, or the Volcano queue name
  bool volcano = false;
  // Names a queue (what QueueOf answers for a workload admission does not know: none).
  bool known() const { return !local_queue.empty() || !cluster_queue.empty(); }
};

// A pending reason's text. The admitter interns the ones that repeat (the heads of a
// queue short of the same quota) and hands them on shared: see Decision::text.
struct PendingText {
  std::string reason;
  std::string message;
};

struct Decision {
  enum class Kind {
    kAdmit,    // quota reserved and placement confirmed by the oracle: start it
    kPreempt,  // evict `victims`; the workload stays pending until they are gone
    kPending,  // cannot be admitted now; reason/message say why
    // Evict the admitted workload `workload_key` itself (reason says why, e.g.
    // ClusterQueueStopped for a HoldAndDrain stop policy); the engine then calls
    // Requeue on it. Added after the first version of this contract.
    kEvict,
  };
  Kind kind = Kind::kPending;
  std::string workload_key;
  Assignment assignment;        // kAdmit, kPreempt
  std::vector<Victim> victims;  // kPreempt
  std::string
      reason;  // machine-readable: QuotaExceeded, NoFit, Unschedulable, ClusterQueueStopped...
  std::string message;  // one line for `describe` / pendingReason
  // kPending from the admitter: the same text as reason/message, the admitter's shared
  // copy (null where it has none), so a holder compares and keeps a pointer instead of
  // the strings.
  std::shared_ptr<const PendingText> text;
  // The handle the workload was enqueued with (Admitter::Enqueue's `owner`; the
  // engine passes its record), so applying a decision needs no lookup by key. Null
  // for workloads enqueued without one.
  void* owner = nullptr;
  // kAdmit: the queues it was admitted through (what Admitter::QueueOf answers), so
  // the engine records them without asking by key.
  QueueInfo queue;
};

// Pending reason of a workload that would fit only on nodes nominated for a
// preemptor of equal or higher priority (PlacementOracle::Nominate).
inline constexpr const char* kReasonNodesNominated = "NodesNominated";

// What the engine answers about physical placement. Implemented by the engine over
// placement/, so admission and placement stay independent layers.
class PlacementOracle {
 public:
  virtual ~PlacementOracle() = default;

  struct Check {
    bool fits = false;
    std::string reason;   // when !fits
    std::string message;  // when !fits
  };
  // Could the gang be placed with these flavors if `assume_evicted` were gone?
  virtual Check CanPlace(const model::Workload& workload, const Assignment& assignment,
                         const std::vector<std::string>& assume_evicted) = 0;
  // Of `candidates` (in preference order), the smallest set whose eviction lets the
  // gang fit on real nodes; nullopt if none does.
  virtual std::optional<std::vector<std::string>> PhysicalVictims(
      const model::Workload& workload, const Assignment& assignment,
      const std::vector<std::string>& candidates) = 0;
  // The admitter admitted the workload with this assignment: bind the placement the
  // last CanPlace found for it now, so the rest of the cycle sees it.
  virtual void Commit(const model::Workload& workload, const Assignment& assignment) = 0;

  // `workload` preempts `victims` to run with `assignment`: the nodes it would use
  // once they are gone are nominated for it (kube-scheduler's nominatedNodeName) and
  // kept from workloads of no higher priority until it is admitted (Commit) or
  // Unnominate, so none of them takes the room the eviction makes. The default
  // nominates nothing.
  // A workload that would fit only on nodes nominated for another is pending with
  // kReasonNodesNominated; it is tried again when a nomination ends.
  virtual void Nominate(const model::Workload& /*workload*/, const Assignment& /*assignment*/,
                        const std::vector<Victim>& /*victims*/) {}
  virtual void Unnominate(const std::string& /*workload_key*/) {}

  // Added (elastic victims): could the gang be placed if `assume_evicted` were gone
  // and each workload of `shrink_to` kept only its lowest-index pods, that many per
  // pod set? The default answers no, so victims are evicted whole.
  virtual Check CanPlaceShrinking(
      const model::Workload& /*workload*/, const Assignment& /*assignment*/,
      const std::vector<std::string>& /*assume_evicted*/,
      const std::vector<std::pair<std::string, std::vector<int32_t>>>& /*shrink_to*/) {
    return Check{false, "Unschedulable", "this oracle cannot plan with shrunk workloads"};
  }
};

// Where a workload is queued, for output.
class Admitter {
 public:
  virtual ~Admitter() = default;

  // Room for `workloads` known workloads, so their Enqueue does not rehash; a hint.
  virtual void Reserve(size_t workloads) { (void)workloads; }
  // A new (or requeued) workload waits for admission from `now`; the admitter keeps
  // a copy of it.
  void Enqueue(const model::Workload& workload, Time now) {
    Enqueue(std::make_shared<const model::Workload>(workload), now, nullptr);
  }
  // The same without a copy: the admitter reads `workload` until it is removed or
  // enqueued again, and the caller does not change it meanwhile (the engine passes
  // its records' workloads, which never move; workload_record.h). `owner` is the
  // caller's handle for it, opaque here, handed back in every Decision about it.
  virtual void Enqueue(std::shared_ptr<const model::Workload> workload, Time now, void* owner) = 0;
  // The workload is gone (deleted or finished): release any quota it holds.
  virtual void Remove(const std::string& workload_key) = 0;
  // The workload was evicted: release its quota and requeue it (Kueue requeues
  // evicted workloads with their original creation time unless configured otherwise).
  virtual void Requeue(const std::string& workload_key, Time now) = 0;
  // Something changed that may make parked (inadmissible) workloads admissible:
  // capacity freed, nodes added, configuration changed.
  virtual void NotifyCapacityChanged() = 0;

  // One scheduling cycle. Heads are taken from every queue (more than one per
  // queue where possible), ordered as Kueue orders them, assigned flavors, checked
  // against quota up the cohort tree and against the oracle. Admitted workloads have
  // their quota charged before the next one is considered. Decisions come back in
  // the order they were made.
  virtual std::vector<Decision> RunCycle(Time now, PlacementOracle& oracle) = 0;
  // The same into `out`, emptied first, for a caller that keeps it from one cycle to
  // the next: its storage is reused instead of a new vector grown for every cycle's
  // decisions (thousands of 240-byte values).
  virtual void RunCycleInto(std::vector<Decision>& out, Time now, PlacementOracle& oracle) {
    out = RunCycle(now, oracle);
  }
  // From now on, decide without the shortcuts that must not change any decision
  // (queues sleeping through runs of like heads, flavor assignments shared or kept,
  // per-tree caches): slower, for checking that they do not (`muster simulate
  // --no-shortcuts`, bench/decisions_check.sh).
  virtual void DisableShortcuts() {}

  virtual QueueInfo QueueOf(const std::string& workload_key) const = 0;
  // Latest pending reason of a workload that is not admitted (nullopt when admitted
  // or unknown).
  virtual std::optional<Decision> PendingReason(const std::string& workload_key) const = 0;

  // Quota is never over-committed; every pending workload has a reason. Empty = fine.
  virtual std::vector<std::string> CheckInvariants() const = 0;

  // Added: the physical total Volcano's proportion plugin divides among queues
  // (sum of allocatable of schedulable, ready nodes). MakeAdmitter starts from the
  // manifests' nodes; call this when nodes fail, recover or are added.
  virtual void SetClusterCapacity(const ResourceList& /*total*/) {}

  // Added: a ClusterQueue's spec.stopPolicy changed at runtime. HoldAndDrain evicts
  // (kEvict, reason ClusterQueueStopped) what the queue admitted on the next cycle
  // and holds its pending workloads; Hold only holds them; None resumes admission.
  // NotFound for an unknown queue. `terminating`: the queue is being deleted (what
  // waits is held as Kueue says: "terminating or missing").
  virtual Status UpdateStopPolicy(const std::string& cluster_queue, model::StopPolicy /*policy*/,
                                  bool /*terminating*/ = false) {
    return FailedPrecondition("this admitter cannot stop ClusterQueue " + cluster_queue);
  }

  // Added: a LocalQueue created or edited (its stopPolicy: spec.clusterQueue is
  // immutable, as in Kueue). Workloads held for it (LocalQueueNotFound,
  // LocalQueueStopped) queue again, or its pending ones are held when it stops;
  // HoldAndDrain evicts what it admitted on the next cycle. FailedPrecondition,
  // changing nothing, when its clusterQueue changed: the caller rebuilds.
  virtual Status PutLocalQueue(const model::LocalQueue& lq) {
    return FailedPrecondition("this admitter cannot add LocalQueue " + lq.meta.name);
  }
  // Added: a LocalQueue deleted. Its pending workloads wait (LocalQueueNotFound);
  // what it admitted keeps its quota and runs on, as in Kueue. NotFound.
  virtual Status RemoveLocalQueue(const std::string& /*namespace_*/, const std::string& name) {
    return FailedPrecondition("this admitter cannot remove LocalQueue " + name);
  }

  // A Namespace created or its labels edited, or deleted: the pending workloads of it
  // are routed again, so a ClusterQueue's namespaceSelector reads its labels now (as
  // Kueue requeues them); what is admitted runs on. Without a Namespace object a
  // namespace has only its name label.
  virtual Status PutNamespace(const model::Namespace& ns) {
    return FailedPrecondition("this admitter cannot add Namespace " + ns.meta.name);
  }
  virtual Status RemoveNamespace(const std::string& name) {
    return FailedPrecondition("this admitter cannot remove Namespace " + name);
  }

  // Added: a ClusterQueue's or Cohort's quotas (nominalQuota, borrowingLimit,
  // lendingLimit) changed and nothing else of it did. Its resource groups must name
  // the same resources and flavors as before. Admitted workloads stay; waiting ones
  // are looked at again. FailedPrecondition, changing nothing, when the groups
  // differ otherwise or what is admitted would no longer fit: the caller rebuilds.
  virtual Status UpdateQuotas(const std::string& name,
                              const std::vector<model::ResourceGroup>& /*groups*/) {
    return FailedPrecondition("this admitter cannot update the quotas of " + name);
  }

  // Added: takes over a workload that is already admitted and running (server
  // restart, configuration change): enqueues it (or takes it out of its pending
  // queue when Enqueue already saw it) and charges exactly `assignment` (flavors
  // per pod set, counts) to its queue as if admitted now at `now`, without asking
  // the oracle. Fails, changing nothing, when its queue is unknown/held, a flavor
  // or resource in the assignment is not in the queue's quota, or charging it
  // would exceed what the queue may use (nominal + borrowing limits up the cohort,
  // as the normal fit check computes): quota is never over-committed. Volcano
  // queues charge `allocated` and fail beyond capability (deserved is not checked:
  // reclaim corrects an over-deserved queue); no-queue workloads are just recorded
  // as admitted. FailedPrecondition for state that forbids it, InvalidArgument
  // when the assignment does not match the workload's pod sets.
  Status Adopt(const model::Workload& workload, const Assignment& assignment, Time now) {
    return Adopt(std::make_shared<const model::Workload>(workload), assignment, now);
  }
  // Adopt without a copy, as Enqueue above.
  virtual Status Adopt(const std::shared_ptr<const model::Workload>& workload,
                       const Assignment& /*assignment*/, Time /*now*/) {
    return FailedPrecondition("this admitter cannot adopt " + workload->key);
  }

  // Added: the numbers behind the decisions (quota, usage, availability, shares, queue
  // order) for dashboards and explanations (admission_snapshot.h). Read only.
  virtual AdmissionSnapshot Snapshot() const { return {}; }
  // Added (elastic workloads, workloads/elastic.h): could the admitted workload
  // run with `assignment` (its flavors, other counts) instead of what it holds?
  // Kueue: the usage of the new counts, its current usage released, within what
  // its ClusterQueue may use now (nominal, borrowing and lending limits up the
  // cohort) with the flavors it has (Kueue's workload slices keep them); in a
  // StrictFIFO queue no pending workload may be ahead of the new pods. Volcano:
  // the added pods within the queue's capability and deserved share. Never while
  // it was picked as a victim of a preemptor that is not admitted yet. Changes
  // nothing; FailedPrecondition says why not, InvalidArgument for a wrong shape.
  virtual Status CheckResize(const std::string& workload_key, const Assignment& /*assignment*/) {
    return FailedPrecondition("this admitter cannot resize " + workload_key);
  }
  // Charges `assignment` instead of what the workload holds: after CheckResize
  // said yes (growth), or to shrink it (always allowed).
  virtual Status Resize(const std::string& workload_key, const Assignment& /*assignment*/) {
    return FailedPrecondition("this admitter cannot resize " + workload_key);
  }
};

// Builds the queue tree from the manifests' ClusterQueues, LocalQueues, Cohorts,
// ResourceFlavors, Volcano Queues and configuration.
Result<std::unique_ptr<Admitter>> MakeAdmitter(const model::ManifestSet& manifests);

}  // namespace muster::admission
