// EmulatedExecutor: `muster serve --executor emulated`. Like kwok, it runs nothing:
// a started gang's pods are Running at once (their Pod objects are written at the
// next Poll, as LocalExecutor writes them, so kubectl and `muster get` show them),
// and each ends once its modelled run is over: the job's sim.muster.dev/duration
// (or its pod template's, for that pod set) since the gang started. A pod template's
// sim.muster.dev/fail-after makes the pods of its set fail (exit code 1) that long
// after they start, when that comes before their duration: the emulated failure the
// job's failure policies act on. A pod without either runs until it is stopped.
// Stopping (eviction, failure, deletion) is immediate: no process needs a grace
// period.
//
// The gang succeeds by the same rules as the local executor's: a JobSet by its
// successPolicy over child Jobs, every other kind once all its pods succeeded; a
// failed pod fails it (a JobSet's failurePolicy.rules, a Job's podFailurePolicy then
// decide, control/gang_policy.h). A JobSet's replicated jobs that start after others
// (startupPolicy InOrder, dependsOn) stay Pending (WaitingForReplicatedJob) until
// those are Ready / Complete; they start at a later Poll (at the earliest the next)
// and run their own duration from then.
//
// An elastic gang changes size in place (Resized): added pods are Running at once,
// removed ones (the highest indices) have their Pod objects deleted at once, as a
// scale-down deletes them; the gang's duration does not change with its size.
//
// After a restart a gang recorded running is adopted and still finishes at its
// original start (its pods' status.startTime) + duration; a JobSet with a start
// order keeps each pod's recorded state. Every start runs the whole duration (no
// checkpoint progress is modelled). Called from the controller thread only.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/gang_policy.h"
#include "server/graceful_deletion.h"
#include "server/object_store.h"
#include "server/pod_object.h"
#include "server/serve_executor.h"

namespace muster::server {

class EmulatedExecutor : public ServeExecutor {
 public:
  explicit EmulatedExecutor(ObjectStore& store);
  ~EmulatedExecutor() override;
  EmulatedExecutor(const EmulatedExecutor&) = delete;
  EmulatedExecutor& operator=(const EmulatedExecutor&) = delete;

  void SetEngine(const engine::Engine* engine) override { engine_ = engine; }
  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;
  void Resized(const engine::WorkloadRecord& record,
               const std::vector<placement::PodPlacement>& added,
               const std::vector<placement::PodPlacement>& removed, Time now) override;
  bool SupportsResize() const override { return true; }
  // `recovered` is ignored: nothing ran as a process.
  void AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                      const std::map<std::string, RecoveredProcess>& recovered) override;
  std::vector<control::GangOutcome> Poll(Time now) override;
  control::GangPodCounts Counts(const std::string& key) const override;
  void Forget(const std::string& key) override { last_counts_.erase(key); }
  // Orphaned pods run on (their objects are neither written nor deleted by the
  // gang) until their own one-pod workloads adopt them.
  std::set<std::string> LetGo(const std::string& key, const std::set<std::string>& pods) override;
  bool PodsReady(const std::string& key) const override;
  int32_t RunningProcesses() const override { return 0; }
  uint64_t changes() const { return changes_; }

  // Gangs started and not yet stopped.
  size_t RunningGangs() const { return gangs_.size(); }

 private:
  // What a pod set's pods do once started (sim.muster.dev/* of the job and of the
  // pod set's template).
  struct SetModel {
    std::optional<Time> duration;    // nullopt: runs until stopped
    std::optional<Time> fail_after;  // fails this long after it starts
  };
  struct Pod {
    PodRunView view;              // with owner_uid, the job's uid
    std::optional<Time> ends_at;  // running: when its modelled run ends
    bool fails = false;           // it ends Failed (fail-after), not Succeeded
    bool let_go = false;          // orphaned (LetGo): no longer the gang's to write
  };
  struct Gang {
    model::Workload workload;
    std::vector<SetModel> sets;                          // by pod set
    std::vector<std::optional<PodPriority>> priorities;  // by pod set (PodSetPriorities)
    std::vector<Pod> pods;
    Time started_at = 0;
    // Its pods changed since the last Poll: held pods may start (never in the cycle
    // that started the gang: they show Pending first).
    bool recheck = false;
    bool reported = false;  // an outcome was returned for it
  };

  static std::vector<SetModel> SetModels(const model::Workload& workload);
  Pod NewPod(const model::Workload& workload, const placement::PodPlacement& placement,
             const std::string& job_uid);
  // The pod runs from `from` (its end is scheduled) or, blocked by its start order,
  // waits (`blocker`).
  void RunPod(const std::string& key, Gang& gang, Pod& pod, Time from);
  static void Hold(Pod& pod, const std::string& blocker);
  // Registers the gang of `record` as running since `started_at` and writes its pods.
  void StartGang(const engine::WorkloadRecord& record, Time started_at);
  // By pod set: why its pods may not start yet (StartBlocker), nullopt when they may.
  static std::vector<std::optional<std::string>> Blockers(const Gang& gang);
  // Pods whose start order now lets them run start at `now`. True when one did or
  // what a held one waits for changed.
  bool StartUnblocked(const std::string& key, Gang& gang, Time now);
  // Ends the pods whose run is over at `now`. True when one did.
  bool EndPods(Gang& gang, Time now);
  // An adopted JobSet with a start order: each pod as its stored object recorded it.
  void AdoptPods(const std::string& key, Gang& gang);
  std::optional<control::GangOutcome> Evaluate(const std::string& key, const Gang& gang) const;
  static std::vector<control::PolicyPod> PolicyPods(const Gang& gang);
  void Unschedule(const std::string& key, const Gang& gang);
  void WritePods(const Gang& gang, Time now);
  // Poll's parts: the pods whose run ended or whose turn came, then every gang's
  // pods to write, written (the keys written); the gangs to report on, evaluated.
  std::vector<std::string> WriteDuePods(Time now);
  std::vector<control::GangOutcome> Outcomes();
  void DeletePods(const Gang& gang);
  // When a previous server started the pods of `record` (their status.startTime);
  // nullopt when no pod object records it.
  std::optional<Time> RecordedStart(const engine::WorkloadRecord& record) const;
  std::string NodeName(int32_t node_index) const;

  ObjectStore& store_;
  const engine::Engine* engine_ = nullptr;
  uint64_t changes_ = 0;
  std::map<std::string, Gang> gangs_;                 // by workload key
  std::set<std::pair<Time, std::string>> deadlines_;  // (ends_at, key) of running pods
  std::set<std::string> gated_;                       // gangs with pods held by their start order
  std::map<std::string, int32_t> starts_;             // "<ns>/<pod>" -> starts so far
  std::map<std::string, control::GangPodCounts> last_counts_;  // of the last stopped gang per key
  std::set<std::string> to_write_;                             // gangs whose pods Poll writes
  std::set<std::string> to_check_;                             // gangs whose outcome Poll evaluates

  // Pods marked for a graceful deletion (hub subscription; any thread): no process
  // stands behind an emulated pod, so the next Poll deletes each at once, as kwok's
  // default stages do.
  std::mutex marked_mu_;
  std::vector<TerminatingPod> marked_pods_;
  WatchHub::SubscriptionId subscription_ = 0;
  bool swept_marked_ = false;  // the first Poll also deletes pods marked before it
};

}  // namespace muster::server
