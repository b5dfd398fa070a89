// The reconciler's bare pods (pod_workloads.h): pods no controller owns become
// workloads of their own, or gangs once every member exists. Until then, and while
// the engine keeps the workload pending, each pod says why in its PodScheduled=False
// condition and an Event, as kube-scheduler reports a pod it cannot place.
//
// Kueue gates such pods (`kueue.x-k8s.io/admission`) because kube-scheduler binds
// them; muster is the scheduler (serve: the kubelet too), so a pod is simply neither
// bound nor started before its workload is admitted: no gate is written.
#include <algorithm>
#include <functional>

#include "control/gang_binder.h"
#include "control/json_fields.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

std::string Phase(const json& pod) { return StringField(ObjectField(pod, "status"), "phase"); }

bool Terminal(const json& pod) {
  const std::string phase = Phase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

bool Placed(const json& pod) { return !StringField(ObjectField(pod, "spec"), "nodeName").empty(); }

}  // namespace

bool Reconciler::IntakeBarePod(const json& pod) {
  if (options_.mode == ReconcilerMode::kCluster) {
    // In a cluster only the pods handed to muster (spec.schedulerName) are its to
    // bind; the others are kube-scheduler's (Kueue gates those; muster does not).
    const json& spec = ObjectField(pod, "spec");
    const std::string scheduler = spec.contains("schedulerName")
                                      ? StringField(spec, "schedulerName")
                                      : std::string("default-scheduler");
    if (std::find(options_.scheduler_names.begin(), options_.scheduler_names.end(), scheduler) ==
        options_.scheduler_names.end())
      return false;
  }
  std::optional<PodWorkloadId> id = PodWorkloadOf(pod);
  if (!id) return false;
  const std::string key = id->Key();
  PodGang& gang = pod_gangs_[key];
  if (gang.pods.empty()) {
    gang.id = *id;
  } else if (!id->problem.empty()) {
    gang.id.problem = id->problem;
  }
  const std::string name = StringField(ObjectField(pod, "metadata"), "name");
  gang.pods[name] = pod;
  bare_pods_[id->namespace_ + "/" + name] = key;
  return true;
}

void Reconciler::ApplyBarePod(const Change& change) {
  const std::string pod_id = change.namespace_ + "/" + change.name;
  auto known = bare_pods_.find(pod_id);
  // A pod being deleted (a finalizer holds it, or its grace period runs) has left its
  // workload already, as Kueue counts a terminating pod out of its group.
  if (change.type == ChangeType::kDeleted || BeingDeleted(change.Object())) {
    if (change.type == ChangeType::kDeleted) ForgetOrphan(change.namespace_, change.name);
    if (known == bare_pods_.end()) return;
    const std::string key = known->second;
    bare_pods_.erase(known);
    auto gang = pod_gangs_.find(key);
    if (gang != pod_gangs_.end()) {
      gang->second.pods.erase(change.name);
      gang->second.written.erase(change.name);
    }
    // Deleting a pod stops its workload and frees its quota (the other pods of a
    // group stop with it: the gang is no longer whole).
    if (jobs_.count(key) != 0) {
      Log("pod " + pod_id + " was deleted: workload " + key + " removed");
      RemoveJob(key);
    }
    if (gang != pod_gangs_.end()) {
      if (gang->second.pods.empty()) {
        pod_gangs_.erase(gang);
        waiting_pod_gangs_.erase(key);
      } else if (jobs_.count(key) == 0) {
        waiting_pod_gangs_.insert(key);
      }
    }
    return;
  }
  if (known != bare_pods_.end()) {
    // Our own writes (pending status, the executor's) and the user's label edits:
    // the gang was formed from what the pod asked for when it arrived.
    auto gang = pod_gangs_.find(known->second);
    if (gang != pod_gangs_.end()) gang->second.pods[change.name] = change.Object();
    if (auto job = jobs_.find(known->second); job != jobs_.end()) {
      dirty_.insert(known->second);
      CheckPodsFinished(*job->second);
    }
    return;
  }
  // A pod already bound and Running that no bare workload holds is still a job's
  // gang's: the garbage collector unowns a Job's pods before the Job's deletion
  // (--cascade=orphan) reaches the reconciler. Taking it in now would start it a
  // second time (waiting for ever behind its own process); LetGoOrphans takes it in
  // once its gang lets go of it. Serve only: in a cluster muster binds, nothing runs.
  if (options_.mode == ReconcilerMode::kServe && Placed(change.Object()) &&
      Phase(change.Object()) == "Running") {
    return;
  }
  if (!IntakeBarePod(change.Object())) return;
  const std::string& key = bare_pods_.at(pod_id);
  if (jobs_.count(key) != 0) {
    Log("pod " + pod_id + " joins group " + key + " after it was formed; it is not run");
    return;
  }
  waiting_pod_gangs_.insert(key);
}

