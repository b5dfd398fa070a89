// The reconciler's input half: building from a view at start-up, and jobs, pods and
// Workloads as their changes arrive.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "control/gang_binder.h"
#include "control/job_templates.h"
#include "control/json_fields.h"
#include "control/pod_workloads.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/resource_types.h"
#include "control/trainjob_status.h"
#include "control/workload_objects.h"

namespace muster::control {

using json = nlohmann::json;

namespace {

std::string ObjectId(const std::string& resource, const std::string& ns, const std::string& name) {
  return resource + "/" + ns + "/" + name;
}

bool OwnedByJobSet(const json& job) {
  for (const auto& o :
       job.value("metadata", json::object()).value("ownerReferences", json::array())) {
    if (o.is_object() && o.value("kind", "") == "JobSet") return true;
  }
  return false;
}

// The job's own controller finished it (cluster mode): nullopt while it runs; true
// on success.
std::optional<bool> JobFinished(const json& job, std::string& message) {
  const std::string kind = job.value("kind", "");
  const json status = job.value("status", json::object());
  if (!status.is_object()) return std::nullopt;
  if (kind == "Job" && status.contains("state")) {  // Volcano
    std::string phase = status["state"].value("phase", "");
    if (phase == "Completed") return true;
    if (phase == "Failed" || phase == "Aborted" || phase == "Terminated") {
      message = "Volcano Job " + phase;
      return false;
    }
    return std::nullopt;
  }
  for (const auto& c : status.value("conditions", json::array())) {
    if (!c.is_object() || c.value("status", "") != "True") continue;
    const std::string type = c.value("type", "");
    if (type == "Complete" || type == "Completed" || type == "Succeeded") return true;
    if (type == "Failed") {
      message = c.value("message", c.value("reason", "the job failed"));
      return false;
    }
  }
  return std::nullopt;
}

bool WorkloadFinished(const json& workload) {
  if (!workload.is_object()) return false;
  for (const auto& c :
       workload.value("status", json::object()).value("conditions", json::array())) {
    if (c.is_object() && c.value("type", "") == "Finished" && c.value("status", "") == "True")
      return true;
  }
  return false;
}

JobRef RefOf(const std::string& resource, const json& object) {
  const json meta = object.value("metadata", json::object());
  return {resource,
          meta.value("namespace", ""),
          meta.value("name", ""),
          object.value("kind", ""),
          object.value("apiVersion", ""),
          meta.value("uid", "")};
}

}  // namespace

Reconciler::Reconciler(const Clock& clock, StatusSink& sink, GangRuntime* runtime,
                       ReconcilerOptions options)
    : clock_(clock), sink_(sink), runtime_(runtime), options_(std::move(options)) {}

Reconciler::~Reconciler() = default;

void Reconciler::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

std::string Reconciler::Now() const { return Rfc3339(clock_.Now()); }

std::vector<std::string> Reconciler::JobKeys() const {
  std::vector<std::string> out;
  for (const auto& [key, job] : jobs_) out.push_back(key);
  return out;
}

const json* Reconciler::WrittenWorkload(const std::string& key) const {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || it->second->workload.is_null()) return nullptr;
  return &it->second->workload;
}

Reconciler::ConditionSince Reconciler::StoredActiveCondition(const json& cluster_queue) {
  const json& status = ObjectField(cluster_queue, "status");
  auto conditions = status.find("conditions");
  if (conditions == status.end() || !conditions->is_array()) return {};
  for (const json& condition : *conditions) {
    if (StringField(condition, "type") != "Active") continue;
    std::string state = StringField(condition, "status");
    std::string time = StringField(condition, "lastTransitionTime");
    if (!state.empty() && !time.empty()) return {std::move(state), std::move(time)};
  }
  return {};
}

