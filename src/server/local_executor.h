// LocalExecutor: the engine's Executor in `muster serve`, the kubelet of this machine.
// A bound gang's pods run as local processes (ProcessSupervisor), each as its job's
// owner, in its own cgroup, with its own loopback address (status.podIP) and the names
// a cluster's DNS would give in its own /etc/hosts (pod_network.h), the container's
// command and args with the kubelet's $(VAR) expansion, env (downward API, ConfigMaps,
// Secrets), volumes and workingDir (local_pod.h), the rank identity the workloads
// layer computes (RANK, WORLD_SIZE, MASTER_ADDR = the coordinator's name, a
// MASTER_PORT free on this machine and unique among running jobs, PET_*, TF_CONFIG,
// the MPI hostfile, VC_*) and CUDA_VISIBLE_DEVICES set to the physical GPUs placement
// assigned. Pod objects in the store follow each process (Pending, Running,
// Succeeded, Failed with the kubelet's reasons: Error, OOMKilled,
// CreateContainerConfigError; with podman StartError, CreateContainerError; a pod
// restarted shows its previous container's end in lastState).
//
// A gang starts all at once, and only when no process of an earlier gang still holds
// one of its GPUs or pod names (a preempted victim gets its termination grace
// period to checkpoint before the preemptor's processes start). Stopping sends
// SIGTERM, then SIGKILL to the group and the cgroup after the pod's
// terminationGracePeriodSeconds.
//
// Success follows the job kind's upstream rule: PyTorchJob master (else every
// worker), TFJob chief (else worker 0), MPIJob launcher, JobSet (and TrainJob) its
// successPolicy over child Jobs (then the gang stops at once, as upstream deletes the
// active Jobs), every other kind all pods (the other ranks then get their termination
// grace period to finish on their own before they are stopped); until then any pod
// exiting non-zero fails the gang (its lifecycle policy, or a JobSet's
// failurePolicy.rules, then restarts or fails it). A JobSet's replicated jobs that
// start after others (startupPolicy InOrder, dependsOn) stay Pending until those are
// Ready / Complete (local_executor_jobset.cc).
//
// With a container runtime (LocalPodConfig::podman, podman_runtime.h) each pod's
// process is `podman run` of its image, with the same user, env, hosts, volumes and
// limits; the runtime adds the image check, the container's stop and its removal.
// A pod whose image cannot be pulled (or is absent under imagePullPolicy Never) does
// not fail: it waits, Pending, in ErrImagePull / ImagePullBackOff / ErrImageNeverPull
// with the kubelet's Events and back-off, and its start is tried again
// (local_executor_pull.cc). Its gang stays admitted meanwhile, its other pods running.
//
// An elastic gang changes size in place (Resized): added pods (the next indices of
// their pod sets) start as soon as their GPUs and names are free, with the same rank
// env as the others (torch elastic's rendezvous takes them in); removed pods (the
// highest indices) get SIGTERM, their grace period, then SIGKILL, and their Pod
// objects are deleted once they have ended, as a scale-down deletes pods. Pods a
// shrink stops are no longer part of the job: their exit neither fails the gang nor
// counts in its status (local_executor_resize.cc).
//
// A Pod marked for a graceful deletion (kubectl delete pod: deletionTimestamp and a
// grace period, graceful_deletion.h) stays Terminating while its process gets SIGTERM,
// then SIGKILL once the period ends; when it has ended its status is written and this
// kubelet deletes the object (local_executor_terminating.cc). A marked pod with no
// process here goes at once. Deleting a Pod object outright (a period of 0, or
// garbage collection of a finished job) stops its process if it still runs and
// removes its directory, logs and cgroup once it ended.
//
// Threading: Run and Poll are called from the controller thread only. Run() forks
// and must not be called inside ObjectStore::Batch (it would hold the store's lock
// across fork); Poll() writes pod objects and is meant for inside one.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "control/event_correlator.h"
#include "control/gang_policy.h"
#include "engine/engine.h"
#include "engine/executor.h"
#include "server/container_restart.h"
#include "server/graceful_deletion.h"
#include "server/image_pull_backoff.h"
#include "server/local_pod.h"
#include "server/object_store.h"
#include "server/pod_network.h"
#include "server/pod_object.h"
#include "server/process_supervisor.h"
#include "server/serve_executor.h"
#include "workloads/workloads.h"

namespace muster::server {

class LocalExecutor : public ServeExecutor {
 public:
  // `config.data_dir` must be the directory `processes` keeps its pods under's parent.
  LocalExecutor(ObjectStore& store, ProcessSupervisor& processes, LocalPodConfig config);
  ~LocalExecutor() override;

  // The engine whose cluster names the plan's nodes; reset after every rebuild.
  void SetEngine(const engine::Engine* engine) override { engine_ = engine; }

