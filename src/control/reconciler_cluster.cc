// The reconciler in cluster mode (`muster kube`): what Kueue's job integrations and a
// gang scheduler write. Admission: the Workload (with admission and placement) is
// written first, then the job is unsuspended with its flavors' node labels and
// tolerations injected, then its pods are bound, all at once, once every one exists.
// Eviction (as Kueue's Stop): the job is suspended, its status.startTime reset (the
// API server keeps a started batch Job's template immutable) and its templates
// restored. Each step is one write whose result starts the next, so jobs proceed
// independently: one gang's binds never wait for another's admission.
#include <algorithm>
#include <utility>

#include "control/gang_binder.h"
#include "control/job_templates.h"
#include "control/json_fields.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

// InFlight::epoch of job-object writes that are not an admission.
constexpr int64_t kSuspendWrite = -2;
constexpr int64_t kRestoreWrite = -1;

// A write the API server will refuse again however often it is sent (422, 400, 403).
bool Permanent(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
    case StatusCode::kConflict:
    case StatusCode::kUnavailable:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return false;
    default:
      return true;
  }
}

// A job that has started (status.startTime) and records its original templates: read
// without operator[], which on the shared, const job object must not meet a missing key.
bool StartedWithOriginalTemplates(const json& job) {
  auto status = job.find("status");
  if (status == job.end() || !status->is_object() || !status->contains("startTime")) return false;
  auto metadata = job.find("metadata");
  if (metadata == job.end() || !metadata->is_object()) return false;
  auto annotations = metadata->find("annotations");
  return annotations != metadata->end() && annotations->is_object() &&
         annotations->contains(kOriginalTemplatesAnnotation);
}

}  // namespace

void Reconciler::SyncClusterJob(JobState& job) {
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  if (r->Active()) {
    if (job.job_op != 0) return;
    if (!job.admission_written) {
      // The Workload records the admission first (as Kueue), so a restarted muster
      // finds it and adopts the gang rather than admitting it twice.
      if (r->phase == engine::Phase::kRunning && job.workload_admit_epoch == job.admit_epoch)
        WriteAdmission(job);
      return;
    }
    if (r->phase == engine::Phase::kRunning) {
      DeleteShrunkPods(job);
      BindGang(job);
    }
    return;
  }
  if (!r->Finished()) WriteStop(job);
}

void Reconciler::WriteAdmission(JobState& job) {
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  std::vector<std::pair<std::string, std::vector<std::string>>> pod_set_flavors;
  for (const auto& psa : r->assignment.pod_sets) {
    std::vector<std::string> names;
    for (const auto& [res, flavor] : psa.flavors) {
      if (std::find(names.begin(), names.end(), flavor) == names.end()) names.push_back(flavor);
    }
    pod_set_flavors.emplace_back(psa.pod_set, std::move(names));
  }
  if (!SuspendPath(job.ref.kind, job.ref.api_version)) {
    // Volcano's job controller creates a job's pods once its PodGroup is Inqueue (its
    // scheduler's enqueue action): muster admitting the job is that step.
    SetPodGroupPhase(job, "Inqueue");
    job.admission_written = true;
    return;
  }
  auto desired = Admitted(job.Object(), InjectionsFor(pod_set_flavors, flavors_));
  if (!desired.ok()) {
    Log("cannot admit " + job.key + ": " + desired.status().message());
    job.admission_written = true;  // nothing to retry; binding still gates its pods
    return;
  }
  if (*desired == job.Object()) {
    job.admission_written = true;
    return;
  }
  WriteOp op;
  op.kind = WriteKind::kJob;
  op.resource = job.ref.resource;
  op.namespace_ = job.ref.namespace_;
  op.name = job.ref.name;
  op.object = std::move(desired).value();
  op.base = job.object;
  job.job_op = Submit(&job, std::move(op), job.admit_epoch);
}