void Reconciler::Build(const ObjectReader& view) {
  view_ = &view;
  jobs_.clear();
  job_keys_.clear();
  dirty_.clear();
  config_objects_.clear();
  flavors_.clear();
  terminating_flavors_.clear();
  released_finalizers_.clear();
  cq_active_since_.clear();
  for (const auto& resource : ConfigResources()) {
    auto list = view.List(resource, "");
    if (!list.ok()) {
      Log("cannot read " + resource + ": " + list.status().message());
      continue;
    }
    for (const auto& o : list->items) {
      const json& m = o["metadata"];
      Change c;
      c.type = ChangeType::kAdded;
      c.resource = resource;
      c.namespace_ = m.value("namespace", "");
      c.name = m.value("name", "");
      c.SetObject(o);
      ApplyConfig(c);
      if (resource == "clusterqueues.kueue.x-k8s.io") {
        ConditionSince stored = StoredActiveCondition(o);
        if (!stored.time.empty()) cq_active_since_[c.name] = std::move(stored);
      }
    }
  }
  config_dirty_ = false;
  engine_.reset();
  Reconfigure();  // no engine yet: creates it

  std::map<std::string, std::string> problems;
  std::vector<SnapshotJob> snapshot = ReadJobs(view, config_, problems);
  std::vector<JobState*> added;
  for (auto& sj : snapshot) {
    auto object = view.Get({sj.ref.resource, sj.ref.namespace_, sj.ref.name});
    if (!object.ok() || !Managed(*object, sj.workload)) continue;
    auto wl = view.Get({kWorkloads, sj.ref.namespace_, WorkloadObjectName(sj.ref)});
    // As ApplyJob: a job being deleted is adopted only if it had its Workload.
    if (DeletingDependents(*object) || (BeingDeleted(*object) && !wl.ok())) continue;
    if (jobs_.count(sj.workload.key) != 0) {
      Log("job " + sj.ref.kind + " " + sj.workload.key +
          " has the name of another job in its namespace; ignored");
      continue;
    }
    Change c;
    c.type = ChangeType::kAdded;
    c.resource = sj.ref.resource;
    c.namespace_ = sj.ref.namespace_;
    c.name = sj.ref.name;
    c.SetObject(std::move(*object));
    JobState& job = AddJob(ObjectId(c.resource, c.namespace_, c.name), c, sj.workload);
    if (wl.ok()) {
      job.workload = std::move(*wl);
      job.finished = WorkloadFinished(job.workload);
    }
    added.push_back(&job);
  }
  // TrainJobs whose runtime is missing wait with a condition.
  without_runtime_.clear();
  if (auto trainjobs = view.List(kTrainJobs, ""); trainjobs.ok()) {
    for (auto& o : trainjobs->items) {
      Change c;
      c.type = ChangeType::kAdded;
      c.resource = kTrainJobs;
      c.namespace_ = o["metadata"].value("namespace", "");
      c.name = o["metadata"].value("name", "");
      if (job_keys_.count(ObjectId(c.resource, c.namespace_, c.name)) != 0) continue;
      c.SetObject(std::move(o));
      auto workload = DecodeJob(c.Object(), config_);
      if (!workload.ok() && workload.status().code() == StatusCode::kNotFound) {
        ParkWithoutRuntime(ObjectId(c.resource, c.namespace_, c.name), c,
                           workload.status().message());
      }
    }
  }
  // The other jobs whose Workload could not be composed (labels are ObjectIds).
  uncomposed_.clear();
  for (const auto& [label, problem] : problems) {
    if (without_runtime_.count(label) != 0) continue;
    const size_t first = label.find('/'), last = label.rfind('/');
    auto object = first == last
                      ? Result<json>(NotFound(label))
                      : view.Get({label.substr(0, first), label.substr(first + 1, last - first - 1),
                                  label.substr(last + 1)});
    if (!object.ok()) {
      Log("ignoring " + label + ": " + problem);  // a list that could not be read
      continue;
    }
    Change c;
    c.type = ChangeType::kAdded;
    c.resource = label.substr(0, first);
    c.namespace_ = label.substr(first + 1, last - first - 1);
    c.name = label.substr(last + 1);
    c.SetObject(std::move(*object));
    ParkUncomposed(label, c, problem);
  }
  // Bare pods: gangs whose pods all exist are jobs like the others (after them).
  pod_gangs_.clear();
  bare_pods_.clear();
  waiting_pod_gangs_.clear();
  if (auto pods = view.List("pods", ""); pods.ok()) {
    for (const auto& p : pods->items) {
      if (!IntakeBarePod(p)) continue;
      const json& m = p["metadata"];
      waiting_pod_gangs_.insert(
          bare_pods_.at(m.value("namespace", "") + "/" + m.value("name", "")));
    }
  }
  for (auto& [key, gang] : pod_gangs_) {
    std::string why;
    std::optional<int32_t> size = PodGroupSize(gang.id, config_, why);
    if (!gang.id.problem.empty() || !size || static_cast<int32_t>(gang.pods.size()) < *size)
      continue;
    JobState* job = FormPodJob(key);
    if (job == nullptr) continue;
    waiting_pod_gangs_.erase(key);
    auto wl = view.Get({kWorkloads, job->ref.namespace_, WorkloadObjectName(job->ref)});
    if (wl.ok()) {
      job->workload = std::move(*wl);
      job->finished = WorkloadFinished(job->workload);
    }
    added.push_back(job);
  }
  if (options_.mode == ReconcilerMode::kCluster) {
    gang_pods_.clear();
    pod_gang_.clear();
    if (auto pods = view.List("pods", ""); pods.ok()) {
      for (auto& p : pods->items) {
        Change c;
        c.type = ChangeType::kAdded;
        c.resource = "pods";
        c.namespace_ = p["metadata"].value("namespace", "");
        c.name = p["metadata"].value("name", "");
        c.SetObject(std::move(p));
        ApplyPod(c);
      }
    }
  }
  if (engine_ == nullptr) return;
  // Jobs in arrival order, then the gangs that run adopted where they run.
  for (JobState* job : added) {
    if (!job->finished) {
      auto workload = DecodeState(*job);
      if (workload.ok()) SubmitToEngine(*job, std::move(workload).value());
    }
  }
  int adopted = 0;
  for (JobState* job : added) {
    if (!job->in_engine) continue;
    AdoptRunning(*job);
    const engine::WorkloadRecord* r = engine_->Find(job->key);
    if (r != nullptr && r->phase == engine::Phase::kRunning) ++adopted;
  }
  if (adopted > 0) Log("adopted " + std::to_string(adopted) + " running gangs where they run");
  for (JobState* job : added) {
    // waitForPodsReady's requeue count, backoff and deactivation survive a restart.
    if (!job->in_engine || !job->workload.is_object()) continue;
    engine::Engine::RequeueState rs = ReadRequeueState(job->workload);
    if (rs.count == 0 && !rs.requeue_at && !rs.deactivated) continue;
    if (Status s = engine_->RestoreRequeueState(job->key, rs); !s.ok()) Log(s.message());
  }
  for (JobState* job : added) {
    CheckFinished(*job);
    dirty_.insert(job->key);
  }
  queues_dirty_ = true;
}