std::optional<PodIdentity> Reconciler::BarePodIdentity(const std::string& pod_id) const {
  auto known = bare_pods_.find(pod_id);
  if (known == bare_pods_.end()) return std::nullopt;
  auto gang = pod_gangs_.find(known->second);
  if (gang == pod_gangs_.end()) return std::nullopt;
  PodIdentity identity;
  identity.job_kind = "Pod";
  identity.job_name = "pod-" + gang->second.id.name;  // the key's name part
  identity.pod_set = PodSetNameFor(gang->second.id, pod_id.substr(pod_id.find('/') + 1));
  identity.index = 0;
  return identity;
}

// Kubelets run a cluster's pods: the workload ends when every pod has (one failed
// pod fails it, as a Kueue pod group whose pods failed is finished).
void Reconciler::CheckPodsFinished(JobState& job) {
  if (options_.mode != ReconcilerMode::kCluster || !job.in_engine || job.finished) return;
  const engine::WorkloadRecord* r = engine_ ? engine_->Find(job.key) : nullptr;
  auto gang = pod_gangs_.find(job.key);
  if (r == nullptr || r->phase != engine::Phase::kRunning || gang == pod_gangs_.end()) return;
  std::string failed;
  for (const auto& [name, pod] : gang->second.pods) {
    if (!Terminal(pod)) return;
    if (pod["status"].value("phase", "") == "Failed" && failed.empty()) {
      failed = "pod " + name + " failed";
    }
  }
  Status s = failed.empty() ? engine_->Succeed(job.key) : engine_->FailPods(job.key, failed);
  if (!s.ok()) Log(job.key + ": " + s.message());
  dirty_.insert(job.key);
}

Reconciler::JobState* Reconciler::FormPodJob(const std::string& key) {
  auto gang = pod_gangs_.find(key);
  if (gang == pod_gangs_.end() || gang->second.pods.empty()) return nullptr;
  const PodWorkloadId& id = gang->second.id;
  const json& first = gang->second.pods.begin()->second;
  Change c;
  c.type = ChangeType::kAdded;
  c.resource = "pods";
  c.namespace_ = id.namespace_;
  c.name = id.name;
  c.SetObject(json{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata",
                    {{"name", id.name},
                     {"namespace", id.namespace_},
                     {"uid", first.value("metadata", json::object()).value("uid", "")}}}});
  model::Workload placeholder;
  placeholder.key = key;
  JobState& job = AddJob("pods/" + id.namespace_ + "/" + id.name, c, placeholder);
  job.bare_pods = true;
  return &job;
}

Result<model::Workload> Reconciler::DecodeState(const JobState& job) const {
  if (!job.bare_pods) return DecodeJob(job.Object(), config_);
  auto gang = pod_gangs_.find(job.key);
  if (gang == pod_gangs_.end()) return NotFound("the pods of " + job.key + " are gone");
  std::vector<json> pods;
  for (const auto& [name, pod] : gang->second.pods) pods.push_back(pod);
  return BuildPodWorkload(gang->second.id, pods, config_);
}

void Reconciler::SyncWaitingPodGangs() {
  if (engine_ == nullptr) return;
  std::vector<std::string> keys(waiting_pod_gangs_.begin(), waiting_pod_gangs_.end());
  for (const std::string& key : keys) {
    auto it = pod_gangs_.find(key);
    if (it == pod_gangs_.end() || jobs_.count(key) != 0) {
      waiting_pod_gangs_.erase(key);
      continue;
    }
    PodGang& gang = it->second;
    if (!gang.id.problem.empty()) {
      SetPodsPending(gang, "Unschedulable", gang.id.problem, "Warning");
      continue;
    }
    SyncVolcanoPodGroup(gang, nullptr);
    std::string why;
    std::optional<int32_t> size = PodGroupSize(gang.id, config_, why);
    if (!size) {
      SetPodsPending(gang, "SchedulingGated", why + ": its pods wait for it", "Warning");
      continue;
    }
    int32_t live = 0;
    for (const auto& [name, pod] : gang.pods) live += Terminal(pod) ? 0 : 1;
    if (live < *size) {
      SetPodsPending(gang, "SchedulingGated",
                     "waiting for the pods of group " + gang.id.name + ": " + std::to_string(live) +
                         " of " + std::to_string(*size) + " exist",
                     "Normal");
      continue;
    }
    std::vector<json> pods;
    for (const auto& [name, pod] : gang.pods) pods.push_back(pod);
    Result<model::Workload> workload = BuildPodWorkload(gang.id, pods, config_);
    if (!workload.ok()) {
      SetPodsPending(gang, "Unschedulable", workload.status().message(), "Warning");
      continue;
    }
    waiting_pod_gangs_.erase(key);
    JobState* job = FormPodJob(key);
    if (job == nullptr) continue;
    SubmitToEngine(*job, std::move(workload).value());
    queues_dirty_ = true;
    // A pod its deleted job left running is adopted where it runs.
    if (!let_go_pods_.empty()) TakeOverOrphan(*job);
  }
}