// A job waiting for admission is kept suspended (one created before the webhook ran,
// or without it, is suspended now, as Kueue does); once suspended, a started batch
// Job's status.startTime is reset and the templates get back what admission injected.
void Reconciler::WriteStop(JobState& job) {
  if (job.job_op != 0 || job.stop_refused) return;
  if (!SuspendPath(job.ref.kind, job.ref.api_version)) {
    if (!job.delete_pods) return;
    // No suspend switch (Volcano Job): its pods are removed; its controller makes new
    // ones, which stay unbound until the gang is admitted again.
    if (auto gang = gang_pods_.find(job.key); gang != gang_pods_.end()) {
      for (const auto& [name, pod] : gang->second) {
        if (!pod.live) continue;
        WriteOp op;
        op.kind = WriteKind::kDeletePod;
        op.resource = "pods";
        op.namespace_ = job.ref.namespace_;
        op.name = name;
        Submit(nullptr, std::move(op));
      }
    }
    SetPodGroupPhase(job, "Pending");
    job.delete_pods = false;
    ++stats_.evicted;
    return;
  }
  WriteOp op;
  op.resource = job.ref.resource;
  op.namespace_ = job.ref.namespace_;
  op.name = job.ref.name;
  int64_t purpose = kRestoreWrite;
  if (!IsSuspended(job.Object())) {
    auto suspended = Suspended(job.Object());
    if (!suspended.ok()) return;
    op.kind = WriteKind::kJob;
    op.object = std::move(suspended).value();
    purpose = kSuspendWrite;
  } else if (job.ref.kind == "Job" && StartedWithOriginalTemplates(job.Object())) {
    // Kueue's Stop: "reset start time if necessary, so we can update the scheduling
    // directives": a batch Job's template may change only while it is suspended and
    // has not started.
    op.kind = WriteKind::kJobStatus;
    op.object = job.Object();
    op.object["status"].erase("startTime");
  } else if (auto restored = Restored(job.Object())) {
    op.kind = WriteKind::kJob;
    op.object = std::move(*restored);
  } else {
    return;
  }
  if (op.object.contains("metadata")) op.object["metadata"].erase("managedFields");
  if (op.kind == WriteKind::kJob) op.base = job.object;
  job.job_op = Submit(&job, std::move(op), purpose);
}

void Reconciler::ApplyJobResult(JobState& job, const InFlight& pending, WriteResult& result) {
  if (result.status.ok()) {
    if (result.object.is_object()) {
      job.SetObject(std::move(result.object));
      job.generation = GenerationOf(job.Object());
    }
    if (pending.epoch >= 0 && pending.epoch == job.admit_epoch) {
      job.admission_written = true;
      ++stats_.admitted;
    } else if (pending.epoch == kSuspendWrite) {
      ++stats_.evicted;
    }
    return;
  }
  const Status& s = result.status;
  if (s.code() == StatusCode::kConflict) {
    // Someone changed the job since our view: the write is made again against the
    // fresh object (the sink read it back, or the watch brings it).
    if (result.object.is_object()) job.SetObject(std::move(result.object));
    retry_ = true;
    return;
  }
  if (s.code() == StatusCode::kNotFound) return;  // deleted: its deletion arrives next
  if (!Permanent(s)) {
    retry_ = true;
    return;
  }
  if (pending.epoch >= 0) {
    // The API server refuses to start the job (a 4xx): retrying the same write loops
    // for ever while the Workload says Admitted and the quota is charged. The job
    // waits, with a condition and an Event saying why, until the job changes.
    Park(job, "the API server refused to start it: " + s.message());
    return;
  }
  Log("cannot " + std::string(pending.epoch == kSuspendWrite ? "suspend " : "restore ") + job.key +
      ": " + s.message() + " (not retried until the job changes)");
  job.stop_refused = true;
}

void Reconciler::Park(JobState& job, const std::string& why) {
  Log("job " + job.key + " waits: " + why);
  ++stats_.parked;
  job.parked = why;
  if (job.in_engine && engine_ != nullptr) engine_->RemoveWorkload(job.key);
  job.in_engine = false;
  job.admission_written = false;
  engine::LogEntry entry{clock_.Now(), job.key, "Inadmissible", "FailedToStart", why};
  SubmitEvent(entry, job.ref);
  queues_dirty_ = true;
  cycle_needed_ = true;
  dirty_.insert(job.key);
}

void Reconciler::SyncParkedWorkload(JobState& job) {
  if (job.workload_op != 0) return;
  json desired = ParkedWorkloadObject(job.workload, job.parked, Now());
  if (!desired.is_object() || desired == job.workload) return;
  WriteOp op;
  op.kind = WriteKind::kWorkload;
  op.resource = kWorkloads;
  op.namespace_ = job.ref.namespace_;
  op.name = WorkloadObjectName(job.ref);
  op.object = std::move(desired);
  job.workload_op = Submit(&job, std::move(op));
}