// A gang that already runs (a restart, a leader change): its Workload object records
// the admission and the placement (serve: status.placement; cluster: an annotation,
// since Kueue's structural schema would prune an unknown status field).
void Reconciler::AdoptRunning(JobState& job) {
  if (!job.workload.is_object()) return;  // stopped before its Workload was first written
  const bool cluster = options_.mode == ReconcilerMode::kCluster;
  if (cluster && IsSuspended(job.Object())) return;
  const json status = job.workload.value("status", json::object());
  if (!status.is_object() || !status.contains("admission")) return;
  json placement;
  if (cluster) {
    const json annotations =
        job.workload.value("metadata", json::object()).value("annotations", json::object());
    if (!annotations.is_object() || !annotations.value(kPlacementAnnotation, json()).is_string())
      return;
    placement = json::parse(annotations[kPlacementAnnotation].get<std::string>(), nullptr,
                            /*allow_exceptions=*/false);
  } else {
    if (!status.contains("placement") || !status["placement"].is_object()) return;
    placement = status["placement"].value("pods", json::array());
  }
  const engine::WorkloadRecord* record = engine_->Find(job.key);
  if (record == nullptr) return;
  RecordedAdmission recorded =
      ReadRecordedAdmission(status["admission"], placement, *record, engine_->cluster());
  const Time now = clock_.Now();
  Status adopted = recorded.status.ok()
                       ? engine_->Adopt(job.key, recorded.assignment, recorded.plan, now, now)
                       : recorded.status;
  if (adopted.ok()) {
    job.admission_written = true;
    job.workload_admit_epoch = job.admit_epoch;
    if (runtime_ != nullptr) runtime_->Adopt(*engine_->Find(job.key), now);
    return;
  }
  // It runs but can no longer be adopted: stop it; it is requeued.
  Log("cannot adopt running " + job.key + " (" + adopted.message() + "): stopping it; it is " +
      "requeued");
  if (runtime_ != nullptr) {
    engine::WorkloadRecord old = *record;
    old.plan = recorded.plan;
    runtime_->Stopped(old, now, engine::StopCause::kEvicted);
  }
  // Cluster mode: the job is unsuspended; the stop chain suspends it (the record is
  // pending and the job is not).
}

