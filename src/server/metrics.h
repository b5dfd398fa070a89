// MetricsRegistry: counters, gauges and histograms rendered in the Prometheus text
// exposition format 0.0.4 for GET /metrics. The controller thread writes, HTTP
// threads render; one mutex guards everything (writes are a map lookup, renders are
// rare), so callers need no locking of their own.
//
// Families are declared once with their help text; a series is a family plus label
// (name, value) pairs. Pass a family's labels in the same order every time: the
// order given is the order rendered, and series sort by their labels as given.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace muster::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricsRegistry {
 public:
  // Each returns false (and changes nothing) when `name` is already declared.
  bool DeclareCounter(std::string name, std::string help);
  bool DeclareGauge(std::string name, std::string help);
  // `buckets`: upper bounds; +Inf is implicit.
  bool DeclareHistogram(std::string name, std::string help, std::vector<double> buckets);

  // Each is a no-op for an undeclared name or a family of another type.
  void Add(const std::string& name, const Labels& labels, double delta = 1);  // counter
  void Set(const std::string& name, const Labels& labels, double value);      // gauge
  void ClearGauge(const std::string& name);  // drops every series of the gauge
  void Observe(const std::string& name, const Labels& labels, double value);  // histogram

  // Families by name, series by labels; # HELP and # TYPE for every declared family
  // (also one without series yet); histograms as cumulative _bucket{le=...} up to
  // +Inf, then _sum and _count.
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;                   // counter, gauge
    std::vector<uint64_t> bucket_hits;  // histogram: per bucket, not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::vector<double> buckets;
    std::map<Labels, Series> series;
  };

  bool Declare(std::string name, Type type, std::string help, std::vector<double> buckets);
  // The family `name` when it has `type`, else nullptr. Caller holds mu_.
  Family* Find(const std::string& name, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Media type of Render()'s output.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Kueue's metric names (pkg/metrics/metrics.go), so Kueue dashboards and alerts work
// unchanged against muster. Labels, in this order, as Kueue sets them:
//   pending_workloads                   cluster_queue, status (active | inadmissible)
//   admitted_workloads_total            cluster_queue
//   evicted_workloads_total             cluster_queue, reason (Preempted, ...)
//   admission_wait_time_seconds         cluster_queue
//   cluster_queue_resource_usage        cohort, cluster_queue, flavor, resource
//   cluster_queue_nominal_quota         cohort, cluster_queue, flavor, resource
//   reserving_active_workloads          cluster_queue
//   admitted_active_workloads           cluster_queue
inline constexpr const char* kKueuePendingWorkloads = "kueue_pending_workloads";
inline constexpr const char* kKueueAdmittedWorkloadsTotal = "kueue_admitted_workloads_total";
inline constexpr const char* kKueueEvictedWorkloadsTotal = "kueue_evicted_workloads_total";
inline constexpr const char* kKueueAdmissionWaitTimeSeconds = "kueue_admission_wait_time_seconds";
inline constexpr const char* kKueueClusterQueueResourceUsage = "kueue_cluster_queue_resource_usage";
inline constexpr const char* kKueueClusterQueueNominalQuota = "kueue_cluster_queue_nominal_quota";
inline constexpr const char* kKueueReservingActiveWorkloads = "kueue_reserving_active_workloads";
inline constexpr const char* kKueueAdmittedActiveWorkloads = "kueue_admitted_active_workloads";
// muster's own; the first five have no labels.
inline constexpr const char* kSchedulingCycleDurationSeconds =
    "muster_scheduling_cycle_duration_seconds";
inline constexpr const char* kPodsPlacedTotal = "muster_pods_placed_total";
inline constexpr const char* kGpusAllocated = "muster_gpus_allocated";
inline constexpr const char* kGpusTotal = "muster_gpus_total";
inline constexpr const char* kRunningProcesses = "muster_running_processes";
// verb (GET, LIST, WATCH, POST, PUT, PATCH, DELETE, as the Kubernetes API server's
// apiserver_request_total), resource (plural; "" for non-resource paths), code.
inline constexpr const char* kApiRequestsTotal = "muster_api_requests_total";

// Kueue's "status" label values of kueue_pending_workloads.
inline constexpr const char* kPendingStatusActive = "active";
inline constexpr const char* kPendingStatusInadmissible = "inadmissible";

// Declares the scheduler's families above (help texts and buckets as Kueue's) and
// sets the unlabelled muster_* counters and gauges to 0 when it declares them, so
// they exist from the start. RunServe calls it; calling it again changes nothing.
void DeclareSchedulerMetrics(MetricsRegistry& registry);

// Declares muster_api_requests_total (ApiHandler counts every request into it).
void DeclareApiMetrics(MetricsRegistry& registry);

}  // namespace muster::server
