// KubeController's write half: after each cycle, what the engine decided is written to
// the API server — admission and eviction of jobs, whole-gang binding, Workload
// objects, queue status and Events. Runs on the controller thread.
#include <algorithm>

#include "control/workload_objects.h"
#include "core/resource_name.h"
#include "kube/gang_binder.h"
#include "kube/job_templates.h"
#include "kube/kube_controller.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;

constexpr const char* kWorkloads = "workloads.kueue.x-k8s.io";
constexpr const char* kPlacementAnnotation = "muster.dev/placement";

bool Live(const json& pod) { return !PodTerminal(pod) && !PodDeleting(pod); }

std::string NodeName(const json& pod) {
  return pod.value("spec", json::object()).value("nodeName", "");
}

std::string SchedulerName(const json& pod) {
  return pod.value("spec", json::object()).value("schedulerName", "default-scheduler");
}

}  // namespace

void KubeController::Sync() {
  WriteActions();
  SuspendAndRestore();
  BindGangs();
  SyncWorkloads();
  SyncQueues();
  WriteEvents();
}

Result<json> KubeController::ReplaceJob(JobState& job, const json& desired) {
  auto written = writer_.Replace(job.ref.resource, desired);
  if (written.ok()) {
    job.object = *written;
    job.generation = job.object.value("metadata", json::object()).value("generation", int64_t{0});
    return written;
  }
  if (written.status().code() == StatusCode::kConflict) {
    // Someone changed the job since our view: read it again; the action is retried on
    // the fresh object at the next pass.
    ++stats_.conflicts;
    if (auto fresh = writer_.Get(job.ref.resource, job.ref.namespace_, job.ref.name); fresh.ok())
      job.object = *fresh;
  }
  return written.status();
}

void KubeController::WriteActions() {
  auto& pending = executor_->pending();
  for (auto it = pending.begin(); it != pending.end();) {
    auto job = jobs_.find(it->first);
    if (job == jobs_.end()) {
      it = pending.erase(it);
      continue;
    }
    const KubeExecutor::Action action = it->second;
    const engine::WorkloadRecord* r = engine_->Find(it->first);
    bool done = true;
    if (action == KubeExecutor::Action::kAdmit) {
      if (r != nullptr && r->Active()) {
        WriteAdmission(it->first, job->second);
        done = job->second.admission_written;
      }
    } else {
      WriteEviction(it->first, job->second);
      done = !job->second.eviction_pending;
    }
    it = done ? pending.erase(it) : std::next(it);
  }
}

void KubeController::WriteAdmission(const std::string& key, JobState& job) {
  const engine::WorkloadRecord* r = engine_->Find(key);
  // The Workload records the admission before the job starts (as Kueue does), so a
  // restarted muster finds it and adopts the gang.
  SyncWorkload(key, job, Now());
  std::vector<std::pair<std::string, std::vector<std::string>>> pod_set_flavors;
  for (const auto& psa : r->assignment.pod_sets) {
    std::vector<std::string> names;
    for (const auto& [res, flavor] : psa.flavors) {
      if (std::find(names.begin(), names.end(), flavor) == names.end()) names.push_back(flavor);
    }
    pod_set_flavors.emplace_back(psa.pod_set, std::move(names));
  }
  if (!SuspendPath(job.ref.kind)) SetPodGroupPhase(job, "Inqueue");
  auto desired = Admitted(job.object, InjectionsFor(pod_set_flavors, flavors_));
  if (!desired.ok()) {
    Log("cannot admit " + key + ": " + desired.status().message());
    job.admission_written = true;  // nothing to retry; binding still gates its pods
    return;
  }
  if (*desired == job.object) {
    job.admission_written = true;
    return;
  }
  auto written = ReplaceJob(job, *desired);
  if (written.ok()) {
    job.admission_written = true;
    job.eviction_pending = false;
    ++stats_.admitted;
  } else if (written.status().code() != StatusCode::kConflict) {
    Log("cannot unsuspend " + key + ": " + written.status().message());
  }
}