bool Reconciler::Managed(const json& job_object, const model::Workload& workload) const {
  if (options_.mode == ReconcilerMode::kServe) return true;
  if (job_object.value("kind", "") == "Job" &&
      job_object.value("apiVersion", "").rfind("batch/", 0) == 0 && OwnedByJobSet(job_object))
    return false;  // the JobSet is the workload
  if (!workload.local_queue.empty() || !workload.volcano_queue.empty()) return true;
  return options_.manage_jobs_without_queue_name;
}

Reconciler::JobState& Reconciler::AddJob(const std::string& id, const Change& change,
                                         const model::Workload& workload) {
  auto job = std::make_unique<JobState>();
  job->ref = RefOf(change.resource, change.Object());
  job->key = workload.key;
  job->object = change.shared_object;
  job->generation = GenerationOf(change.Object());
  job_keys_[id] = job->key;
  JobState& stored = *jobs_.emplace(job->key, std::move(job)).first->second;
  stats_.jobs = jobs_.size();
  NoteDeadline(stored);
  return stored;
}

void Reconciler::SubmitToEngine(JobState& job, model::Workload workload) {
  if (engine_ == nullptr) return;
  if (options_.mode == ReconcilerMode::kCluster) {
    // Restarts after failures are the job controller's (backoffLimit,
    // restartPolicy): a job it failed is failed for good here.
    workload.lifecycle.max_restarts = 0;
    workload.lifecycle.restart_on_failure = false;
  }
  workload.meta.order = next_order_++;
  std::string key = workload.key;
  if (Status s = engine_->AddWorkload(std::move(workload)); !s.ok()) {
    Log("cannot schedule " + key + ": " + s.message());
    return;
  }
  if (Status s = engine_->Submit(key); !s.ok()) {
    Log("cannot submit " + key + ": " + s.message());
    return;
  }
  job.in_engine = true;
  dirty_.insert(key);
}

// `key` is taken by value: callers pass the value of a job_keys_ entry, which this
// function erases.
void Reconciler::RemoveJob(std::string key) {  // NOLINT(performance-unnecessary-value-param)
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  JobState& job = *it->second;
  if (job.in_engine && engine_ != nullptr) {
    engine_->RemoveWorkload(key);
    // What it held or blocked may admit a job that waits: decide in this step, not at
    // the next resync.
    cycle_needed_ = true;
  }
  if (runtime_ != nullptr) runtime_->Forget(key);
  // The Workload is owned by the job (garbage-collected with it); deleting it here
  // also covers API servers without a garbage collector, and the serve store.
  if (!job.workload.is_null() || job.workload_op != 0) {
    WriteOp op;
    op.kind = WriteKind::kDeleteWorkload;
    op.resource = kWorkloads;
    op.namespace_ = job.ref.namespace_;
    op.name = WorkloadObjectName(job.ref);
    Submit(nullptr, std::move(op));
  }
  job_keys_.erase(ObjectId(job.ref.resource, job.ref.namespace_, job.ref.name));
  dirty_.erase(key);
  ForgetDeadline(key);
  jobs_.erase(it);
  stats_.jobs = jobs_.size();
  queues_dirty_ = true;
}

void Reconciler::CheckFinished(JobState& job) {
  if (options_.mode != ReconcilerMode::kCluster || !job.in_engine || job.finished) return;
  const engine::WorkloadRecord* r = engine_ ? engine_->Find(job.key) : nullptr;
  if (r == nullptr || r->phase != engine::Phase::kRunning) return;
  std::string message;
  auto finished = JobFinished(job.Object(), message);
  if (!finished) return;
  Status s = *finished ? engine_->Succeed(job.key) : engine_->FailPods(job.key, message);
  if (!s.ok()) Log(job.key + ": " + s.message());
  dirty_.insert(job.key);
}

void Reconciler::Apply(const Change& change) {
  if (change.resource == "pods") {
    ApplyBarePod(change);  // first: the binder below finds a bare pod's gang
    if (options_.mode == ReconcilerMode::kCluster) ApplyPod(change);
    return;
  }
  if (change.resource == kWorkloads) return ApplyWorkload(change);
  if (IsConfigResource(change.resource)) {
    if (ApplyConfig(change)) config_dirty_ = true;
    return;
  }
  if (IsJobResource(change.resource)) ApplyJob(change);
}

