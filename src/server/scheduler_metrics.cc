// SchedulerController's metrics: Kueue's metric names for what the reconciler
// decided (admissions, evictions, queue depth and usage, quota), GPUs allocated and
// local processes. Runs on the controller thread.
#include <chrono>
#include <map>
#include <tuple>

#include "control/workload_objects.h"
#include "core/resource_name.h"
#include "server/metrics.h"
#include "server/scheduler_controller.h"

namespace muster::server {

void SchedulerController::OnDecision(const engine::LogEntry& e, const engine::Engine& engine) {
  if (metrics_ == nullptr) return;
  const engine::WorkloadRecord* r = engine.Find(e.workload);
  if (r == nullptr) return;
  std::string cq = engine.QueueOf(e.workload).cluster_queue;
  if (e.action == "Admit") {
    metrics_->Add(kKueueAdmittedWorkloadsTotal, {{"cluster_queue", cq}});
    if (r->submit_time) {
      metrics_->Observe(kKueueAdmissionWaitTimeSeconds, {{"cluster_queue", cq}},
                        e.time - *r->submit_time);
    }
  } else if (e.action == "Evict") {
    metrics_->Add(kKueueEvictedWorkloadsTotal, {{"cluster_queue", cq}, {"reason", e.reason}});
  } else if (e.action == "Start") {
    metrics_->Add(kPodsPlacedTotal, {}, static_cast<double>(r->plan.pods.size()));
  }
}

void SchedulerController::UpdateMetrics(double cycle_seconds) {
  const engine::Engine* engine = reconciler_->engine();
  if (metrics_ == nullptr || engine == nullptr) return;
  metrics_->Observe(kSchedulingCycleDurationSeconds, {}, cycle_seconds);
  // The gauges count every workload: once that takes a millisecond or more
  // (thousands of jobs), at most once a second rather than after every cycle (several
  // a second under a burst of submissions; scrapes come every 15 s or so).
  const auto now = std::chrono::steady_clock::now();
  if (gauges_at_ && gauges_cost_ >= std::chrono::milliseconds(1) &&
      now - *gauges_at_ < std::chrono::seconds(1)) {
    return;
  }
  gauges_at_ = now;
  CountGauges(*engine);
  gauges_cost_ = std::chrono::steady_clock::now() - now;
}

void SchedulerController::CountGauges(const engine::Engine& e) {
  const engine::Engine* engine = &e;
  control::QueueUsage usage = control::AdmittedUsage(*engine);
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>>
      per_cq;  // active, inadmissible, admitted
  int64_t gpus = 0;
  for (const auto& r : engine->workloads()) {
    if (!r.submitted || r.Finished()) continue;
    auto& t = per_cq[engine->QueueOf(r.key()).cluster_queue];
    if (r.Active()) {
      ++std::get<2>(t);
      gpus += engine::PlacedGpus(r);
    } else if (engine->admitter().PendingReason(r.key())) {
      ++std::get<1>(t);
    } else {
      ++std::get<0>(t);
    }
  }
  const model::ManifestSet& config = reconciler_->config();
  metrics_->ClearGauge(kKueuePendingWorkloads);
  metrics_->ClearGauge(kKueueAdmittedActiveWorkloads);
  metrics_->ClearGauge(kKueueReservingActiveWorkloads);
  for (const auto& cq : config.cluster_queues) per_cq[cq.meta.name];
  for (const auto& [cq, t] : per_cq) {
    if (cq.empty()) continue;
    metrics_->Set(kKueuePendingWorkloads, {{"cluster_queue", cq}, {"status", kPendingStatusActive}},
                  static_cast<double>(std::get<0>(t)));
    metrics_->Set(kKueuePendingWorkloads,
                  {{"cluster_queue", cq}, {"status", kPendingStatusInadmissible}},
                  static_cast<double>(std::get<1>(t)));
    metrics_->Set(kKueueAdmittedActiveWorkloads, {{"cluster_queue", cq}},
                  static_cast<double>(std::get<2>(t)));
    metrics_->Set(kKueueReservingActiveWorkloads, {{"cluster_queue", cq}},
                  static_cast<double>(std::get<2>(t)));
  }
  metrics_->ClearGauge(kKueueClusterQueueResourceUsage);
  metrics_->ClearGauge(kKueueClusterQueueNominalQuota);
  for (const auto& cq : config.cluster_queues) {
    for (const auto& group : cq.resource_groups) {
      for (const auto& f : group.flavors) {
        for (const auto& res : f.resources) {
          Labels labels = {{"cohort", cq.cohort},
                           {"cluster_queue", cq.meta.name},
                           {"flavor", f.name},
                           {"resource", res.name}};
          ResourceId id = ResourceNames::Intern(res.name);
          double scale = ResourceNames::IsMilli(id) ? 1000.0 : 1.0;
          metrics_->Set(kKueueClusterQueueResourceUsage, labels,
                        static_cast<double>(usage[{cq.meta.name, f.name, res.name}]) / scale);
          metrics_->Set(kKueueClusterQueueNominalQuota, labels,
                        static_cast<double>(ResourceList::Amount(id, res.nominal_quota)) / scale);
        }
      }
    }
  }
  int64_t total_gpus = 0;
  ResourceId gpu = ResourceNames::Intern("nvidia.com/gpu");
  for (int32_t i = 0; i < engine->cluster().NodeCount(); ++i) {
    if (engine->cluster().NodeRemoved(i)) continue;
    total_gpus += engine->cluster().GetNode(i).allocatable.Get(gpu);
  }
  metrics_->Set(kGpusAllocated, {}, static_cast<double>(gpus));
  metrics_->Set(kGpusTotal, {}, static_cast<double>(total_gpus));
  metrics_->Set(kRunningProcesses, {}, executor_->RunningProcesses());
}

}  // namespace muster::server