// Volcano's PodGroup of the job follows muster's admission (Inqueue) and eviction.
void Reconciler::SetPodGroupPhase(JobState& job, const std::string& phase) {
  if (view_ == nullptr || job.ref.uid.empty()) return;
  auto groups = view_->List(kPodGroups, job.ref.namespace_);
  if (!groups.ok()) return;
  for (const auto& pg : groups->items) {
    bool owned = false;
    for (const auto& o : pg["metadata"].value("ownerReferences", json::array())) {
      if (o.is_object() && o.value("uid", "") == job.ref.uid) owned = true;
    }
    if (!owned) continue;
    if (pg.value("status", json::object()).value("phase", "") == phase) continue;
    WriteOp op;
    op.kind = WriteKind::kMergeStatus;
    op.resource = kPodGroups;
    op.namespace_ = job.ref.namespace_;
    op.name = pg["metadata"].value("name", "");
    op.object = {{"status", {{"phase", phase}}}};
    Submit(nullptr, std::move(op));
  }
}

// Nodes a planned gang must wait for: a node still running pods of a gang muster
// stopped (evicted, or its job deleted) is busy until they are gone, as the kubelet
// would refuse pods on devices still in use.
bool Reconciler::NodesFree(const engine::WorkloadRecord& record, std::string& why) const {
  for (const auto& p : record.plan.pods) {
    const std::string& node = engine_->cluster().GetNode(p.node).meta.name;
    auto on_node = node_gangs_.find(node);
    if (on_node == node_gangs_.end()) continue;
    for (const auto& [key, count] : on_node->second) {
      if (key == record.key() || count == 0) continue;
      const engine::WorkloadRecord* other = engine_->Find(key);
      if (other != nullptr && other->Active()) {
        // Accounted by the engine, unless it shrank: the pods it gave up are still
        // there until their deletion ends (Volcano binds a preemptor onto what the
        // victims release only once it is released).
        auto shrunk = jobs_.find(key);
        if (shrunk == jobs_.end() || shrunk->second->shrink_deleted.empty()) continue;
        int32_t planned = 0;
        for (const auto& q : other->plan.pods) {
          if (engine_->cluster().GetNode(q.node).meta.name == node) ++planned;
        }
        if (count <= planned) continue;
        why = "waiting for the pods " + key + " gave up to leave node " + node;
        return false;
      }
      why = "waiting for the pods of stopped " + key + " to leave node " + node;
      return false;
    }
  }
  return true;
}

void Reconciler::BindGang(JobState& job) {
  if (job.bind_op != 0) return;
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  auto gang = gang_pods_.find(job.key);
  if (gang == gang_pods_.end()) return;
  std::vector<GangPod> pods = GangPodsToBind(*r, gang->second);
  if (pods.empty()) return;
  std::vector<PlannedSlot> slots;
  slots.reserve(r->plan.pods.size());
  for (const auto& p : r->plan.pods) {
    slots.push_back({r->workload.pod_sets[p.pod_set].name, p.index,
                     engine_->cluster().GetNode(p.node).meta.name});
  }
  BindPlan plan = PlanBindings(slots, pods);
  if (plan.ready) MarkUnboundPods(job, *r, pods, plan);
  if (!plan.ready || plan.bindings.empty()) return;
  std::string why;
  if (!NodesFree(*r, why)) {
    waiting_for_nodes_.insert(job.key);
    return;
  }
  waiting_for_nodes_.erase(job.key);
  // Bound from now on for the binder (until the watch says so, or the write fails).
  for (const auto& [pod, node] : plan.bindings) gang->second[pod].node = node;
  WriteOp op;
  op.kind = WriteKind::kBind;
  op.resource = "pods";
  op.namespace_ = job.ref.namespace_;
  op.name = job.ref.name;
  op.bindings = std::move(plan.bindings);
  job.bind_op = Submit(&job, std::move(op));
}

void Reconciler::ApplyBindResult(JobState& job, const InFlight& pending, WriteResult& result) {
  size_t failed = 0;
  auto gang = gang_pods_.find(job.key);
  for (const auto& [pod, status] : result.failed_bindings) {
    if (status.code() == StatusCode::kConflict) continue;  // bound already (by an earlier try)
    ++failed;
    Log("cannot bind " + job.ref.namespace_ + "/" + pod + ": " + status.message());
    if (gang != gang_pods_.end()) {
      if (auto p = gang->second.find(pod); p != gang->second.end()) p->second.node.clear();
    }
  }
  stats_.bindings += static_cast<int64_t>(pending.op.bindings.size() - failed);
  if (failed > 0) retry_ = true;
}

}  // namespace muster::control
