// Engine: the scheduling cycle shared by every mode. It owns the workloads and
// their lifecycle phases, the physical cluster (placement::ClusterState), the queue
// tree (admission::Admitter) and the gang planner. Events mutate the state between
// cycles; RunCycle() runs admission (which asks placement through the engine's
// PlacementBridge) until nothing changes any more at the current time, and applies
// the decisions: bind and start, or evict victims. No I/O; deterministic.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "admission/admission.h"
#include "core/clock.h"
#include "core/status.h"
#include "engine/decision_log.h"
#include "engine/executor.h"
#include "engine/flavor_injection.h"
#include "engine/lifecycle.h"
#include "engine/placement_bridge.h"
#include "engine/record_table.h"
#include "engine/workload_record.h"
#include "model/manifest_set.h"
#include "placement/placement.h"

namespace muster::engine {

struct EngineOptions {
  // Run CheckInvariants() after every cycle and fail the cycle when one breaks.
  bool check_invariants = false;
  // Admission cycles at one instant before the engine declares it cannot settle.
  int max_cycles_per_instant = 1000;
  // Cycles one RunCycle() call may run before returning (0: until settled). A
  // control plane bounds its steps with it: a preemption cascade at scale needs
  // hundreds of cycles, each over every pending workload, and arrivals wait for
  // the step. What is left runs in the next call (Settled() is false meanwhile),
  // with the arrivals taken in between, as Kueue's scheduler takes them between
  // its cycles.
  int max_cycles_per_call = 0;
  // Pod readiness (Kueue's waitForPodsReady) is reported through SetPodsReady
  // (serve, kube). Otherwise a gang counts as ready once it is bound (simulation).
  bool pods_ready_reported = false;
};

// The lower layers the engine drives; injectable for tests.
struct EngineParts {
  std::unique_ptr<admission::Admitter> admitter;
  std::unique_ptr<placement::ClusterState> cluster;
  std::unique_ptr<placement::GangPlanner> planner;
};

// Builds the admitter, cluster state and planner from decoded manifests.
Result<EngineParts> BuildEngineParts(const model::ManifestSet& manifests);

class Engine {
 public:
  // `workloads` in input order (their creation order when times tie).
  Engine(const model::ManifestSet& manifests, std::vector<model::Workload> workloads,
         EngineParts parts, const Clock& clock, EngineOptions options = {});
  // Builds workloads (workloads::BuildWorkloads) and parts from the manifests.
  static Result<std::unique_ptr<Engine>> Create(const model::ManifestSet& manifests,
                                                const Clock& clock, EngineOptions options = {});

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Not owned; may be null (then starts and stops are only recorded).
  void SetExecutor(Executor* executor) { executor_ = executor; }

