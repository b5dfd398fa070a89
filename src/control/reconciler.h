// Reconciler: the one control loop of `muster serve` and `muster kube`. It owns the
// engine and turns object changes into engine events and engine decisions into
// object writes, synchronously and without I/O:
//   - Apply(change) takes one committed change of a watched object (jobs, the
//     configuration kinds, pods, Workloads), in the order the adapter delivers them;
//   - Step() reads back finished writes, reconfigures the engine if configuration
//     objects changed (nodes, queues, flavors, priority classes, scheduler and Kueue
//     configuration: in memory, running gangs stay where they run), runs a cycle when
//     something changed (or the resync interval passed), and submits the writes of
//     what changed to the StatusSink: Workload objects, job status or job
//     suspend/unsuspend, pod bindings, queue status and Events.
// The clock, the sink and (serve) the GangRuntime are injected, so its tests run like
// engine tests: a manual clock, a recording sink, no threads and no sleeps. The
// adapters (server/scheduler_controller.h, kube/kube_controller.h) add a thread, a
// change queue and a sink that writes to the store or to the API server.
//
// Work per Step grows with what changed: only jobs whose engine record, pods or
// object changed since the last Step are looked at (a dirty set fed by the engine's
// decision log, the runtime's changed gangs, pod and job changes and write results).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "control/change.h"
#include "control/event_correlator.h"
#include "control/gang_binder.h"
#include "control/gang_runtime.h"
#include "control/object_reader.h"
#include "control/pod_workloads.h"
#include "control/scheduler_view.h"
#include "control/status_sink.h"
#include "control/store_snapshot.h"
#include "core/clock.h"
#include "engine/engine.h"
#include "model/manifest_set.h"

namespace muster::control {

enum class ReconcilerMode {
  // `muster serve`: muster is the job controller and the kubelet too. The
  // GangRuntime runs the pods; the reconciler writes each job's status as its
  // upstream controller would.
  kServe,
  // `muster kube`: the cluster's job controllers and kubelets run the pods. Admission
  // writes the Workload, then unsuspends the job with its flavors' node labels and
  // tolerations injected (Kueue's job integrations); eviction suspends it, resets
  // status.startTime and restores its templates (Kueue's Stop); muster binds a gang's
  // pods once every one exists; a job is finished when its controller says so.
  kCluster,
};

struct ReconcilerOptions {
  ReconcilerMode mode = ReconcilerMode::kServe;
  // Kueue's manageJobsWithoutQueueName: also admit jobs that name no queue (serve
  // admits every job).
  bool manage_jobs_without_queue_name = false;
  // Pods whose spec.schedulerName is one of these are bound by muster (cluster mode).
  std::vector<std::string> scheduler_names = {"muster"};
  // A cycle runs at least this often (timers: reservations, requeue backoff).
  double resync_seconds = 1.0;
  // ClusterQueue, LocalQueue and Volcano Queue statuses are written at most this
  // often (seconds; 0: after every step that changed them). On a real API server
  // each is a custom-resource write, and their counts move with every admission: a
  // pass that comes sooner leaves them for a later step (the resync comes).
  double queue_status_interval = 0;
  // Engine invariants after every cycle (tests; O(cluster) per cycle).
  bool check_invariants = false;
  // Admission cycles one step may run (EngineOptions::max_cycles_per_call): a
  // step's cost stays bounded, and jobs that arrive during a long preemption
  // cascade get their Workloads at the next step instead of after it.
  int max_cycles_per_step = 16;
  // From a file (`muster kube --config`: a SchedulerConfiguration, or Volcano's
  // volcano-scheduler.conf mapped onto one; a Kueue Configuration): used instead of
  // the configuration objects of those kinds, as `muster simulate --config`.
  std::optional<model::SchedulerConfiguration> scheduler_config;
  std::optional<model::KueueConfiguration> kueue_config;
  // One line per problem or notable action; null: dropped.
  std::function<void(const std::string&)> log;
  // Called with each decision-log entry as it is consumed (serve: metrics).
  std::function<void(const engine::LogEntry&, const engine::Engine&)> on_decision;
};

class Reconciler {
 public:
  struct Stats {
    int64_t cycles = 0;
    int64_t reconfigures = 0;         // in-memory configuration changes (no rebuild)
    int64_t readmissions = 0;         // queue changes: admission rebuilt, placement kept
    int64_t hyper_node_updates = 0;   // HyperNodes changed in place (no reconfiguration)
    int64_t node_updates = 0;         // nodes edited in place (no reconfiguration)
    int64_t node_adds = 0;            // nodes added in place (no reconfiguration)
    int64_t node_removes = 0;         // nodes removed in place (no reconfiguration)
    int64_t quota_updates = 0;        // ClusterQueue / Cohort quotas or stopPolicy, in place
    int64_t decoding_updates = 0;     // PriorityClasses, PodGroups, TrainingRuntimes changed
    int64_t local_queue_updates = 0;  // LocalQueues created, edited or deleted in place
    int64_t writes = 0;               // writes submitted
    int64_t conflicts = 0;            // writes refused with 409 (retried on a fresh object)
    int64_t admitted = 0;             // cluster: jobs unsuspended
    int64_t evicted = 0;              // cluster: jobs suspended (or Volcano pods deleted)
    int64_t bindings = 0;             // cluster: pods bound
    int64_t parked = 0;               // jobs the API server refused to start (4xx)
    size_t jobs = 0;                  // jobs known
    size_t dirty = 0;                 // jobs looked at by the last Step
  };