void KubeController::WriteEviction(const std::string& key, JobState& job) {
  job.admission_written = false;
  job.eviction_pending = true;
  if (!SuspendPath(job.ref.kind)) {
    // No suspend switch (Volcano Job): remove the gang's pods; its controller makes
    // new ones, which stay unbound until the gang is admitted again.
    for (const auto& [name, pod] : gang_pods_[key]) {
      if (!Live(pod)) continue;
      Status s = writer_.Delete("pods", job.ref.namespace_, name);
      if (!s.ok() && s.code() != StatusCode::kNotFound) Log(s.message());
    }
    SetPodGroupPhase(job, "Pending");
    job.eviction_pending = false;
    ++stats_.evicted;
    return;
  }
  if (IsSuspended(job.object)) {
    job.eviction_pending = false;
    return;
  }
  auto desired = Suspended(job.object);
  if (!desired.ok()) return;
  auto written = ReplaceJob(job, *desired);
  if (written.ok()) {
    job.eviction_pending = false;
    ++stats_.evicted;
  } else if (written.status().code() == StatusCode::kNotFound) {
    job.eviction_pending = false;
  } else if (written.status().code() != StatusCode::kConflict) {
    Log("cannot suspend " + key + ": " + written.status().message());
  }
}

// Volcano's job controller creates a job's pods only once its PodGroup is Inqueue
// (its scheduler's enqueue action sets that): muster admitting the job is that step.
void KubeController::SetPodGroupPhase(const JobState& job, const std::string& phase) {
  auto groups = cache_.List("podgroups.scheduling.volcano.sh", job.ref.namespace_);
  if (!groups.ok()) return;
  for (const auto& pg : groups->items) {
    bool owned = false;
    for (const auto& o : pg["metadata"].value("ownerReferences", json::array())) {
      if (o.value("uid", "") == job.ref.uid && !job.ref.uid.empty()) owned = true;
    }
    if (!owned) continue;
    if (pg.value("status", json::object()).value("phase", "") == phase) continue;
    auto written = writer_.MergePatchStatus("podgroups.scheduling.volcano.sh", job.ref.namespace_,
                                            pg["metadata"].value("name", ""),
                                            {{"status", {{"phase", phase}}}});
    if (!written.ok())
      Log("cannot set PodGroup phase " + phase + ": " + written.status().message());
  }
}

// Jobs that wait for admission are kept suspended (one created before the webhook
// ran, or without it, is suspended now, as Kueue does), and once suspended their pod
// templates get back what admission injected.
void KubeController::SuspendAndRestore() {
  for (auto& [key, job] : jobs_) {
    if (!job.in_engine || job.finished || !SuspendPath(job.ref.kind)) continue;
    const engine::WorkloadRecord* r = engine_->Find(key);
    if (r == nullptr || r->Active() || r->Finished()) continue;
    if (executor_->pending().count(key) != 0) continue;  // an action is still being written
    if (!IsSuspended(job.object)) {
      if (auto desired = Suspended(job.object); desired.ok()) ReplaceJob(job, *desired);
      continue;
    }
    // A batch Job's template may change only once its controller has stopped it (it
    // clears status.startTime on suspension).
    if (job.object.value("status", json::object()).contains("startTime") && job.ref.kind == "Job")
      continue;
    if (auto restored = Restored(job.object)) ReplaceJob(job, *restored);
  }
}