  // ---- Events (all at clock.Now()) ----
  // The workload is created and waits for admission.
  Status Submit(const std::string& key);
  // Its pods succeeded: free quota and nodes.
  Status Succeed(const std::string& key);
  // Its pods failed (not its node): the lifecycle policy restarts or fails it.
  // `directive`: what the job's own failure policy decided instead (JobSet rules).
  Status FailPods(const std::string& key, const std::string& message,
                  FailureDirective directive = FailureDirective::kPolicy);
  // A Job's own failure rules (engine_job_policy.cc; serve's executor and reconciler
  // apply them): FailJob fails it at once, whatever its restart budget, with `reason`
  // for its Failed condition (PodFailurePolicy, DeadlineExceeded); a workload pending
  // between restarts fails too. RestartUncounted restarts a running gang without
  // counting a failure (a podFailurePolicy Ignore rule).
  Status FailJob(const std::string& key, const std::string& reason, const std::string& message);
  Status RestartUncounted(const std::string& key, const std::string& message);
  // The node is gone: its pods are lost (eviction reason NodeFailure) and each
  // job's lifecycle policy requeues or fails it. `detail` says what happened.
  Status NodeLost(const std::string& node, const std::string& detail);
  // The node is back and takes pods again.
  Status NodeBack(const std::string& node);
  // The node takes no new pods but keeps its running ones (spot reclaim notice).
  Status CordonNode(const std::string& node);
  // Placement scoring / engine settings changed.
  void ConfigurationChanged(const model::SchedulerConfiguration& config);
  // Every pod of the running workload is ready (Kueue's PodsReady condition), or
  // one lost its readiness. Acted on only with waitForPodsReady enabled
  // (pods_ready.cc); ignored for a workload that is not running.
  Status SetPodsReady(const std::string& key, bool ready);
  // The earliest instant a waitForPodsReady timeout or requeue backoff falls due
  // (the next RunCycle at or after it acts); nullopt when none is pending.
  std::optional<Time> NextPodsReadyDeadline() const;
  // The earliest instant anything timed falls due: that, or a gang's eviction for a
  // NoExecute taint it tolerates for tolerationSeconds (taint_eviction.cc). Callers
  // run a cycle at or after it.
  std::optional<Time> NextTimedEvent() const;
  // What a Workload object recorded of waitForPodsReady's requeues (a restarted
  // server): status.requeueState and spec.active=false.
  struct RequeueState {
    int32_t count = 0;
    std::optional<Time> requeue_at;  // backoff end: out of line until then
    std::optional<Time> evicted_at;  // the last PodsReadyTimeout eviction
    bool deactivated = false;
  };
  // Restores it on a pending, submitted workload (taken out of line while its
  // backoff runs or for good when deactivated); ignored for others. NotFound.
  Status RestoreRequeueState(const std::string& key, const RequeueState& state);

  // ---- Runtime changes, for a long-running server (engine_runtime.cc) ----
  // The workload is new: its record is created, not yet submitted (Submit queues
  // it). Queue-order ties fall to workload.meta.order, so give each new workload a
  // larger order than the ones before. AlreadyExists if the key is known.
  Status AddWorkload(model::Workload workload);
  // The job was deleted: stops its gang if active (executor Stopped with
  // StopCause::kDeleted), releases its quota and nodes and forgets its record and
  // pending reasons (decision-log entries stay). O(1) amortised (RecordTable: the
  // other records stay where they are). NotFound if unknown.
  Status RemoveWorkload(const std::string& key);
  // Takes over a submitted, pending workload that already runs with `assignment`
  // on `plan` (nodes and GPU indices exactly as planned before, node indices of
  // this engine's cluster(): map names with cluster().FindNode). Commits the plan
  // to the ClusterState (fails if a node is gone, not ready or unschedulable, or
  // the pods no longer fit), then Admitter::Adopt (rolled back on failure), and
  // marks it Running with admit_time/start_time as given. The executor is NOT told
  // to start it: it already runs. On failure nothing changes (the workload stays
  // pending and may be admitted normally); the caller requeues or stops it.
  // NotFound, FailedPrecondition (state forbids it), InvalidArgument (the plan or
  // assignment does not match the workload's pod sets).
  Status Adopt(const std::string& key, const admission::Assignment& assignment,
               placement::GangPlan plan, Time admitted_at, Time started_at);

