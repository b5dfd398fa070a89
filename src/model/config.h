// Engine settings: Kueue's Configuration (config.kueue.x-k8s.io/v1beta1) and
// muster's own SchedulerConfiguration (muster.dev/v1alpha1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/meta.h"

namespace muster::model {

enum class FairSharingPreemptionStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };

struct FairSharingConfig {
  bool enable = false;
  // Kueue default: [LessThanOrEqualToFinalShare, LessThanInitialShare].
  std::vector<FairSharingPreemptionStrategy> preemption_strategies = {
      FairSharingPreemptionStrategy::kLessThanOrEqualToFinalShare,
      FairSharingPreemptionStrategy::kLessThanInitialShare};
};

struct WaitForPodsReadyConfig {
  bool enable = false;
  double timeout_seconds = 300;  // Kueue default 5m
  bool block_admission = false;
  std::optional<double> recovery_timeout_seconds;
  // requeuingStrategy
  std::string requeuing_timestamp = "Eviction";  // Eviction | Creation
  std::optional<int32_t> backoff_limit_count;    // unset: requeued for ever
  double backoff_base_seconds = 60;
  double backoff_max_seconds = 3600;
};

struct KueueConfiguration {
  ObjectMeta meta;
  FairSharingConfig fair_sharing;
  WaitForPodsReadyConfig wait_for_pods_ready;
};

enum class ScoringPolicy { kBinpack, kSpread, kGpuPacking, kBestFit, kFgd };

// What Volcano's scheduler does for jobs in Volcano queues (and jobs without a
// queue), as its volcano-scheduler.conf actions and plugins switch it. The
// defaults are what muster does without a Volcano configuration.
struct VolcanoSchedulingConfig {
  bool preempt = true;               // preempt action: lower-priority jobs of the same queue
  bool reclaim = true;               // reclaim action: jobs of overused reclaimable queues
  bool drf_job_order = true;         // drf plugin: a queue's jobs by dominant share
  bool sla = true;                   // sla plugin: sla-waiting-time annotations act
  bool task_topology = true;         // task-topology plugin: the task-topology annotations act
  int32_t task_topology_weight = 1;  // task-topology.weight (node score multiplier)
  // sla plugin argument sla-waiting-time: the default for jobs without the annotation.
  std::optional<double> sla_waiting_seconds;
};

// muster.dev/v1alpha1 SchedulerConfiguration.
struct SchedulerConfiguration {
  ObjectMeta meta;
  ScoringPolicy scoring = ScoringPolicy::kBinpack;
  std::map<std::string, int64_t> binpack_weights;  // resource name -> weight
  // A gang waiting longer than this gets a reservation; nullopt disables reservations.
  std::optional<double> reservation_after_seconds;
  // Quota-only admission (Kueue-style): admit without planning nodes.
  bool quota_only_admission = false;
  // Maximum workloads admitted per ClusterQueue per cycle (0 = unlimited).
  int32_t max_admissions_per_queue_per_cycle = 0;
  VolcanoSchedulingConfig volcano;
  // "volcano-scheduler.conf" when this configuration was mapped from Volcano's.
  std::string mapped_from;
};

}  // namespace muster::model
