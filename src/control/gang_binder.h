// GangBinder: which of a running gang's pods go to which planned node, decided for the
// whole gang at once. The job's own controller (Job controller, JobSet, training
// operator, Volcano) creates the pods after admission; muster binds them only when a
// live pod exists for every planned slot, so a gang never runs partially, and binds
// them in rank order (pod sets in order, ascending index). Pure: no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace muster::control {

// A pod's place in its job, read from the labels and annotations each kind's
// controller sets.
struct PodIdentity {
  std::string job_kind;  // "Job" (batch), "JobSet", "PyTorchJob", "TFJob", "MPIJob", "VolcanoJob"
  std::string job_name;
  std::string pod_set;     // "" when the kind does not say (batch Job: "main")
  int32_t index = -1;      // replica / completion / task index; -1 unknown
  int32_t job_index = -1;  // JobSet: the child Job's index within its replicated job
};

// Nullopt for pods no known job controller owns.
std::optional<PodIdentity> IdentifyPod(const nlohmann::json& pod);

// What the binder and the Workload's PodsReady condition need of a pod: kept per pod
// instead of the pod object (a cluster's pods are the bulk of what muster mirrors).
struct WatchedPod {
  std::string pod_set;
  int32_t index = -1;
  int32_t job_index = -1;
  std::string node;            // spec.nodeName ("" while unbound)
  std::string scheduler_name;  // spec.schedulerName ("default-scheduler" when unset)
  bool live = false;           // neither terminal nor being deleted
  bool terminal = false;       // Succeeded or Failed
  bool ready = false;          // Running or Succeeded
};
WatchedPod MakeWatchedPod(const nlohmann::json& pod, const PodIdentity& identity);

// Succeeded or Failed: holds nothing any more.
bool PodTerminal(const nlohmann::json& pod);

struct PlannedSlot {
  std::string pod_set;
  int32_t index = 0;  // index within the pod set, as GangPlan numbers pods
  std::string node;
};

struct GangPod {
  std::string name;
  std::string pod_set;
  int32_t index = -1;     // -1: unknown, any free slot of its pod set
  std::string node_name;  // spec.nodeName: already bound
};

struct BindPlan {
  bool ready = false;   // every slot has a pod: `bindings` is the whole remainder
  std::string waiting;  // why not, one line
  std::vector<std::pair<std::string, std::string>> bindings;  // (pod, node), rank order
};

// `pods`: the gang's live pods (not terminal, not being deleted). A pod already bound
// keeps its node; an indexed pod takes the slot of its index; the others fill free
// slots of their pod set in name order. Pods beyond the plan stay unbound.
BindPlan PlanBindings(const std::vector<PlannedSlot>& slots, const std::vector<GangPod>& pods);

}  // namespace muster::control