  void Shutdown() override;
  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;
  void Resized(const engine::WorkloadRecord& record,
               const std::vector<placement::PodPlacement>& added,
               const std::vector<placement::PodPlacement>& removed, Time now) override;
  bool SupportsResize() const override { return true; }

  // Takes over a gang a previous server started (after Engine::Adopt): its pods'
  // processes are running, or finished while the server was down (`recovered`).
  // A pod with no process at all counts as failed (local_executor_adopt.cc).
  void AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                      const std::map<std::string, RecoveredProcess>& recovered) override;

  bool Release(const std::string& key) override;
  // Starts the released gangs whose GPUs and pod names are free (forks), stops the processes
  // of deleted Pod objects and removes their files: outside any batch.
  void Run(Time now) override;
  // Reaps exits, enforces kill deadlines and writes pod objects. Returns what
  // happened to running gangs.
  std::vector<control::GangOutcome> Poll(Time now) override;

  control::GangPodCounts Counts(const std::string& key) const override;
  void Forget(const std::string& key) override { last_counts_.erase(key); }
  // Orphaned pods (local_executor_let_go.cc): their processes run on, unowned, until
  // a one-pod workload adopts them; the gang neither stops, writes nor deletes them.
  std::set<std::string> LetGo(const std::string& key, const std::set<std::string>& pods) override;
  void StopLetGo(const std::string& ns, const std::string& pod) override;
  bool PodsReady(const std::string& key) const override;
  int32_t RunningProcesses() const override;
  uint64_t changes() const { return changes_; }
  // Nothing left to wait for: no process running or waiting to start.
  bool Idle() const;

 private:
  enum class PodState { kWaiting, kRunning, kSucceeded, kFailed };
  struct PodRun {
    std::string name;  // pod object name (the rank's hostname)
    std::string id;    // process id
    int32_t pod_set = 0;
    int32_t index = 0;
    std::string node;
    std::string subdomain;
    std::string ip;
    std::vector<int32_t> gpus;  // placement device indices on `node`
    PodState state = PodState::kWaiting;
    int exit_code = 0;
    std::string reason;  // terminated / waiting reason (kubelet's)
    std::string message;
    std::string started_at, finished_at;
    int32_t restarts = 0;
    std::optional<TerminatedState> last_terminated;  // its previous container's end
    bool dirty = false;                              // its object needs writing
    bool object_deleted = false;  // its Pod object was deleted: never written again
    bool shrunk = false;          // stopped by a resize: no longer part of the job
    bool let_go = false;          // orphaned (LetGo): its process is no longer the gang's
    // kWaiting for its image (podman): `reason`/`message` are the container's waiting
    // reason (ErrImagePull, ImagePullBackOff, ErrImageNeverPull); it keeps its address.
    bool image_wait = false;
    bool retry_start = false;  // its image back-off has run out: started at this Run
    std::string image;         // its container's image
    // Its image is being pulled (podman): waiting, ContainerCreating (image_wait set,
    // no reason), since `pull_started`; `image_ready`: pulled, the next start runs it.
    bool pulling = false;
    bool image_ready = false;
    Time pull_started = 0;
    // A bare pod's container restarted in place (local_executor_restart.cc): kWaiting
    // until `restart_at` (CrashLoopBackOff), then started again at a Run.
    bool crash_wait = false;
    Time restart_at = 0;
    Time started = 0;  // when its current container started
    RestartBackOff backoff;
  };
  struct Gang {
    std::string key;
    std::string namespace_;
    model::Workload workload;
    std::string job_uid;                                 // for the pods' ownerReferences
    std::vector<std::optional<PodPriority>> priorities;  // by pod set (PodSetPriorities)
    std::vector<PodRun> pods;
    bool launched = false;
    bool released = false;  // its admission is stored (Release): it may launch
    bool stopping = false;
    bool deleted = false;
    bool reported = false;  // an outcome was returned for it
    int master_port = 0;
    Time decided_at = -1;  // when its success was decided (other ranks may still run)
  };