  // The node object or its NodeResourceTopology (`numa`, null for none) changed in
  // place (engine_runtime.cc): cordoned or uncordoned, labels, taints, annotations,
  // allocatable, devices, NUMA zones. Running gangs stay where they run (a cordoned
  // node keeps its pods); pending workloads see the node as it is now from the next
  // cycle. NotFound for an unknown node; FailedPrecondition, changing nothing, when
  // the change needs the cluster rebuilt (a running pod no longer fits the node, or
  // labels changed while HyperNodes exist): then Reconfigured takes it.
  Status UpdateNode(const model::Node& node, const model::NodeTopology* numa);
  // A node joined (engine_runtime.cc), with its NodeTopology if it has one: it takes
  // pods from the next cycle and adds to what Volcano's proportion divides. No other
  // node, gang or queue is touched. AlreadyExists, or FailedPrecondition (changing
  // nothing) when the cluster must be rebuilt (HyperNodes select members by label).
  Status AddNode(const model::Node& node, const model::NodeTopology* numa);
  // A node left (its Node object was deleted; engine_runtime.cc). Each gang with
  // pods there is stopped (executor Stopped, kEvicted) and requeued with reason
  // NodeFailure, as Kubernetes' pod garbage collector deleting the pods of a
  // deleted node makes Kueue do; an admitted gang that has not started waits again.
  // No other node, gang or queue is touched. NotFound for an unknown node;
  // FailedPrecondition when this ClusterState cannot drop a node in place (its gangs
  // are requeued all the same; Reconfigured then takes the rest).
  Status RemoveNode(const std::string& node);
  // The Volcano HyperNodes changed (engine_runtime.cc): the network domains are
  // resolved again over the nodes; running gangs stay where they run (Volcano does
  // not move them), pending ones see the new domains from the next cycle.
  // FailedPrecondition, changing nothing, when the cluster must be rebuilt.
  Status SetHyperNodes(const std::vector<model::HyperNode>& hyper_nodes);
  // A ClusterQueue's or Cohort's quotas changed in place and nothing else of it
  // (Admitter::UpdateQuotas): admitted gangs keep their quota, waiting workloads are
  // looked at again in the next cycle. NotFound, or FailedPrecondition (changing
  // nothing) when the change needs the queues rebuilt: then Reconfigured takes it.
  Status UpdateQuotas(const std::string& queue, const std::vector<model::ResourceGroup>& groups);
  // A ClusterQueue's spec.stopPolicy changed in place (Admitter::UpdateStopPolicy):
  // Hold and HoldAndDrain hold its pending workloads (HoldAndDrain evicts what it
  // admitted on the next cycle, reason ClusterQueueStopped); None queues them again.
  // NotFound for an unknown queue. `terminating`: it is being deleted (held as Kueue
  // holds a terminating queue's workloads).
  Status SetStopPolicy(const std::string& cluster_queue, model::StopPolicy policy,
                       bool terminating = false);
  // A LocalQueue created or edited (its stopPolicy), or deleted, in place
  // (Admitter::PutLocalQueue / RemoveLocalQueue): workloads waiting for it queue
  // again, or wait with the reason (LocalQueueNotFound, LocalQueueStopped), from the
  // next cycle; what it admitted keeps running (HoldAndDrain evicts it then).
  // FailedPrecondition (changing nothing) when the queues must be rebuilt; NotFound.
  Status PutLocalQueue(const model::LocalQueue& lq);
  Status RemoveLocalQueue(const std::string& namespace_, const std::string& name);
  // A Namespace created, relabelled or deleted (Admitter::PutNamespace /
  // RemoveNamespace): its pending workloads are routed again against the
  // ClusterQueues' namespaceSelectors from the next cycle. NotFound.
  Status PutNamespace(const model::Namespace& ns);
  Status RemoveNamespace(const std::string& name);

  // The cluster, queue or flavor configuration changed (engine_reconfigure.cc): a new
  // engine with `parts`, built from `manifests`, takes over every workload of `old`
  // (records, order, history, pending reasons, decision log) in memory. Running gangs
  // stay where they run: their plans are committed to the new cluster (node indices
  // mapped by name) and their assignments charged to the new queues, without telling
  // the executor. A gang whose node is gone, or that the new nodes or queues no longer
  // take, is stopped (executor Stopped, kEvicted) and requeued with reason NodeFailure
  // or ConfigurationChanged; admitted gangs still waiting for nodes and pending
  // workloads queue again at their submission time.
  static std::unique_ptr<Engine> Reconfigured(std::unique_ptr<Engine> old,
                                              const model::ManifestSet& manifests,
                                              EngineParts parts);
  // Only the queue configuration changed (ClusterQueues, Cohorts, ResourceFlavors,
  // Volcano Queues created, edited or deleted; engine_reconfigure.cc): as
  // Reconfigured, but `old`'s cluster state and planner carry over as they are, so
  // running gangs keep their bound plans without being committed again (the cost is
  // admission's, not O(nodes + running pods) of placement). Only `admitter` is new;
  // a running gang the new queues no longer take is evicted (ConfigurationChanged).
  static std::unique_ptr<Engine> Readmitted(std::unique_ptr<Engine> old,
                                            const model::ManifestSet& manifests,
                                            std::unique_ptr<admission::Admitter> admitter);