// Our own writes come back here. A Workload deleted by someone else is written again
// at the next sync (Kueue re-creates it too).
void Reconciler::ApplyWorkload(const Change& change) {
  if (change.type != ChangeType::kDeleted) return;
  auto owner = jobs_.end();
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (it->second->ref.namespace_ == change.namespace_ &&
        WorkloadObjectName(it->second->ref) == change.name)
      owner = it;
  }
  if (owner == jobs_.end() || owner->second->workload_op != 0) return;
  owner->second->workload = json();
  dirty_.insert(owner->first);
}

void Reconciler::ApplyJob(const Change& change) {
  const std::string id = ObjectId(change.resource, change.namespace_, change.name);
  auto known = job_keys_.find(id);
  // Deleted, or deleted in Foreground (the garbage collector takes its Workload and
  // pods now, and nothing may bring them back): forgotten, its quota released.
  if (change.type == ChangeType::kDeleted || DeletingDependents(change.Object())) {
    without_runtime_.erase(id);
    uncomposed_.erase(id);
    if (known == job_keys_.end()) return;
    const std::string key = known->second;
    // Deleted with its dependents orphaned: its running pods run on (reconciler_orphans.cc).
    std::vector<nlohmann::json> orphans = change.type == ChangeType::kDeleted
                                              ? LetGoOrphans(key, change.Object())
                                              : std::vector<nlohmann::json>{};
    RemoveJob(key);
    TakeInOrphans(orphans);
    return;
  }
  // Being deleted, held by another finalizer: one that runs runs on (Kueue keeps its
  // Workload), a new one is not taken (Kueue makes no Workload for it).
  if (known == job_keys_.end() && BeingDeleted(change.Object())) return;
  if (known != job_keys_.end()) {
    const std::string key = known->second;
    JobState& job = *jobs_.at(key);
    const int64_t generation = GenerationOf(change.Object());
    // Generations only grow: the watch event of our own earlier write (a suspend,
    // then a restore) arriving after the later write's answer is old news.
    if (generation < job.generation) return;
    job.object = change.shared_object;
    NoteDeadline(job);
    CheckFinished(job);
    if (generation == job.generation) return;  // status or metadata (often our own write)
    job.generation = generation;
    const engine::WorkloadRecord* r = engine_ ? engine_->Find(key) : nullptr;
    if (options_.mode == ReconcilerMode::kCluster) {
      // Our own admission and suspend writes change the spec too: only a change by
      // someone else of a job that waits (suspended) or was refused is taken.
      if (job.job_op != 0) return;
      if (job.parked.empty() &&
          (r == nullptr || r->phase != engine::Phase::kPending || !IsSuspended(change.Object())))
        return;
    } else if (r != nullptr && r->phase != engine::Phase::kPending) {
      Log("spec of " + key + " changed while it runs or ran; the change applies when it is " +
          "requeued");
      return;
    }
    if (!DecodeJob(change.Object(), config_, change.decoded.get()).ok()) return;
    // A waiting job's spec changed: take the new spec (Kueue re-creates the Workload).
    RemoveJob(key);
  }
  auto workload = DecodeJob(change.Object(), config_, change.decoded.get());
  if (!workload.ok() && workload.status().code() == StatusCode::kNotFound &&
      IsTrainJob(change.Object())) {
    return ParkWithoutRuntime(id, change, workload.status().message());
  }
  without_runtime_.erase(id);
  if (!workload.ok()) return ParkUncomposed(id, change, workload.status().message());
  uncomposed_.erase(id);
  if (!Managed(change.Object(), *workload)) return;
  if (jobs_.count(workload->key) != 0) {
    Log("ignoring " + id + ": another job in namespace " + change.namespace_ + " is named " +
        change.name);
    return;
  }
  JobState& job = AddJob(id, change, *workload);
  SubmitToEngine(job, std::move(workload).value());
  queues_dirty_ = true;
}