  // `runtime`: serve's executor (required in kServe, null in kCluster). The sink and
  // the runtime outlive the reconciler.
  Reconciler(const Clock& clock, StatusSink& sink, GangRuntime* runtime, ReconcilerOptions options);
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  // Builds the engine from `view` (the serve store, or the mirror of a cluster) and
  // adopts the gangs that already run where they run: their Workload objects record
  // the admission and placement. At start-up and on leader takeover only; every later
  // change arrives through Apply. `view` is kept for reads (PodGroups, Workloads) and
  // must outlive the reconciler.
  void Build(const ObjectReader& view);

  // One committed change of a watched object, in delivery order.
  void Apply(const Change& change);

  // What is still to do: writes in flight or to retry. The adapter calls Step again
  // when a result or a change arrives, and at least every resync interval.
  struct StepResult {
    bool cycled = false;   // a scheduling cycle ran
    size_t submitted = 0;  // writes submitted by this step
    size_t in_flight = 0;  // writes not yet finished
    bool retry = false;    // something failed and is retried at the next step
    // Write stopped at its budget: call it again (serve: in a new store transaction,
    // so API writes get the store between the parts of a large step).
    bool more = false;
  };
  StepResult Step() {
    Decide();
    return Write();
  }
  // Step in two halves: Decide (results read back, configuration, executor outcomes,
  // the scheduling cycle, its decisions) and Write (the dirty jobs' and queues' writes).
  // Serve holds its store's transaction only around Write: a cycle over thousands of
  // pending jobs inside it held every API request for the cycle's whole length.
  void Decide();
  // Syncs at most `max_jobs` dirty jobs, then returns with `more` set when any are
  // left of this step; the next call goes on where it stopped. The step's outcome
  // (cycled, retry) is reported by the first call.
  // `urgent_only`: only the round's admitted and running jobs (UrgentWritesLeft);
  // the rest waits for a later call.
  StepResult Write(size_t max_jobs = SIZE_MAX, bool urgent_only = false);
  // Jobs of the write round whose gangs are admitted or running and are not written
  // yet: an adapter that cuts a step's writes short (serve) writes these first.
  bool UrgentWritesLeft() const { return !write_round_urgent_.empty(); }

