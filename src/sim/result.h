// SimulationResult: what `muster simulate` reports (CONTRACT section 3), as plain
// values, so the JSON and table writers and tests share one shape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace muster::sim {

struct PodResult {
  std::string pod_set;
  int32_t index = 0;
  std::string node;
  std::vector<int32_t> gpus;  // device indices; empty when not tracked
  int32_t numa = -1;          // NUMA zone when aligned, else -1
};

struct EvictionResult {
  Time time = 0;
  std::string reason;
  std::string detail;
  std::string by;  // "" = null
};

struct WorkloadResult {
  std::string name;  // "ns/name"
  std::string kind;
  std::optional<std::string> queue;
  std::optional<std::string> cluster_queue;
  int32_t priority = 0;
  std::optional<Time> submit_time;
  std::optional<Time> admit_time;
  std::optional<Time> start_time;
  std::optional<Time> finish_time;
  std::string phase;
  std::map<std::string, std::map<std::string, std::string>>
      flavors;                  // podSet -> resource -> flavor
  std::vector<PodResult> pods;  // sorted by (pod_set, index)
  std::vector<EvictionResult> evictions;
  std::optional<std::string> pending_reason;
  double gpu_hours_lost = 0;  // work thrown away by evictions and failures
};

struct Stats {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
};

struct Summary {
  int64_t workloads = 0;
  int64_t succeeded = 0;
  int64_t pending = 0;
  int64_t running = 0;
  int64_t failed = 0;
  double gpu_utilization = 0;  // GPU-seconds used / (cluster GPUs * endTime)
  double makespan = 0;
  Stats jct;             // finish - submit of succeeded workloads
  Stats queueing_delay;  // first admission - submit of admitted workloads
  int64_t preemptions = 0;
  double gpu_hours_lost = 0;
};

struct SimulationResult {
  Time end_time = 0;
  std::vector<WorkloadResult> workloads;  // sorted by name
  Summary summary;
};

// Mean, p50 and p99 (nearest rank) of `values`; zeros when empty.
Stats ComputeStats(std::vector<double> values);

}  // namespace muster::sim
