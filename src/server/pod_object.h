// The v1 Pod object an executor of `muster serve` writes for one rank of a gang, so
// kubectl and `muster get pods` show it like a kubelet-reported pod: labels of the
// job kind's upstream controller, owner reference, node, containers, phase and
// container state. Pure function of its inputs: no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "control/object_reader.h"
#include "core/clock.h"
#include "model/workload.h"
#include "server/pod_priority.h"

namespace muster::server {

enum class PodRunState { kWaiting, kRunning, kSucceeded, kFailed };

// How a container ended (its state.terminated, or lastState.terminated).
struct TerminatedState {
  int exit_code = 0;
  std::string reason;  // the kubelet's: Completed, Error, OOMKilled...
  std::string message;
  std::string started_at, finished_at;  // RFC 3339
};

struct PodRunView {
  std::string name;  // pod object name (the rank's hostname)
  int32_t pod_set = 0;
  int32_t index = 0;
  std::string node;
  PodRunState state = PodRunState::kWaiting;
  int exit_code = 0;
  std::string reason;           // terminated pods: the kubelet's reason ("" = by exit code)
  std::string message;          // terminated pods: why
  std::string waiting_reason;   // waiting pods: the kubelet's reason ("" = ContainerCreating)
  std::string waiting_message;  // waiting pods: why
  // Waiting to start its container again (CrashLoopBackOff): the pod stays Running.
  bool restarting = false;
  std::string started_at, finished_at;  // RFC 3339; finished_at empty: `now`
  int32_t restarts = 0;
  std::optional<TerminatedState> last_terminated;  // the previous container's end (lastState)
  std::string ip;                                  // status.podIP ("" = the node's address)
  std::string subdomain;                           // spec.subdomain
  std::string owner_uid;  // the job's metadata.uid, for the pod's ownerReference
  // What the job's controller adds to the env of the container it runs (RANK,
  // MASTER_ADDR, JOB_COMPLETION_INDEX...), as upstream's controllers write it into
  // the pod: set by the executor that runs processes.
  std::vector<std::pair<std::string, std::string>> controller_env;
  // What the Priority admission plugin writes into a pod its job's controller creates
  // (pod_priority.h); nullopt: nothing (its class is gone).
  std::optional<PodPriority> priority;
};

// The metadata.uid of the job behind `job` in `store` ("" when it is not there): a
// pod's ownerReference names its owner by uid, which the garbage collector follows.
std::string JobUid(const control::ObjectReader& store, const model::ObjectMeta& job);

nlohmann::json BuildPodObject(const model::Workload& workload, const PodRunView& pod, Time now);

// The priority the pods of each pod set of `workload` get, by pod set: its template's
// PriorityClass (or the global default) as the Priority plugin computes it at their
// create; nullopt for a class that is gone.
std::vector<std::optional<PodPriority>> PodSetPriorities(const control::ObjectReader& store,
                                                         const model::Workload& workload);

// A bare Pod run as a workload (PodSet::existing_pod): the user's `stored` object
// keeps its metadata and spec; muster, as scheduler and kubelet, sets spec.nodeName
// and the status of `built` (BuildPodObject), with the PodScheduled, Initialized,
// ContainersReady and Ready conditions (those of `built`), and, as Kueue's pod
// integration at admission, merges in `built`'s nodeSelector entries and the
// tolerations the pod lacks (its flavors', Engine::AdmittedWorkload).
nlohmann::json ExistingPodObject(const nlohmann::json& stored, const nlohmann::json& built);
// Whether pod set `pod_set` of `workload` is an existing Pod object.
bool IsExistingPod(const model::Workload& workload, int32_t pod_set);

// The pod's labels: its template's, then those its job's upstream controller adds.
model::StringMap PodObjectLabels(const model::Workload& workload, int32_t pod_set, int32_t index);

}  // namespace muster::server