  // The decision-log entries since the last call, moved out (a long-running server
  // consumes them; the log would otherwise grow for ever).
  std::vector<LogEntry> TakeLog() { return log_.Take(); }

  // Admission and placement until nothing changes at clock.Now().
  Status RunCycle();

  // Every broken invariant, one line each; empty when all hold.
  std::vector<std::string> CheckInvariants() const;

  // ---- Views ----
  // Every record, in the order the workloads were added.
  const RecordTable& workloads() const { return records_; }
  const WorkloadRecord* Find(const std::string& key) const;
  const DecisionLog& log() const { return log_; }
  const placement::ClusterState& cluster() const { return *parts_.cluster; }
  const admission::Admitter& admitter() const { return *parts_.admitter; }
  // The starving gang's reservation, if any (reservations.h).
  const ReservationBook& reservations() const { return bridge_.reservations(); }
  // The record's workload as its latest admission runs it: its flavors' node labels
  // and tolerations in its pod templates, as Kueue writes them (flavor_injection.h).
  model::Workload AdmittedWorkload(const WorkloadRecord& record) const {
    return WithFlavorInjection(record.workload, record.assignment, bridge_.flavors());
  }
  // Where the workload is queued (falls back to its own labels when admission
  // does not know it).
  admission::QueueInfo QueueOf(const std::string& key) const;
  // One line: why a workload that is not running waits (or why it failed).
  std::string PendingMessage(const std::string& key) const;
  // Cycles run so far (admission passes, not instants).
  int64_t cycles() const { return cycles_; }
  // False when the last RunCycle() stopped at max_cycles_per_call with decisions
  // still changing: the next call goes on.
  bool Settled() const { return settled_; }
  // Changes whenever a record's phase, assignment, plan or pending reason may have
  // changed (it may also change when nothing visible did): equal values mean the
  // workloads' status need not be written again.
  uint64_t generation() const { return generation_; }

 private:
  WorkloadRecord* FindMutable(const std::string& key);
  Time Now() const { return clock_.Now(); }

  // The decision's assignment and messages are moved into the record and the log.
  bool ApplyDecision(admission::Decision& decision);
  bool ApplyAdmit(WorkloadRecord& record, admission::Decision& decision);
  bool ApplyPreempt(const admission::Decision& decision);
  // Admitted workloads whose gang is not bound yet try to bind.
  bool PlaceAdmitted();
  void Start(WorkloadRecord& record, placement::GangPlan plan);
  // Releases the gang's nodes and tells the executor.
  void StopGang(WorkloadRecord& record, StopCause cause);
  // Evicts an active workload and requeues it.
  void EvictAndRequeue(WorkloadRecord& record, Eviction eviction);
  // A failure of an active workload: restart (requeue) or fail per lifecycle.
  void HandleFailure(WorkloadRecord& record, Eviction eviction, const std::string& event);
  // The active records with pods on node `idx` (named `node`), sorted by key: what a
  // lost or removed node stops. Pods of a workload that is not active are released
  // there and reported (errors_): they should not have been bound.
  std::vector<WorkloadRecord*> GangsOnNode(placement::NodeIndex idx, const std::string& node);
  void LogPending(WorkloadRecord& record, const admission::Decision& decision);
  // The same for a decision applied last: its key and words move into the log.
  void LogPending(WorkloadRecord& record, admission::Decision&& decision);
  bool NotePending(WorkloadRecord& record, const admission::Decision& decision);
  void RememberQueue(WorkloadRecord& record);
  // Reconfigured and Readmitted: `fresh` takes `old`'s workloads. With
  // `placement_kept`, fresh's cluster is old's (plans stay bound); otherwise running
  // plans are committed to fresh's cluster by node name.
  static void CarryOver(Engine& old, Engine& fresh, bool placement_kept);
  // Tells admission the physical total after nodes come and go.
  void UpdateClusterCapacity();
  // Plans bound by admission that no decision took: unbind them, loudly.
  void ReleaseUntaken();

