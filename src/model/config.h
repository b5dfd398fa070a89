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
  std::optional<int32_t> backoff_limit_count;
  double backoff_base_seconds = 60;
};

struct KueueConfiguration {
  ObjectMeta meta;
  FairSharingConfig fair_sharing;
  WaitForPodsReadyConfig wait_for_pods_ready;
};

enum class ScoringPolicy { kBinpack, kSpread, kGpuPacking, kBestFit, kFgd };

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
};

}  // namespace muster::model
