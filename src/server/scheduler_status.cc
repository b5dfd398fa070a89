// SchedulerController's write-back half: Workload objects, job status, queue status,
// Events from the decision log, and metrics. Runs on the controller thread after a
// cycle; writes only what changed.
#include <map>
#include <tuple>

#include "control/workload_objects.h"
#include "core/resource_name.h"
#include "server/metrics.h"
#include "server/scheduler_controller.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

void StripServerFields(json& object) {
  if (object.contains("metadata")) object["metadata"].erase("resourceVersion");
}

}  // namespace

void SchedulerController::SyncStatus(double cycle_seconds) {
  if (engine_ == nullptr) return;
  const std::string now = Now();
  for (auto& [key, job] : jobs_) {
    if (!job.in_engine) continue;
    const engine::WorkloadRecord* r = engine_->Find(key);
    if (r == nullptr) continue;
    control::WorkloadFacts facts;
    facts.record = r;
    facts.now = now;
    facts.cluster = &engine_->cluster();
    facts.cluster_queue = engine_->QueueOf(key).cluster_queue;
    facts.pods_ready = executor_->PodsReady(key);
    if (r->phase == engine::Phase::kPending) facts.pending_message = engine_->PendingMessage(key);
    const json* existing = job.written_workload.is_null() ? nullptr : &job.written_workload;
    json desired = control::BuildWorkloadObject(job.ref, facts, existing);
    if (existing == nullptr || desired != *existing) {
      control::ObjectKey wk{"workloads.kueue.x-k8s.io", job.ref.namespace_,
                            control::WorkloadObjectName(job.ref)};
      StripServerFields(desired);
      auto written = existing == nullptr ? store_->Create(wk, desired)
                                         : store_->Update(wk, desired, WriteScope::kAll);
      if (!written.ok() && written.status().code() == StatusCode::kAlreadyExists) {
        written = store_->Update(wk, desired, WriteScope::kAll);
      } else if (!written.ok() && written.status().code() == StatusCode::kNotFound) {
        written = store_->Create(wk, desired);
      }
      if (written.ok()) {
        job.written_workload = *written;
      } else {
        Log("cannot write Workload " + wk.namespace_ + "/" + wk.name + ": " +
            written.status().message());
      }
    }
    GangPodCounts counts = executor_->Counts(key);
    json with_status =
        control::WithJobStatus(job.object, facts, counts.running, counts.succeeded, counts.failed);
    std::string status_text = with_status.value("status", json::object()).dump();
    if (status_text != job.written_status) {
      StripServerFields(with_status);
      auto written = store_->Update({job.ref.resource, job.ref.namespace_, job.ref.name},
                                    std::move(with_status), WriteScope::kStatus);
      if (written.ok()) job.written_status = status_text;
    }
    if (r->Finished()) job.finished = true;
  }
  control::QueueUsage usage = control::AdmittedUsage(*engine_);
  SyncQueues(usage);
  WriteEvents();
  UpdateMetrics(cycle_seconds, usage);
}

void SchedulerController::SyncQueues(control::QueueUsage& usage) {
  control::QueueCounts counts = control::CountQueueWorkloads(*engine_);
  auto write = [&](const control::ObjectKey& key, json status) {
    std::string id = key.resource + "/" + key.namespace_ + "/" + key.name;
    auto it = written_queue_status_.find(id);
    if (it != written_queue_status_.end() && it->second == status) return;
    json object = {{"status", status}};
    if (store_->Update(key, object, WriteScope::kStatus).ok()) written_queue_status_[id] = status;
  };
  for (const auto& cq : config_.cluster_queues) {
    write({"clusterqueues.kueue.x-k8s.io", "", cq.meta.name},
          control::ClusterQueueStatus(cq, counts.cluster_queues[cq.meta.name], usage));
  }
  for (const auto& lq : config_.local_queues) {
    write({"localqueues.kueue.x-k8s.io", lq.meta.namespace_, lq.meta.name},
          control::QueueCountStatus(counts.local_queues[lq.meta.namespace_ + "/" + lq.meta.name]));
  }
}

// The decision log's lifecycle entries become v1 Events on the job, so `describe`
// shows why things happened.
void SchedulerController::WriteEvents() {
  const auto& entries = engine_->log().entries();
  for (; decisions_seen_ < entries.size(); ++decisions_seen_) {
    const engine::LogEntry& e = entries[decisions_seen_];
    auto job = jobs_.find(e.workload);
    if (job == jobs_.end()) continue;
    const control::JobRef& ref = job->second.ref;
    json event = control::DecisionEvent(e, ref, event_counter_ + 1);
    if (event.is_null()) continue;
    ++event_counter_;
    std::string name = event["metadata"]["name"];
    store_->Create({"events", ref.namespace_, name}, std::move(event));
    if (metrics_ == nullptr) continue;
    std::string cq = engine_->QueueOf(e.workload).cluster_queue;
    if (e.action == "Admit") {
      metrics_->Add(kKueueAdmittedWorkloadsTotal, {{"cluster_queue", cq}});
      const engine::WorkloadRecord* r = engine_->Find(e.workload);
      if (r != nullptr && r->submit_time) {
        metrics_->Observe(kKueueAdmissionWaitTimeSeconds, {{"cluster_queue", cq}},
                          e.time - *r->submit_time);
      }
    } else if (e.action == "Evict") {
      metrics_->Add(kKueueEvictedWorkloadsTotal, {{"cluster_queue", cq}, {"reason", e.reason}});
    } else if (e.action == "Start") {
      const engine::WorkloadRecord* r = engine_->Find(e.workload);
      if (r != nullptr)
        metrics_->Add(kPodsPlacedTotal, {}, static_cast<double>(r->plan.pods.size()));
    }
  }
}

void SchedulerController::UpdateMetrics(double cycle_seconds, control::QueueUsage& usage) {
  if (metrics_ == nullptr || engine_ == nullptr) return;
  metrics_->Observe(kSchedulingCycleDurationSeconds, {}, cycle_seconds);
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>>
      per_cq;  // active, inadmissible, admitted
  int64_t gpus = 0;
  for (const auto& r : engine_->workloads()) {
    if (!r.submitted || r.Finished()) continue;
    auto& t = per_cq[engine_->QueueOf(r.key()).cluster_queue];
    if (r.Active()) {
      ++std::get<2>(t);
      gpus += engine::PlacedGpus(r);
    } else if (engine_->admitter().PendingReason(r.key())) {
      ++std::get<1>(t);
    } else {
      ++std::get<0>(t);
    }
  }
  metrics_->ClearGauge(kKueuePendingWorkloads);
  metrics_->ClearGauge(kKueueAdmittedActiveWorkloads);
  metrics_->ClearGauge(kKueueReservingActiveWorkloads);
  for (const auto& cq : config_.cluster_queues) per_cq[cq.meta.name];
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
  for (const auto& cq : config_.cluster_queues) {
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
  for (int32_t i = 0; i < engine_->cluster().NodeCount(); ++i) {
    total_gpus += engine_->cluster().GetNode(i).allocatable.Get(gpu);
  }
  metrics_->Set(kGpusAllocated, {}, static_cast<double>(gpus));
  metrics_->Set(kGpusTotal, {}, static_cast<double>(total_gpus));
  metrics_->Set(kRunningProcesses, {}, executor_->RunningProcesses());
}

}  // namespace muster::server