  // Null before Build, or when the configuration never formed a usable engine.
  const engine::Engine* engine() const { return engine_.get(); }
  const Stats& stats() const { return stats_; }
  // Why there is no engine (an unusable configuration); empty when there is one.
  const std::string& engine_error() const { return engine_error_; }
  // What the engine runs with (no jobs).
  const model::ManifestSet& config() const { return config_; }
  // The decisions taken from the engine's log since the last call, oldest first (each
  // step drains the engine's log, so a dashboard view reads them here). At most
  // kMaxUnviewedDecisions are kept: the oldest go first.
  std::vector<engine::LogEntry> TakeUnviewedDecisions() { return std::move(unviewed_decisions_); }
  static constexpr size_t kMaxUnviewedDecisions = 50000;
  // The dashboard's view of the engine now, carrying `previous` forward with the
  // decisions made since it was built (serve and kube publish the same view).
  SchedulerView BuildView(Time now, const SchedulerView* previous) {
    ViewInputs in;
    in.engine = engine();
    in.config = &config();
    in.now = now;
    in.engine_error = engine_error();
    const std::vector<engine::LogEntry> decisions = TakeUnviewedDecisions();
    in.new_decisions = &decisions;
    return BuildSchedulerView(in, previous);
  }
  // The writes believed done were not stored after all (serve: the step's store
  // transaction failed): everything is written again from the next Step on, and the
  // admissions those writes recorded are dropped from TakeRecordedAdmissions.
  void ForgetWrites();
  // Serve: the keys of running gangs whose admission the Writes since the last call
  // recorded (their Workload written with it, or found already holding it). Once the
  // store committed those writes the executor may start the gangs
  // (ServeExecutor::Release): a gang never runs that the store does not say is
  // admitted. Each key once per call; always empty without a runtime.
  std::vector<std::string> TakeRecordedAdmissions();
  // Keys of the jobs muster manages (for tests and status output).
  std::vector<std::string> JobKeys() const;
  // The Workload object of `key` as last written (null when none).
  const nlohmann::json* WrittenWorkload(const std::string& key) const;

 private:
  struct JobState;
  struct ConfigObject;
  struct InFlight;
  struct PodGang;

  // reconciler_jobs.cc
  void ApplyJob(const Change& change);
  // TrainJobs whose runtime is missing: a condition says which, and each is applied
  // again when the configuration (the runtimes) changes.
  void ParkWithoutRuntime(const std::string& id, const Change& change, const std::string& why);
  void RetryWithoutRuntime();
  // Jobs whose Workload cannot be made from the configuration (a PriorityClass or
  // WorkloadPriorityClass that does not exist...): a Warning Event ErrWorkloadCompose
  // says why, as Kueue's job reconciler does, and each is applied again when the
  // configuration changes.
  void ParkUncomposed(const std::string& id, const Change& change, const std::string& why);
  void RetryUncomposed();
  bool Managed(const nlohmann::json& job_object, const model::Workload& workload) const;
  JobState& AddJob(const std::string& id, const Change& change, const model::Workload& workload);
  void SubmitToEngine(JobState& job, model::Workload workload);
  void RemoveJob(std::string key);
  void CheckFinished(JobState& job);
  void AdoptRunning(JobState& job);
  void ApplyPod(const Change& change);
  void ApplyWorkload(const Change& change);

  // reconciler_pods.cc (bare Pods as workloads, pod_workloads.h)
  void ApplyBarePod(const Change& change);
  // Takes `pod` into its gang; false when it is no workload's.
  bool IntakeBarePod(const nlohmann::json& pod);
  // Cluster mode: the binder's view of bare pod "<ns>/<pod>" (nullopt: not one).
  std::optional<PodIdentity> BarePodIdentity(const std::string& pod_id) const;
  // Cluster mode: the pods of a running bare-pod gang all ended: its workload too.
  void CheckPodsFinished(JobState& job);
  // The gang of `key` has all its pods: its job state (not yet in the engine).
  JobState* FormPodJob(const std::string& key);
  // Gangs still short of pods or with a problem: their pods say why.
  void SyncWaitingPodGangs();
  void SyncPodJob(JobState& job);
  void SyncVolcanoPodGroup(PodGang& gang, const engine::WorkloadRecord* record);
  void SetPodsPending(PodGang& gang, const std::string& reason, const std::string& message,
                      const std::string& event_type);
  // The job's workload decoded again (jobs from their object, bare pods from theirs).
  Result<model::Workload> DecodeState(const JobState& job) const;

  // reconciler_orphans.cc (serve: a job deleted with its dependents orphaned leaves
  // its running pods running, each then a one-pod workload adopted where it runs)
  // The job of `key` was deleted (`deleted_job`: its last state): when with the
  // `orphan` finalizer, the executor lets go of its running pods before RemoveJob
  // stops the rest. Returns those pods as they are once unowned.
  std::vector<nlohmann::json> LetGoOrphans(const std::string& key,
                                           const nlohmann::json& deleted_job);
  // After RemoveJob: the pods let go of become bare pods (their gangs form next).
  void TakeInOrphans(const std::vector<nlohmann::json>& pods);
  // The one-pod workload of a pod let go of, just submitted: adopted where the pod
  // runs (Engine::Adopt, then the executor takes its process over).
  void TakeOverOrphan(JobState& job);
  // A pod let go of was deleted before its workload took it over: stopped.
  void ForgetOrphan(const std::string& ns, const std::string& pod);