void Reconciler::ApplyPod(const Change& change) {
  const std::string pod_id = change.namespace_ + "/" + change.name;
  bool freed = false;  // a pod left a node (or stopped holding it)
  if (auto old = pod_gang_.find(pod_id); old != pod_gang_.end()) {
    auto gang = gang_pods_.find(old->second);
    if (gang != gang_pods_.end()) {
      auto pod = gang->second.find(change.name);
      if (pod != gang->second.end()) {
        if (!pod->second.node.empty() && !pod->second.terminal) {
          auto on_node = node_gangs_.find(pod->second.node);
          if (on_node != node_gangs_.end() && --on_node->second[old->second] <= 0) {
            on_node->second.erase(old->second);
            if (on_node->second.empty()) node_gangs_.erase(on_node);
          }
          freed = true;
        }
        gang->second.erase(pod);
      }
      if (gang->second.empty()) gang_pods_.erase(gang);
    }
    dirty_.insert(old->second);
    pod_gang_.erase(old);
  }
  if (change.type != ChangeType::kDeleted) {
    std::optional<PodIdentity> identity = IdentifyPod(change.Object());
    if (!identity) identity = BarePodIdentity(pod_id);
    if (identity) {
      const std::string key = change.namespace_ + "/" + identity->job_name;
      WatchedPod view = MakeWatchedPod(change.Object(), *identity);
      if (!view.node.empty() && !view.terminal) {
        ++node_gangs_[view.node][key];
        freed = false;
      }
      gang_pods_[key][change.name] = std::move(view);
      pod_gang_[pod_id] = key;
      if (jobs_.count(key) != 0) dirty_.insert(key);
    }
  }
  // Gangs held back by pods of stopped gangs look again.
  if (freed) dirty_.insert(waiting_for_nodes_.begin(), waiting_for_nodes_.end());
}

void Reconciler::ParkWithoutRuntime(const std::string& id, const Change& change,
                                    const std::string& why) {
  auto known = without_runtime_.find(id);
  const bool unchanged = known != without_runtime_.end() && known->second.second == why;
  without_runtime_[id] = {change, why};
  if (unchanged) return;
  Log(id + " waits: " + why);
  // Upstream's message names the runtime; the TrainJob waits until it is created.
  std::string message = why.substr(
      why.find("spec.runtimeRef: ") == std::string::npos ? 0 : why.find("spec.runtimeRef: ") + 17);
  json waiting =
      TrainJobWaitingForRuntime(change.Object(), message + "; the TrainJob waits for it", Now());
  if (waiting.value("status", json::object()) == change.Object().value("status", json::object()))
    return;
  WriteOp op;
  op.kind = WriteKind::kJobStatus;
  op.resource = change.resource;
  op.namespace_ = change.namespace_;
  op.name = change.name;
  op.object = std::move(waiting);
  Submit(nullptr, std::move(op));
}

void Reconciler::ParkUncomposed(const std::string& id, const Change& change,
                                const std::string& why) {
  const json& object = change.Object();
  // In a cluster, only a job muster would manage is reported (Kueue composes none
  // other): one with a queue name, unless every job is managed.
  if (options_.mode == ReconcilerMode::kCluster &&
      (OwnedByJobSet(object) || (!options_.manage_jobs_without_queue_name &&
                                 StringField(ObjectField(ObjectField(object, "metadata"), "labels"),
                                             "kueue.x-k8s.io/queue-name")
                                     .empty()))) {
    Log("ignoring " + id + ": " + why);
    return;
  }
  auto known = uncomposed_.find(id);
  const bool unchanged = known != uncomposed_.end() && known->second.second == why;
  uncomposed_[id] = {change, why};
  if (unchanged) return;
  Log("ignoring " + id + ": " + why);
  const EventSource source{StringField(object, "apiVersion"), StringField(object, "kind"),
                           "muster-scheduler"};
  SubmitEventObject(ObjectEvent(object, source, "Warning", "ErrWorkloadCompose", why, clock_.Now(),
                                ++event_counter_),
                    change.namespace_);
}

void Reconciler::RetryUncomposed() {
  std::vector<Change> waiting;
  for (const auto& [id, parked] : uncomposed_) waiting.push_back(parked.first);
  for (const Change& change : waiting) ApplyJob(change);
}

void Reconciler::RetryWithoutRuntime() {
  std::vector<Change> waiting;
  for (const auto& [id, parked] : without_runtime_) waiting.push_back(parked.first);
  for (const Change& change : waiting) ApplyJob(change);
}

}  // namespace muster::control