  PodRun NewPodRun(const model::Workload& workload, const placement::PodPlacement& placement,
                   const std::string& ns) const;
  void Launch(int64_t attempt, Gang& gang, Time now);
  // Resizes (local_executor_resize.cc): pods added to a launched gang start once
  // their GPUs and names are free; pods a shrink stopped leave once they ended.
  void StartAddedPods(int64_t attempt, Gang& gang, Time now);
  bool PodCanStart(const PodRun& pod) const;
  void RetireShrunkPods(int64_t attempt, Gang& gang);
  // Image waits (local_executor_pull.cc): the pod waits instead of failing; each Run
  // shows its back-off or marks it to start again; Events are written at Poll.
  void WaitForImage(const Gang& gang, PodRun& pod, const ImageWaitState& state);
  // The kubelet's image step before a start (podman): true when the image is here to
  // run; false when the pod waits (its pull started, or ErrImageNeverPull).
  bool EnsureImage(const Gang& gang, PodRun& pod, Time now);
  void SyncImageWaits(Gang& gang, Time now);
  // A bare pod whose restartPolicy restarts its ended container: waits in back-off (its
  // address kept) instead of ending; false when it ends.
  bool RestartInPlace(const Gang& gang, PodRun& pod, Time now);
  // A pull's end: the pod starts (Pulled) or waits in back-off (ErrImagePull).
  void PullEnded(const Gang& gang, PodRun& pod, Time now);
  void EndImageWait(PodRun& pod);
  // An adopted pod without a process that waited for its image when the server
  // stopped: it waits again, its back-off (loaded) where it was. False otherwise.
  bool ResumeImageWait(const Gang& gang, PodRun& pod, const nlohmann::json& stored);
  // The back-off's file in the data directory (written when it changed).
  void LoadPullBackOff();
  void SavePullBackOff();
  void WritePodEvents(Time now);
  static double GracePeriod(const Gang& gang, const PodRun& pod);
  void StartPod(int64_t attempt, Gang& gang, size_t i, const workloads::RankContext& context,
                const std::vector<DnsPod>& dns, const std::vector<DnsService>& services, Time now);
  bool CanLaunch(const Gang& gang) const;
  std::optional<control::GangOutcome> Evaluate(Gang& gang, Time now) const;
  // Start order, success and failure rules of the gang's job kind
  // (local_executor_jobset.cc, control/gang_policy.h).
  static std::vector<control::PolicyPod> PolicyPods(const Gang& gang);
  static std::vector<bool> BlockedPodSets(const Gang& gang);
  static std::optional<std::string> StartBlocker(const Gang& gang, int32_t pod_set);
  static std::optional<control::GangOutcome> EvaluateChildJobs(const Gang& gang);
  void WritePod(const Gang& gang, PodRun& pod, Time now);
  void DeletePods(Gang& gang);
  void ReleaseAddress(PodRun& pod);
  // SIGTERM now, SIGKILL after `grace` (and the container's own stop, with podman).
  void Terminate(const std::string& id, double grace);
  // The rank env the gang's live pods share: its master port and, without a private
  // /etc/hosts, each pod's address by rank (launch and growth alike).
  workloads::RankContext RankContextOf(const Gang& gang) const;
  void HandleDeletedPods();
  // Pods marked for a graceful deletion: their processes stopped with the mark's
  // period, and the objects of those that ended deleted (local_executor_terminating.cc).
  void HandleMarkedPods();
  void DeleteTerminatedPods();
  // Pod directories whose Pod object went while the server was down
  // (local_executor_adopt.cc).
  void CollectOrphanDirs();
  std::vector<DnsPod> DnsPods(const Gang* launching) const;
  std::vector<DnsService> Services() const;
  std::vector<std::string> PhysicalGpus(const std::string& node) const;
  std::string NodeName(int32_t node_index) const;

  ObjectStore& store_;
  ProcessSupervisor& processes_;
  LocalPodConfig config_;
  PodAddressPool addresses_;
  const engine::Engine* engine_ = nullptr;
  int64_t next_attempt_ = 1;
  uint64_t changes_ = 0;
  bool collected_orphans_ = false;
  std::map<int64_t, Gang> gangs_;           // by attempt, oldest first
  std::map<std::string, int64_t> current_;  // workload key -> its live attempt
  std::map<std::string, std::pair<int64_t, size_t>> by_process_;  // process id -> pod
  std::map<std::string, int32_t> restarts_;                       // pod object key -> starts so far
  std::map<std::string, TerminatedState> terminated_;  // pod object key -> its last container's end
  std::map<std::string, control::GangPodCounts> last_counts_;  // of the last stopped gang per key
  std::set<std::string> own_deletes_;  // process ids of Pod objects a shrink deleted
  ImagePullBackOff pull_backoff_;
  uint64_t saved_backoff_version_ = 0;
  bool retained_backoff_ = false;  // entries of pods no gang adopted are dropped
  struct PendingEvent {
    std::string namespace_, pod, node;
    PodEventNote note;
  };
  std::vector<PendingEvent> pending_events_;  // written at the next Poll (in its batch)
  control::EventCorrelator event_correlator_;
  int64_t event_sequence_ = 0;

  std::map<std::string, TerminatingPod> terminating_;  // process id -> marked pod stopping

  // Pod objects deleted or marked in the store (hub subscription; any thread).
  std::mutex deleted_mu_;
  std::vector<std::string> deleted_pods_;  // process ids
  std::vector<TerminatingPod> marked_pods_;
  WatchHub::SubscriptionId subscription_ = 0;
};

}  // namespace muster::server