  // reconciler_config.cc
  bool ApplyConfig(const Change& change);
  void Reconfigure();
  // Edits the named nodes in the engine without reconfiguring it; false when one
  // needs the cluster rebuilt (Engine::UpdateNode).
  bool UpdateNodesInPlace(const std::set<std::string>& names);
  // Adds the named new nodes to the engine the same way (Engine::AddNode).
  bool AddNodesInPlace(const std::set<std::string>& names);
  // Removes the named deleted nodes the same way (Engine::RemoveNode); false also
  // once removed nodes hold too many of the cluster's indexes (kRemovedNodesKept):
  // the rebuild drops them.
  bool RemoveNodesInPlace(const std::set<std::string>& names);
  // Puts the named NodeResourceTopologies, added or edited, in config_, and drops the
  // deleted ones; the nodes of those names that the engine has are then edited in
  // place.
  void SyncTopologies(const std::set<std::string>& names);
  // The usable Node / NodeResourceTopology object of that name, or null.
  const model::Node* NodeObject(const std::string& name) const;
  const model::NodeTopology* TopologyObject(const std::string& name) const;
  // The same for ClusterQueues and Cohorts whose quotas or (ClusterQueue) stop
  // policy alone changed (object ids).
  bool UpdateQuotasInPlace(const std::set<std::string>& ids);
  // config_'s PriorityClasses, WorkloadPriorityClasses, PodGroups and
  // TrainingRuntimes assembled again from the objects: the engine holds none (a job's
  // priority and shape are fixed when it is decoded); jobs waiting for a runtime or
  // their PodGroup are looked at again.
  void SyncDecodingInputs();
  // dirty_ becomes the next write round: write_round_urgent_ and write_round_keys_.
  void StartWriteRound();
  // Moves the jobs of `from` whose gangs are admitted or running to
  // write_round_urgent_ (from dirty_: into the round in progress, ahead of the rest).
  void MoveUrgent(std::set<std::string>& from);
  // The pending jobs of `namespaces` decoded again (their LimitRanges changed) and
  // requeued where their requests or their admissibility moved.
  void ReadjustPending(const std::set<std::string>& namespaces);
  // Queue objects changed beyond what UpdateQuotasInPlace and LocalQueuesInPlace
  // take: admission is rebuilt from the objects, placement kept (Engine::Readmitted).
  // False when the queue configuration is not usable (engine_error_ says why; the
  // engine goes on as it was).
  bool Readmit();
  // The usable HyperNode objects to the engine (Engine::SetHyperNodes) and config_;
  // false when the cluster must be rebuilt.
  bool SyncHyperNodes();
  // After the engine was replaced: the runtime follows it, jobs parked without a
  // runtime are tried again, a cycle and a queue status pass are due.
  void EngineReplaced();
  // The same for LocalQueues deleted ((namespace, name)) and created or edited
  // (object ids) (Engine::RemoveLocalQueue, PutLocalQueue).
  bool LocalQueuesInPlace(const std::set<std::pair<std::string, std::string>>& removed,
                          const std::set<std::string>& put);
  bool NamespacesInPlace(const std::set<std::string>& removed, const std::set<std::string>& put);
  model::ManifestSet AssembleConfig() const;

