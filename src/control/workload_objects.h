// The objects the scheduler controller writes back to the store so kubectl shows
// what the engine decided: Kueue Workload objects (kueue.x-k8s.io/v1beta1) with
// their conditions and admission, the job's own status conditions as each
// upstream controller reports them, and ClusterQueue / LocalQueue status counts.
// Pure functions of engine state: no I/O.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "control/store_snapshot.h"
#include "core/clock.h"
#include "engine/decision_log.h"
#include "engine/engine.h"
#include "engine/workload_record.h"
#include "placement/placement.h"

namespace muster::control {

// RFC 3339 UTC with seconds ("2026-11-23T01:19:11Z") for a Unix time.
std::string Rfc3339(Time unix_seconds);

// Sets condition `type` in `conditions` (a JSON array, created if null) the way
// apimachinery's meta.SetStatusCondition does: lastTransitionTime changes only when
// the status flips. Returns whether anything changed.
bool SetCondition(nlohmann::json& conditions, const std::string& type, bool status,
                  const std::string& reason, const std::string& message, const std::string& now);

// The Workload object's name for a job: "<kind lower-case>-<job name>", as Kueue's
// prefix (without its hash suffix, so names are predictable).
std::string WorkloadObjectName(const JobRef& job);

struct WorkloadFacts {
  const engine::WorkloadRecord* record = nullptr;
  std::string pending_message;  // one line, when not admitted
  bool pods_ready = false;      // every pod of the running gang runs
  std::string cluster_queue;    // where it is queued
  std::string cohort;
  std::string now;                                   // RFC 3339
  const placement::ClusterState* cluster = nullptr;  // names the nodes of the plan
};

// The full desired Workload object; `existing` (may be null) supplies the
// conditions' transition times and metadata the store set.
nlohmann::json BuildWorkloadObject(const JobRef& job, const WorkloadFacts& facts,
                                   const nlohmann::json* existing);

// The job object with its status rewritten as the job's own controller would
// (Kubeflow conditions Created/Running/Restarting/Succeeded/Failed; batch Job
// Complete/Failed with active/succeeded/failed counts; JobSet Completed/Failed;
// Volcano Job status.state.phase; all kinds: conditions muster adds are upstream
// types only).
// `succeeded_indexes`: an Indexed batch Job's completion indexes whose pods
// succeeded (status.completedIndexes).
nlohmann::json WithJobStatus(const nlohmann::json& job_object, const WorkloadFacts& facts,
                             int32_t running_pods, int32_t succeeded_pods, int32_t failed_pods,
                             int32_t waiting_pods = 0,
                             const std::vector<int32_t>& succeeded_indexes = {});

// "0-2,5": ascending indexes as the Job controller writes status.completedIndexes.
std::string IndexRanges(const std::vector<int32_t>& ascending);

// Cluster mode: Kueue's Workload has no per-pod placement and its structural schema
// prunes unknown status fields, so muster keeps the placement (status.placement.pods)
// in this annotation instead.
inline constexpr const char* kPlacementAnnotation = "muster.dev/placement";
void MovePlacementToAnnotation(nlohmann::json& workload);

// The Workload of a job the API server refused to start (a 4xx on unsuspend): no
// admission, QuotaReserved False with reason Inadmissible and `why`. Null when
// `existing` is null (nothing was written yet: there is nothing to correct).
nlohmann::json ParkedWorkloadObject(const nlohmann::json& existing, const std::string& why,
                                    const std::string& now);

// The v1 Event on the job for a lifecycle entry of the decision log (Admitted,
// Started, Completed, Preempting, Evicted, Restarting, Failed, Adopted, WaitForNodes,
// and the reconciler's own Inadmissible),
// so `kubectl describe` shows why things happened; null for other entries.
// `sequence` makes the Event's name unique.
nlohmann::json DecisionEvent(const engine::LogEntry& entry, const JobRef& job, int64_t sequence);

// The admission and placement a Workload records (BuildWorkloadObject's
// status.admission and placement pods), read back as engine values so a restarted or
// rebuilt controller can adopt the running gang. `plan` holds the pods read before
// any problem; `status` is kFailedPrecondition when a pod set or node is unknown.
struct RecordedAdmission {
  admission::Assignment assignment;
  placement::GangPlan plan;
  Status status;
};
RecordedAdmission ReadRecordedAdmission(const nlohmann::json& admission,
                                        const nlohmann::json& placement_pods,
                                        const engine::WorkloadRecord& record,
                                        const placement::ClusterState& cluster);

// What a Workload records of waitForPodsReady's requeues (status.requeueState, the
// time of its PodsReadyTimeout Evicted condition, spec.active=false), read back so a
// restarted controller keeps counting where the last one stopped.
engine::Engine::RequeueState ReadRequeueState(const nlohmann::json& workload);

// Kueue's finalizer on a ClusterQueue and a ResourceFlavor (added when they are
// created: serve's create path, kube's webhook, as Kueue's webhooks): a ClusterQueue
// deleted while it holds admitted workloads stays, terminating, until they are done;
// a ResourceFlavor deleted while ClusterQueues name it serves on until none does. The
// reconciler then takes it off.
inline constexpr const char* kResourceInUseFinalizer = "kueue.x-k8s.io/resource-in-use";

// Pending and admitted workloads per ClusterQueue (by name) and LocalQueue (by
// "<namespace>/<name>"): what queue status reports. Finished workloads count nowhere.
struct QueueCounts {
  struct Count {
    int64_t pending = 0;
    int64_t admitted = 0;
  };
  std::map<std::string, Count> cluster_queues;
  std::map<std::string, Count> local_queues;
};
QueueCounts CountQueueWorkloads(const engine::Engine& engine);

// Kueue's Active condition of a ClusterQueue, without its lastTransitionTime: True
// (Ready) or why it admits nothing new: Terminating, Stopped, FlavorNotFound (the
// flavors it names that `flavors` lacks), as Kueue's clusterQueue.inactiveReason.
nlohmann::json ClusterQueueActiveCondition(const model::ClusterQueue& cq,
                                           const std::set<std::string>& flavors);

// The counting part of a ClusterQueue's or LocalQueue's status.
nlohmann::json QueueCountStatus(const QueueCounts::Count& count);

// What admitted workloads hold per (cluster queue, flavor, resource): queue status and
// the usage metric read the same numbers, computed once per sync.
using QueueUsage = std::map<std::tuple<std::string, std::string, std::string>, int64_t>;
QueueUsage AdmittedUsage(const engine::Engine& engine);

// A ClusterQueue's status: counts plus flavorsReservation / flavorsUsage per flavor
// and resource of its resource groups.
nlohmann::json ClusterQueueStatus(const model::ClusterQueue& cq, const QueueCounts::Count& count,
                                  const QueueUsage& usage);

}  // namespace muster::control
