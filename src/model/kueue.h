// Kueue objects (kueue.x-k8s.io v1beta1 and v1beta2 decode to the same structs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/quantity.h"
#include "model/meta.h"
#include "model/pod.h"

namespace muster::model {

struct ResourceFlavor {
  ObjectMeta meta;
  StringMap node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;
  std::string topology_name;  // spec.topologyName (TAS)
};

struct ResourceQuota {
  std::string name;  // resource name
  Quantity nominal_quota;
  std::optional<Quantity> borrowing_limit;  // nullopt = unlimited
  std::optional<Quantity> lending_limit;    // nullopt = lends everything
};

struct FlavorQuotas {
  std::string name;  // ResourceFlavor name
  std::vector<ResourceQuota> resources;
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;  // order = preference
};

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };

// withinClusterQueue: Never | LowerPriority | LowerOrNewerEqualPriority
// reclaimWithinCohort: Never | LowerPriority | Any
// borrowWithinCohort.policy: Never | LowerPriority
enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };

struct BorrowWithinCohort {
  PreemptionPolicy policy = PreemptionPolicy::kNever;
  std::optional<int32_t> max_priority_threshold;
};

struct ClusterQueuePreemption {
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  BorrowWithinCohort borrow_within_cohort;
};

// flavorFungibility. v1beta1 spells the "stop here" choice Borrow / Preempt, v1beta2
// MayStopSearch; both decode to kMayStopSearch.
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
enum class FlavorPreference { kUnset, kBorrowingOverPreemption, kPreemptionOverBorrowing };

struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FlavorPreference preference = FlavorPreference::kUnset;
};

struct FairSharingSpec {
  int64_t weight_milli = 1000;  // fairSharing.weight as a Quantity, in milli-units
};

enum class StopPolicy { kNone, kHold, kHoldAndDrain };

struct ClusterQueue {
  ObjectMeta meta;
  std::string cohort;  // v1beta1 spec.cohort, v1beta2 spec.cohortName
  std::vector<ResourceGroup> resource_groups;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  // nullopt (field absent or null) matches no namespace; {} matches every namespace.
  std::optional<LabelSelector> namespace_selector;
  ClusterQueuePreemption preemption;
  FlavorFungibility flavor_fungibility;
  FairSharingSpec fair_sharing;
  // The effective policy: Hold at least while the ClusterQueue is terminating.
  StopPolicy stop_policy = StopPolicy::kNone;
  // metadata.deletionTimestamp is set: Kueue's resource-in-use finalizer keeps it
  // until what it admitted is done, and it admits nothing new meanwhile.
  bool terminating = false;
};

struct LocalQueue {
  ObjectMeta meta;
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
};

// kueue.x-k8s.io Cohort: a node of the hierarchical cohort tree with its own quota.
struct Cohort {
  ObjectMeta meta;
  std::string parent;  // spec.parentName (v1beta1/v1beta2)
  std::vector<ResourceGroup> resource_groups;
  FairSharingSpec fair_sharing;
};

struct WorkloadPriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
};

// kueue.x-k8s.io Topology: levels from the widest (block) to the narrowest (host).
struct Topology {
  ObjectMeta meta;
  std::vector<std::string> levels;  // node label keys
};

// scheduling.k8s.io/v1 PriorityClass.
struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
  bool preemption_never = false;  // preemptionPolicy: Never
};

}  // namespace muster::model