// Nodes a planned gang must wait for: a node still running pods of a gang muster
// stopped (evicted, or its job deleted) is busy until they are gone, as the kubelet
// would refuse pods on devices still in use.
bool KubeController::NodesFree(const engine::WorkloadRecord& record, std::string& why) const {
  std::set<std::string> planned;
  for (const auto& p : record.plan.pods)
    planned.insert(engine_->cluster().GetNode(p.node).meta.name);
  for (const auto& [key, pods] : gang_pods_) {
    if (key == record.key()) continue;
    const engine::WorkloadRecord* other = engine_->Find(key);
    if (other != nullptr && other->Active()) continue;  // accounted by the engine
    for (const auto& [name, pod] : pods) {
      if (PodTerminal(pod)) continue;
      std::string node = NodeName(pod);
      if (!node.empty() && planned.count(node) != 0) {
        why = "waiting for pod " + name + " of stopped " + key + " to leave node " + node;
        return false;
      }
    }
  }
  return true;
}

void KubeController::BindGangs() {
  for (const auto& r : engine_->workloads()) {
    if (r.phase != engine::Phase::kRunning) continue;
    auto job = jobs_.find(r.key());
    if (job == jobs_.end() || !job->second.admission_written) continue;
    auto gang = gang_pods_.find(r.key());
    if (gang == gang_pods_.end()) continue;
    std::vector<GangPod> pods;
    for (const auto& [name, pod] : gang->second) {
      if (!Live(pod)) continue;
      if (std::find(options_.scheduler_names.begin(), options_.scheduler_names.end(),
                    SchedulerName(pod)) == options_.scheduler_names.end())
        continue;  // another scheduler places it; muster's admission still steers it
      auto id = IdentifyPod(pod);
      if (!id) continue;
      GangPod g;
      g.name = name;
      g.pod_set = id->pod_set;
      g.index = id->index;
      for (const auto& ps : r.workload.pod_sets) {
        if (ps.name == id->pod_set && ps.pods_per_job > 0 && id->job_index >= 0)
          g.index = id->job_index * ps.pods_per_job + std::max(0, id->index);
      }
      g.node_name = NodeName(pod);
      pods.push_back(std::move(g));
    }
    if (pods.empty()) continue;
    std::vector<PlannedSlot> slots;
    for (const auto& p : r.plan.pods) {
      slots.push_back({r.workload.pod_sets[p.pod_set].name, p.index,
                       engine_->cluster().GetNode(p.node).meta.name});
    }
    BindPlan plan = PlanBindings(slots, pods);
    if (!plan.ready || plan.bindings.empty()) continue;
    std::string why;
    if (!NodesFree(r, why)) continue;
    for (const auto& [pod, node] : plan.bindings) {
      Status s = writer_.Bind(r.workload.meta.namespace_, pod, node);
      if (s.ok()) {
        ++stats_.bindings;
        gang->second[pod]["spec"]["nodeName"] = node;  // until the watch says so
      } else {
        Log("cannot bind " + r.workload.meta.namespace_ + "/" + pod + " to " + node + ": " +
            s.message());
      }
    }
  }
}

void KubeController::SyncWorkloads() {
  const std::string now = Now();
  for (auto& [key, job] : jobs_) SyncWorkload(key, job, now);
}

