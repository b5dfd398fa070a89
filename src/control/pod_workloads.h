// Bare Pods as workloads: a Pod created on its own (no controller owns it) is a
// workload of its own, or one pod of a gang:
//   - Kueue's pod integration: `kueue.x-k8s.io/queue-name` names the LocalQueue; pods
//     labelled `kueue.x-k8s.io/pod-group-name` with the annotation
//     `kueue.x-k8s.io/pod-group-total-count` form one gang of that many pods;
//   - Volcano: pods annotated `scheduling.k8s.io/group-name` are the members of that
//     standalone PodGroup (its minMember, queue and minResources);
//   - any other pod muster is asked to schedule is a one-pod workload.
// The workload's pod sets are the pods themselves (`PodSet::existing_pod`): one pod
// set of one pod per Pod object, its template the pod's own spec, so the executor
// (serve) or the binder (kube) acts on the user's Pod objects. Pure functions: no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::control {

inline constexpr const char* kPodGroupNameLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr const char* kPodGroupTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr const char* kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";

// Which workload a bare pod belongs to.
struct PodWorkloadId {
  std::string namespace_;
  std::string name;      // the pod's name, or its group's
  bool group = false;    // a Kueue pod group or a Volcano PodGroup
  bool volcano = false;  // a Volcano PodGroup (its size is the PodGroup's minMember)
  int32_t total = 1;     // Kueue: the group's total count (Volcano: resolved later)
  std::string problem;   // why the pod cannot be scheduled as it is ("" when it can)

  // The engine's key of the workload: "<namespace>/pod-<name>" (the Workload
  // object's name), apart from the keys of job kinds with the same name.
  std::string Key() const { return namespace_ + "/pod-" + name; }
};

// The pod's spec.restartPolicy as kube-apiserver defaults it: "Always" when it names
// none; "" when it is not a string (validation refuses it).
std::string PodRestartPolicy(const nlohmann::json& pod);

// The workload of `pod`; nullopt for pods a controller owns (a job's pods, the pods
// serve's executors write) and for pods that already finished.
std::optional<PodWorkloadId> PodWorkloadOf(const nlohmann::json& pod);

// The workload of the pods of `id` (all of them, any order), decoded against
// `config` like a batch Job of one pod per Pod object: requests, queue (the
// queue-name label, else the Volcano PodGroup's queue), priority, node constraints.
// A group needs every member (`id.total` pods; Volcano: the PodGroup's minMember).
// Kind "Pod" (apiVersion v1), key `id.Key()`; no retries (a pod that fails fails the
// workload, as Kueue finishes a pod group whose pods failed).
Result<model::Workload> BuildPodWorkload(const PodWorkloadId& id,
                                         const std::vector<nlohmann::json>& pods,
                                         const model::ManifestSet& config);

// The name of the pod set that is pod `pod_name` in the workload of `id`: "main" for a
// single pod (Kueue's name), the pod's name in a group (cut to a DNS label).
std::string PodSetNameFor(const PodWorkloadId& id, const std::string& pod_name);

// The pods a group waits for: `id.total`, or the Volcano PodGroup's minMember (at
// least 1); nullopt with `why` when the PodGroup does not exist.
std::optional<int32_t> PodGroupSize(const PodWorkloadId& id, const model::ManifestSet& config,
                                    std::string& why);

// `pod` with status.phase Pending and the condition PodScheduled=False (`reason`,
// `message`), as kube-scheduler reports a pod it cannot place yet.
nlohmann::json WithPodPending(const nlohmann::json& pod, const std::string& reason,
                              const std::string& message, const std::string& now);

// A v1 Event about `object` (of `api_version` and `kind`) at `now`, from `component`:
// its name is the object's, the kind, `sequence` and the time in milliseconds,
// unique across restarts.
struct EventSource {
  std::string api_version;
  std::string kind;
  std::string component;
};
nlohmann::json ObjectEvent(const nlohmann::json& object, const EventSource& source,
                           const std::string& type, const std::string& reason,
                           const std::string& message, Time now, int64_t sequence);

// ObjectEvent about a Pod, from muster's scheduler.
nlohmann::json PodEvent(const nlohmann::json& pod, const std::string& type,
                        const std::string& reason, const std::string& message, Time now,
                        int64_t sequence);

}  // namespace muster::control