  // ---- waitForPodsReady (pods_ready.cc) ----
  bool PodsReadyEnabled() const { return pods_ready_.enable; }
  // When the active workload times out for readiness; nullopt when it cannot.
  std::optional<Time> ReadyDeadline(const WorkloadRecord& record) const;
  // Timeouts evict (or deactivate), finished backoffs requeue. True if any did.
  bool RunPodsReadyTimers();
  void PodsReadyTimeout(WorkloadRecord& record);
  // blockAdmission: an admitted workload is not ready yet, so no other is admitted.
  bool AdmissionBlocked() const;
  // An admission made while blocked is taken back: quota, nodes, back in line.
  void TakeBackAdmission(WorkloadRecord& record, const admission::Decision& decision);
  // Every workload in line shows why it waits while admission is blocked.
  void MarkBlocked();

  // ---- NoExecute taints (taint_eviction.cc) ----
  struct TaintEviction {
    int64_t after_seconds = 0;  // 0: at once
    std::string detail;         // which node, taint and pod
  };
  struct ScheduledEviction {
    Time due = 0;
    std::string detail;
  };
  // When the taint manager would evict the running gang's earliest pod for a
  // NoExecute taint of its node; nullopt when none would.
  std::optional<TaintEviction> NoExecuteVerdict(const WorkloadRecord& record) const;
  // Evicts the running gang now (`evict_now`, and a pod does not tolerate a taint;
  // true then), schedules its eviction, or cancels a scheduled one.
  bool ApplyNoExecute(WorkloadRecord& record, bool evict_now);
  // The taints of node `idx` changed: ApplyNoExecute for each gang on it.
  bool NodeTaintsChanged(placement::NodeIndex idx, const std::string& node);
  // Scheduled evictions that fell due. True if one evicted.
  bool RunTaintEvictions();

  // ---- Elastic gangs (elastic.cc) ----
  // Whether the running workload may change size (workloads::IsElastic in its queue)
  // and the executor can start and stop pods of a running gang.
  bool IsElastic(const WorkloadRecord& record) const;
  bool CanResize() const { return executor_ == nullptr || executor_->SupportsResize(); }
  // Running elastic gangs below their counts take what admission left at this
  // instant, in queue order (priority, then the longest running). True if one grew.
  bool GrowElastic();
  bool GrowOne(WorkloadRecord& record);
  // Stops the gang's pods at or above `keep` per pod set (its highest indices) and
  // gives their quota back; it keeps running with the rest.
  void ShrinkGang(WorkloadRecord& record, const std::vector<int32_t>& keep, const Eviction& why);
  // Note whether a started or resized gang can still grow.
  void TrackGrowth(const WorkloadRecord& record);

  const Clock& clock_;
  EngineOptions options_;
  EngineParts parts_;
  PlacementBridge bridge_;
  Executor* executor_ = nullptr;
  RecordTable records_;
  // Why an Admitted workload's gang is not bound yet.
  std::map<std::string, std::string> placement_waits_;
  std::vector<std::string> errors_;  // bugs seen while applying decisions
  // Running elastic gangs below their counts (GrowElastic looks only at these).
  std::set<std::string> growable_;
  // Volcano's drf job order (SchedulerConfiguration volcano.drfJobOrder): elastic
  // gangs with the lower dominant share of what they hold grow first.
  bool drf_growth_order_ = true;
  std::optional<ResourceList> cluster_total_;  // ready, schedulable nodes; lazily
  model::WaitForPodsReadyConfig pods_ready_;   // Kueue Configuration waitForPodsReady
  // Running gangs a tolerated NoExecute taint evicts later, by key.
  std::map<std::string, ScheduledEviction> taint_evictions_;
  bool admission_blocked_ = false;  // as of the last admission pass
  DecisionLog log_;
  // An admission cycle's decisions while RunCycle applies them, empty otherwise: one
  // vector's storage for every cycle instead of one grown per cycle.
  std::vector<admission::Decision> decisions_;
  int64_t cycles_ = 0;
  bool settled_ = true;
  uint64_t generation_ = 0;
};

}  // namespace muster::engine