  // reconciler_sync.cc
  void ApplyResults();
  void ConsumeDecisions();
  void SyncJob(JobState& job);
  void SyncWorkload(JobState& job);
  // The Workload of `job` (running) holds its current admission: see
  // TakeRecordedAdmissions.
  void NoteAdmissionRecorded(const JobState& job);
  void SyncServeJob(JobState& job);
  // Serve: fails the Jobs whose activeDeadlineSeconds passed (reconciler_deadlines.cc).
  // NoteDeadline reads the deadline of a Job whenever its object changes;
  // EnforceDeadlines looks only at the deadlines that fell due.
  void NoteDeadline(const JobState& job);
  void ForgetDeadline(const std::string& key);
  void EnforceDeadlines(Time now);
  bool PodsReady(const JobState& job, const engine::WorkloadRecord& record) const;
  void SyncQueues();
  // Submits `op` for `job` (null: a write of no job); `epoch`: the admission a
  // Workload write records (-1: none).
  uint64_t Submit(JobState* job, WriteOp op, int64_t epoch = -1);
  // An Admit entry without a message, with Kueue's: the queue and the wait.
  engine::LogEntry DescribedAdmission(const engine::LogEntry& entry) const;
  // The v1 Event of a decision (or of a refused start) about the job `ref`.
  void SubmitEvent(const engine::LogEntry& entry, const JobRef& ref);
  // Writes (or, a repeat, updates: EventCorrelator) the v1 Event `event`.
  void SubmitEventObject(nlohmann::json event, const std::string& namespace_);
  void Log(const std::string& line) const;
  std::string Now() const;

  // reconciler_cluster.cc (kCluster)
  void SyncClusterJob(JobState& job);
  void WriteAdmission(JobState& job);
  void WriteStop(JobState& job);
  void BindGang(JobState& job);
  // Elastic gangs in a cluster (reconciler_elastic.cc).
  std::vector<GangPod> GangPodsToBind(const engine::WorkloadRecord& record,
                                      const std::map<std::string, WatchedPod>& pods) const;
  void DeleteShrunkPods(JobState& job);
  void MarkUnboundPods(JobState& job, const engine::WorkloadRecord& record,
                       const std::vector<GangPod>& pods, const BindPlan& plan);
  void SetPodGroupPhase(JobState& job, const std::string& phase);
  bool NodesFree(const engine::WorkloadRecord& record, std::string& why) const;
  void Park(JobState& job, const std::string& why);
  void SyncParkedWorkload(JobState& job);
  void ApplyJobResult(JobState& job, const InFlight& pending, WriteResult& result);
  void ApplyBindResult(JobState& job, const InFlight& pending, WriteResult& result);

  const Clock& clock_;
  StatusSink& sink_;
  GangRuntime* runtime_;
  ReconcilerOptions options_;
  const ObjectReader* view_ = nullptr;

  std::unique_ptr<engine::Engine> engine_;
  uint64_t engines_made_ = 0;  // engine_ instances so far: a new one counts generations anew
  std::string engine_error_;
  model::ManifestSet config_;  // what the engine runs with (no jobs)
  // Configuration objects by "<resource>/<ns>/<name>": what the engine reads of each
  // (to tell real changes from status writes and heartbeats) and its decoded form.
  std::map<std::string, ConfigObject> config_objects_;
  bool config_dirty_ = false;
  // Since the last Reconfigure: nodes added, edited and removed in place (names),
  // NodeResourceTopologies added, edited or deleted (names), queues whose quotas alone
  // changed, LocalQueues put or deleted, whether another queue object changed
  // (admission is rebuilt) and whether anything else changed (any other kind): then
  // the engine is reconfigured as a whole, else only those nodes, quotas and
  // LocalQueues are added, updated or removed.
  std::set<std::string> nodes_added_;
  std::set<std::string> nodes_edited_;
  std::set<std::string> nodes_removed_;
  std::set<std::string> topologies_changed_;
  std::set<std::string> quotas_edited_;           // ClusterQueue and Cohort object ids
  bool decoding_changed_ = false;                 // an object only job decoding reads
  std::set<std::string> limit_range_namespaces_;  // where a LimitRange changed
  std::set<std::string> local_queues_put_;        // LocalQueue object ids
  std::set<std::pair<std::string, std::string>> local_queues_removed_;  // (namespace, name)
  std::set<std::string> namespaces_put_;                                // Namespace object ids
  std::set<std::string> namespaces_removed_;                            // names
  bool admission_rebuild_ = false;    // a queue object changed beyond quotas / stopPolicy
  bool hyper_nodes_changed_ = false;  // a Volcano HyperNode created, edited or deleted
  bool config_rebuild_ = false;
  std::map<std::string, nlohmann::json> flavors_;  // ResourceFlavor objects by name