void Reconciler::SyncPodJob(JobState& job) {
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  auto gang = pod_gangs_.find(job.key);
  if (r == nullptr || gang == pod_gangs_.end()) return;
  SyncVolcanoPodGroup(gang->second, r);
  if (r->phase != engine::Phase::kPending) {
    gang->second.why.clear();
    return;  // the executor (serve) writes the pods from here on
  }
  std::string message = engine_->PendingMessage(job.key);
  if (message.empty()) message = "waiting for admission";
  SetPodsPending(gang->second, "SchedulingGated", message, "Normal");
}

void Reconciler::SetPodsPending(PodGang& gang, const std::string& reason,
                                const std::string& message, const std::string& event_type) {
  const std::string now = Now();
  const bool news = message != gang.why;
  gang.why = message;
  for (auto& [name, pod] : gang.pods) {
    if (Terminal(pod) || Placed(pod)) continue;
    json desired = WithPodPending(pod, reason, message, now);
    const size_t hash = std::hash<std::string>()(desired["status"].dump());
    if (desired != pod && gang.written[name] != hash) {
      gang.written[name] = hash;
      desired["metadata"].erase("resourceVersion");
      WriteOp op;
      op.kind = WriteKind::kJobStatus;
      op.resource = "pods";
      op.namespace_ = gang.id.namespace_;
      op.name = name;
      op.object = std::move(desired);
      Submit(nullptr, std::move(op));
    }
    if (!news) continue;
    json event = PodEvent(pod, event_type,
                          reason == "Unschedulable" ? "FailedScheduling" : "WaitingForAdmission",
                          message, clock_.Now(), ++event_counter_);
    SubmitEventObject(std::move(event), gang.id.namespace_);
  }
}

// A standalone Volcano PodGroup follows its gang as Volcano's scheduler reports it:
// Pending until admitted, Inqueue once admitted (Volcano's enqueue), Running while at
// least minMember pods run or have succeeded, Completed once every pod has ended;
// with the counts of running, succeeded and failed pods.
void Reconciler::SyncVolcanoPodGroup(PodGang& gang, const engine::WorkloadRecord* r) {
  if (!gang.id.volcano) return;
  std::string why;
  std::optional<int32_t> size = PodGroupSize(gang.id, config_, why);
  if (!size) return;  // no PodGroup to write
  GangPodCounts counts;
  if (r != nullptr && runtime_ != nullptr) counts = runtime_->Counts(r->key());
  std::string phase = "Pending";
  if (r != nullptr && r->phase != engine::Phase::kPending) {
    const int32_t pods = static_cast<int32_t>(r->workload.pod_sets.size());
    const bool all_succeeded = counts.succeeded >= pods && pods > 0;
    const bool enough_running = counts.running + counts.succeeded >= *size;
    // A finished job whose pods all ended is Completed too (Volcano has no failed phase).
    if (all_succeeded || (r->Finished() && !enough_running)) {
      phase = "Completed";
    } else if (enough_running) {
      phase = "Running";
    } else if (r->phase == engine::Phase::kRunning) {
      phase = "Inqueue";
    }
  }
  json status = {{"phase", phase},
                 {"running", counts.running},
                 {"succeeded", counts.succeeded},
                 {"failed", counts.failed}};
  if (status == gang.group_status) return;
  gang.group_status = status;
  WriteOp op;
  op.kind = WriteKind::kMergeStatus;
  op.resource = kPodGroups;
  op.namespace_ = gang.id.namespace_;
  op.name = gang.id.name;
  op.object = {{"status", std::move(status)}};
  Submit(nullptr, std::move(op));
}

}  // namespace muster::control