void KubeController::SyncWorkload(const std::string& key, JobState& job, const std::string& now) {
  {
    if (!job.in_engine) return;
    const engine::WorkloadRecord* r = engine_->Find(key);
    if (r == nullptr) return;
    control::WorkloadFacts facts;
    facts.record = r;
    facts.now = now;
    facts.cluster = &engine_->cluster();
    facts.cluster_queue = engine_->QueueOf(key).cluster_queue;
    if (r->phase == engine::Phase::kRunning) {
      int32_t ready = 0;
      for (const auto& [name, pod] : gang_pods_[key]) {
        std::string phase = pod.value("status", json::object()).value("phase", "");
        if (phase == "Running" || phase == "Succeeded") ++ready;
      }
      facts.pods_ready = ready >= static_cast<int32_t>(r->plan.pods.size());
    }
    if (r->phase == engine::Phase::kPending) facts.pending_message = engine_->PendingMessage(key);
    const json* existing = job.written_workload.is_object() ? &job.written_workload : nullptr;
    json desired = control::BuildWorkloadObject(job.ref, facts, existing);
    // Kueue's Workload has no per-pod placement; muster keeps it in an annotation (a
    // status field would be pruned by Kueue's structural schema).
    json& status = desired["status"];
    if (status.contains("placement")) {
      desired["metadata"]["annotations"][kPlacementAnnotation] = status["placement"]["pods"].dump();
      status.erase("placement");
    } else if (desired["metadata"].contains("annotations")) {
      desired["metadata"]["annotations"].erase(kPlacementAnnotation);
    }
    if (existing != nullptr && desired == *existing) return;
    Result<json> written = json::object();  // replaced by each write below
    if (existing == nullptr) {
      json create = desired;
      create.erase("status");
      create["metadata"].erase("resourceVersion");
      written = writer_.Create(kWorkloads, create);
      if (!written.ok() && written.status().code() == StatusCode::kAlreadyExists)
        written = writer_.Get(kWorkloads, job.ref.namespace_, control::WorkloadObjectName(job.ref));
      if (!written.ok()) {
        Log("cannot create Workload for " + key + ": " + written.status().message());
        return;
      }
      desired["metadata"]["resourceVersion"] = (*written)["metadata"]["resourceVersion"];
    }
    // Spec and metadata, then status (the status subresource ignores the rest).
    json main = desired;
    written = writer_.Replace(kWorkloads, main);
    if (written.ok()) {
      json with_status = *written;
      with_status["status"] = desired["status"];
      written = writer_.ReplaceStatus(kWorkloads, with_status);
    }
    if (written.ok()) {
      job.written_workload = *written;
    } else {
      if (written.status().code() == StatusCode::kConflict) ++stats_.conflicts;
      // Re-read: the next pass writes against the fresh object.
      auto fresh =
          writer_.Get(kWorkloads, job.ref.namespace_, control::WorkloadObjectName(job.ref));
      job.written_workload = fresh.ok() ? *fresh : json();
      if (written.status().code() != StatusCode::kConflict)
        Log("cannot write Workload for " + key + ": " + written.status().message());
    }
  }
}

void KubeController::SyncQueues() {
  control::QueueCounts counts = control::CountQueueWorkloads(*engine_);
  control::QueueUsage usage = control::AdmittedUsage(*engine_);
  auto write = [&](const std::string& resource, const std::string& ns, const std::string& name,
                   const json& status) {
    const std::string id = resource + "/" + ns + "/" + name;
    auto it = written_queue_status_.find(id);
    if (it != written_queue_status_.end() && it->second == status) return;
    auto written = writer_.MergePatchStatus(resource, ns, name, {{"status", status}});
    if (written.ok()) written_queue_status_[id] = status;
  };
  for (const auto& cq : config_.cluster_queues) {
    write("clusterqueues.kueue.x-k8s.io", "", cq.meta.name,
          control::ClusterQueueStatus(cq, counts.cluster_queues[cq.meta.name], usage));
  }
  for (const auto& lq : config_.local_queues) {
    write("localqueues.kueue.x-k8s.io", lq.meta.namespace_, lq.meta.name,
          control::QueueCountStatus(counts.local_queues[lq.meta.namespace_ + "/" + lq.meta.name]));
  }
}

void KubeController::WriteEvents() {
  const auto& entries = engine_->log().entries();
  for (; decisions_seen_ < entries.size(); ++decisions_seen_) {
    const engine::LogEntry& e = entries[decisions_seen_];
    auto job = jobs_.find(e.workload);
    if (job == jobs_.end()) continue;
    json event = control::DecisionEvent(e, job->second.ref, event_counter_ + 1);
    if (event.is_null()) continue;
    ++event_counter_;
    if (Status s = writer_.CreateEvent(event); !s.ok())
      Log("cannot record an Event: " + s.message());
  }
}

}  // namespace muster::kube