  std::map<std::string, std::unique_ptr<JobState>> jobs_;  // by workload key "<ns>/<name>"
  // Serve: started Jobs with activeDeadlineSeconds, by when it runs out (each step
  // read every such Job's object: most of an idle server's CPU with 10,000 Jobs).
  std::set<std::pair<Time, std::string>> deadlines_;
  std::unordered_map<std::string, Time> deadline_of_;
  std::map<std::string, std::string> job_keys_;  // "<resource>/<ns>/<name>" -> workload key
  // TrainJobs by "<resource>/<ns>/<name>": the change and why it waits.
  std::map<std::string, std::pair<Change, std::string>> without_runtime_;
  // Jobs by "<resource>/<ns>/<name>" whose Workload could not be composed, and why.
  std::map<std::string, std::pair<Change, std::string>> uncomposed_;
  // Cluster mode: the live pods of each gang ("<ns>/<job>" -> pod name -> pod), and
  // which gang a pod belongs to ("<ns>/<pod>"). Looked up for every pod event and
  // never walked in order: hashed, not string-compared down a tree.
  std::unordered_map<std::string, std::map<std::string, WatchedPod>> gang_pods_;
  std::unordered_map<std::string, std::string> pod_gang_;
  // Cluster mode: gangs with pods not yet terminal on each node (node -> gang -> pods),
  // so a planned gang waits for the pods of stopped gangs to leave its nodes.
  std::unordered_map<std::string, std::map<std::string, int32_t>> node_gangs_;
  std::set<std::string> waiting_for_nodes_;  // gangs NodesFree held back
  // Bare pods (pod_workloads.h): gangs by workload key, and each pod's gang
  // ("<ns>/<pod>" -> key); gangs that wait for pods are looked at again.
  std::map<std::string, PodGang> pod_gangs_;
  std::unordered_map<std::string, std::string> bare_pods_;
  std::set<std::string> waiting_pod_gangs_;
  // Where each pod let go of (LetGoOrphans) runs, by "<ns>/<pod>", until its own
  // workload adopts it.
  std::map<std::string, placement::PodPlacement> let_go_pods_;
  std::set<std::string> dirty_;  // workload keys to look at in the next Step
  // A Write cut short by its budget: the round's keys not yet synced, and the round
  // (Write re-syncs jobs its own writes made dirty, at most kWriteRounds times).
  std::set<std::string> write_round_keys_;
  // Of the round, the jobs whose gangs are admitted or running, written first (their
  // pods start only once their admission is stored): under a burst of submissions a
  // round also creates the Workload of every job that arrived, and key order put a
  // cycle's admissions behind thousands of those (bench/peers: seconds).
  std::vector<std::string> write_round_urgent_;
  int write_round_ = 0;
  bool queues_dirty_ = true;
  std::map<std::string, nlohmann::json> written_queue_status_;
  std::optional<Time> queue_status_synced_;  // when SyncQueues last ran
  // Terminating ClusterQueues and ResourceFlavors ("<resource>/<name>") whose
  // resource-in-use finalizer removal was submitted.
  std::set<std::string> released_finalizers_;
  // ResourceFlavors being deleted (deletionTimestamp set): they serve on until no
  // ClusterQueue names them, then their finalizer comes off (SyncQueues).
  std::set<std::string> terminating_flavors_;
  // Each ClusterQueue's Active condition status and since when (SyncQueues).
  struct ConditionSince {
    std::string status;
    std::string time;
  };
  std::map<std::string, ConditionSince> cq_active_since_;
  // The Active condition a stored ClusterQueue's status has (empty when none): Build
  // seeds cq_active_since_ with it, so a restarted reconciler keeps its time while the
  // status holds.
  static ConditionSince StoredActiveCondition(const nlohmann::json& cluster_queue);
  std::set<std::string> recorded_admissions_;  // see TakeRecordedAdmissions
  std::map<uint64_t, InFlight> in_flight_;     // by op id
  uint64_t next_op_ = 1;
  int64_t next_order_ = 0;  // arrival order of jobs
  int64_t event_counter_ = 0;
  EventCorrelator event_correlator_;                  // repeated decisions: one Event with a count
  std::vector<engine::LogEntry> unviewed_decisions_;  // see TakeUnviewedDecisions
  StepResult step_;                                   // what Decide did, completed by Write
  size_t writes_before_ = 0;                          // stats_.writes when Decide began
  std::optional<Time> last_cycle_;
  bool retry_ = false;
  bool cycle_needed_ = true;
  Stats stats_;
};

}  // namespace muster::control
