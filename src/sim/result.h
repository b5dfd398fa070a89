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

// An elastic gang grew or shrank while it ran.
struct ResizeResult {
  Time time = 0;
  std::string kind;    // Grow | Shrink
  int32_t from = 0;    // pods before
  int32_t pods = 0;    // pods after
  std::string detail;  // Shrink: preemption detail; "" = null
  std::string by;      // Shrink: the preemptor; "" = null
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
  std::vector<ResizeResult> resizes;  // elastic gangs only; after the contract's fields
  std::optional<std::string> pending_reason;
  double gpu_hours_lost = 0;  // work thrown away by evictions and failures
};

struct Stats {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double p90 = 0;  // after p99: added later, kept last so existing readers are unaffected
};

// One step of a step series: `value` holds from `time` until the next point.
struct SeriesPoint {
  Time time = 0;
  double value = 0;
};

// Per queue (Kueue ClusterQueue or Volcano queue), for the summary and the report.
struct QueueResult {
  std::string name;
  int64_t workloads = 0;
  Stats jct;
  Stats queueing_delay;
  std::optional<double> gpu_quota;     // nominal GPUs (Volcano: deserved, else capability)
  std::vector<SeriesPoint> gpu_usage;  // GPUs held by its running workloads
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
  // Added for the report (issue 5); all after the fields above.
  double cpu_utilization = 0;   // cpu-seconds used / (cluster cpu * endTime)
  Stats gang_wait;              // first start - submit of gangs of more than one pod
  int64_t multi_pod_gangs = 0;  // gang starts (restarts count) with more than one pod
  // Fraction of those starts on nodes of one rack; nullopt when no node has a rack label.
  std::optional<double> gangs_within_one_rack;
  // Fraction of placed GPU pods pinned to one NUMA zone; nullopt when the engine
  // recorded no NUMA zone for any pod (it records one only under NUMA alignment).
  std::optional<double> pods_within_one_numa;
  // At the end: free GPUs on ready nodes that cannot fit the smallest waiting GPU pod.
  int64_t fragmented_gpus = 0;
};

struct SimulationResult {
  Time end_time = 0;
  std::vector<WorkloadResult> workloads;  // sorted by name
  Summary summary;
  // Cluster-wide allocated/total over time, sampled when it changes (step series).
  std::vector<SeriesPoint> gpu_utilization;
  std::vector<SeriesPoint> cpu_utilization;
  std::vector<QueueResult> queues;  // sorted by name
};

// Mean, p50, p90 and p99 (nearest rank) of `values`; zeros when empty.
Stats ComputeStats(std::vector<double> values);

}  // namespace muster::sim
