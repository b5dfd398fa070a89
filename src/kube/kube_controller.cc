#include "kube/kube_controller.h"

#include <chrono>
#include <iostream>

#include "control/workload_objects.h"
#include "kube/gang_binder.h"
#include "kube/job_templates.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;

std::string ObjectId(const std::string& resource, const std::string& ns, const std::string& name) {
  return resource + "/" + ns + "/" + name;
}

int64_t GenerationOf(const json& object) {
  return object.value("metadata", json::object()).value("generation", int64_t{0});
}

// What the engine reads of a configuration object. Node heartbeats and conditions
// change every few seconds and must not rebuild the engine: only labels, spec
// (taints, unschedulable) and allocatable capacity count; other kinds drop status.
std::string Significant(const std::string& resource, const json& object) {
  json meta = object.value("metadata", json::object());
  json kept = {{"labels", meta.value("labels", json::object())},
               {"annotations", meta.value("annotations", json::object())}};
  json out = {{"metadata", kept}, {"spec", object.value("spec", json())}};
  if (resource == "nodes") {
    const json status = object.value("status", json::object());
    out["allocatable"] = status.value("allocatable", json());
    out["capacity"] = status.value("capacity", json());
  } else {
    json copy = object;
    copy.erase("status");
    copy.erase("metadata");
    out["rest"] = std::move(copy);
  }
  return out.dump();
}

// The job's own controller finished it: nullopt while it runs; true on success.
std::optional<bool> JobFinished(const json& job, std::string& message) {
  const std::string kind = job.value("kind", "");
  const json status = job.value("status", json::object());
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
    if (c.value("status", "") != "True") continue;
    const std::string type = c.value("type", "");
    if (type == "Complete" || type == "Completed" || type == "Succeeded") return true;
    if (type == "Failed") {
      message = c.value("message", c.value("reason", "the job failed"));
      return false;
    }
  }
  return std::nullopt;
}

bool OwnedByJobSet(const json& job) {
  for (const auto& o :
       job.value("metadata", json::object()).value("ownerReferences", json::array())) {
    if (o.value("kind", "") == "JobSet") return true;
  }
  return false;
}

}  // namespace

Time KubeController::WallClock::Now() const {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

KubeController::KubeController(KubeClient& client, ObjectCache& cache, KubeOptions options)
    : client_(client), cache_(cache), options_(std::move(options)), writer_(client) {
  executor_ = std::make_unique<KubeExecutor>();
}

KubeController::~KubeController() { Stop(); }

std::string KubeController::Now() const { return control::Rfc3339(clock_.Now()); }

void KubeController::Log(const std::string& line) {
  std::cerr << "muster kube: " << line << std::endl;
}

void KubeController::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return;
    started_ = true;
    stopping_ = false;
  }
  cache_.Subscribe([this](const control::Change& change) {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.push_back(change);
    cv_.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
}

void KubeController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  cache_.Subscribe(nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  started_ = false;
}

KubeController::Stats KubeController::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

void KubeController::Loop() {
  auto last_cycle = std::chrono::steady_clock::now() - std::chrono::hours(1);
  bool dirty = true;
  while (true) {
    std::deque<control::Change> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100),
                   [this] { return stopping_ || !changes_.empty(); });
      if (stopping_) return;
      changes.swap(changes_);
    }
    if (!synced_) {
      // The first complete view: build the engine from it and adopt what runs.
      if (!cache_.Synced(options_.watched)) continue;
      synced_ = true;
      try {
        Rebuild();
      } catch (const std::exception& e) {
        Log("reading the cluster: " + std::string(e.what()));
      }
      dirty = true;
      continue;  // the changes queued so far are in the view Rebuild read
    }
    bool rebuild = false;
    for (const auto& c : changes) {
      // Objects come from anyone with API access: one of an unexpected shape is
      // logged and skipped, never allowed to stop the scheduler.
      try {
        Apply(c, rebuild);
      } catch (const std::exception& e) {
        Log("ignoring a change of " + c.resource + " " + c.namespace_ + "/" + c.name + ": " +
            e.what());
      }
    }
    if (rebuild) {
      try {
        Rebuild();
      } catch (const std::exception& e) {
        Log("reading the cluster: " + std::string(e.what()));
      }
    }
    dirty = dirty || !changes.empty();
    auto now = std::chrono::steady_clock::now();
    if (engine_ != nullptr &&
        (dirty || now - last_cycle > std::chrono::duration<double>(options_.resync_seconds))) {
      Step();
      last_cycle = now;
      dirty = !executor_->pending().empty();  // a write to retry
    }
  }
}

void KubeController::Step() {
  if (Status s = engine_->RunCycle(); !s.ok()) Log("scheduling cycle: " + s.message());
  ++stats_.cycles;
  try {
    Sync();
  } catch (const std::exception& e) {
    Log("writing decisions: " + std::string(e.what()) + " (retried next pass)");
  }
  stats_.synced = synced_;
  PublishView();
  std::lock_guard<std::mutex> lock(mu_);
  published_ = stats_;
}

void KubeController::PublishView() {
  if (options_.views == nullptr) return;
  control::ViewInputs in;
  in.engine = engine_.get();
  in.config = &config_;
  in.now = clock_.Now();
  options_.views->Publish(control::BuildSchedulerView(in, options_.views->Current().get()));
}

bool KubeController::Managed(const json& job_object, const model::Workload& workload) const {
  if (job_object.value("kind", "") == "Job" &&
      job_object.value("apiVersion", "").rfind("batch/", 0) == 0 && OwnedByJobSet(job_object))
    return false;  // the JobSet is the workload
  if (!workload.local_queue.empty() || !workload.volcano_queue.empty()) return true;
  return options_.manage_jobs_without_queue_name;
}

void KubeController::Rebuild() {
  auto snapshot = control::ReadStoreSnapshot(cache_);
  if (!snapshot.ok()) {
    Log("cannot read the cluster view: " + snapshot.status().message());
    return;
  }
  for (const auto& [object, problem] : snapshot->problems)
    Log("ignoring " + object + ": " + problem);
  auto parts = engine::BuildEngineParts(snapshot->config);
  if (!parts.ok()) {
    Log("the cluster configuration is not usable: " + parts.status().message());
    if (engine_ != nullptr) return;  // keep scheduling with the last good configuration
    return;
  }
  engine::EngineOptions eo;
  eo.check_invariants = true;
  engine_ = std::make_unique<engine::Engine>(snapshot->config, std::vector<model::Workload>{},
                                             std::move(parts).value(), clock_, eo);
  engine_->SetExecutor(executor_.get());
  executor_->pending().clear();
  config_ = snapshot->config;
  decisions_seen_ = 0;
  flavors_.clear();
  if (auto list = cache_.List("resourceflavors.kueue.x-k8s.io", ""); list.ok()) {
    for (auto& f : list->items) flavors_[f["metadata"].value("name", "")] = f;
  }
  // Config objects seen so far count as seen (their changes were part of this read).
  config_seen_.clear();
  for (const auto& resource : options_.watched) {
    if (!control::IsConfigResource(resource)) continue;
    if (auto list = cache_.List(resource, ""); list.ok()) {
      for (const auto& o : list->items) {
        const json& m = o["metadata"];
        config_seen_[ObjectId(resource, m.value("namespace", ""), m.value("name", ""))] =
            Significant(resource, o);
      }
    }
  }

  std::map<std::string, JobState> previous = std::move(jobs_);
  jobs_.clear();
  job_keys_.clear();
  for (auto& sj : snapshot->jobs) {
    auto object = cache_.Get({sj.ref.resource, sj.ref.namespace_, sj.ref.name});
    if (!object.ok() || !Managed(*object, sj.workload)) continue;
    const std::string key = sj.workload.key;
    if (jobs_.count(key) != 0) {
      Log("job " + sj.ref.kind + " " + key +
          " has the name of another job in its namespace; ignored");
      continue;
    }
    JobState job;
    if (auto it = previous.find(key); it != previous.end()) job = std::move(it->second);
    job.ref = sj.ref;
    job.object = *object;
    job.generation = GenerationOf(job.object);
    job.in_engine = false;
    job.admission_written = false;
    job.eviction_pending = false;
    auto wl = cache_.Get(
        {"workloads.kueue.x-k8s.io", sj.ref.namespace_, control::WorkloadObjectName(sj.ref)});
    if (wl.ok()) {
      job.written_workload = *wl;
      for (const auto& c : wl->value("status", json::object()).value("conditions", json::array())) {
        if (c.value("type", "") == "Finished" && c.value("status", "") == "True")
          job.finished = true;
      }
    }
    job_keys_[ObjectId(sj.ref.resource, sj.ref.namespace_, sj.ref.name)] = key;
    auto& stored = jobs_.emplace(key, std::move(job)).first->second;
    sj.workload.meta.order = next_order_++;
    if (!stored.finished) AddJob(stored, std::move(sj.workload));
  }
  adopted_.clear();
  for (auto& [key, job] : jobs_) {
    if (job.in_engine) Adopt(key, job);
  }
  // Pods: rebuild the gang index from the cache.
  gang_pods_.clear();
  pod_gang_.clear();
  if (auto pods = cache_.List("pods", ""); pods.ok()) {
    for (const auto& p : pods->items) {
      control::Change c;
      c.type = control::ChangeType::kAdded;
      c.resource = "pods";
      c.namespace_ = p["metadata"].value("namespace", "");
      c.name = p["metadata"].value("name", "");
      c.object = p;
      ApplyPod(c);
    }
  }
  for (auto& [key, job] : jobs_) CheckFinished(key, job);
}

// A gang the cluster already runs (muster restarted, a leader changed, or the
// configuration changed): its Workload object records the admission and muster's
// placement annotation; the job is unsuspended. Adopted as running where it is.
void KubeController::Adopt(const std::string& key, JobState& job) {
  if (!job.written_workload.is_object() || IsSuspended(job.object)) return;
  const json status = job.written_workload.value("status", json::object());
  const json annotations =
      job.written_workload.value("metadata", json::object()).value("annotations", json::object());
  if (!status.contains("admission") || !annotations.is_object() ||
      !annotations.value("muster.dev/placement", json()).is_string())
    return;
  const engine::WorkloadRecord* record = engine_->Find(key);
  if (record == nullptr) return;
  json placement = json::parse(annotations["muster.dev/placement"].get<std::string>(), nullptr,
                               /*allow_exceptions=*/false);
  control::RecordedAdmission recorded =
      control::ReadRecordedAdmission(status["admission"], placement, *record, engine_->cluster());
  Time now = clock_.Now();
  Status adopted = recorded.status.ok()
                       ? engine_->Adopt(key, recorded.assignment, recorded.plan, now, now)
                       : recorded.status;
  if (adopted.ok()) {
    job.admission_written = true;
    adopted_.insert(key);
    return;
  }
  // It runs in the cluster but can no longer be adopted: suspend it; it is requeued.
  Log("cannot adopt running " + key + " (" + adopted.message() + "): suspending it");
  executor_->pending()[key] = KubeExecutor::Action::kSuspend;
}

void KubeController::AddJob(JobState& job, model::Workload workload) {
  // Restarts after failures are the job controller's (backoffLimit, restartPolicy):
  // a job it failed is failed for good here.
  workload.lifecycle.max_restarts = 0;
  workload.lifecycle.restart_on_failure = false;
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
}

void KubeController::RemoveJob(const std::string& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  if (it->second.in_engine && engine_ != nullptr) engine_->RemoveWorkload(key);
  executor_->pending().erase(key);
  // The Workload is owned by the job (garbage-collected with it); deleting it here
  // also covers API servers without a garbage collector.
  if (it->second.written_workload.is_object()) {
    Status s = writer_.Delete("workloads.kueue.x-k8s.io", it->second.ref.namespace_,
                              control::WorkloadObjectName(it->second.ref));
    if (!s.ok() && s.code() != StatusCode::kNotFound) Log(s.message());
  }
  job_keys_.erase(
      ObjectId(it->second.ref.resource, it->second.ref.namespace_, it->second.ref.name));
  jobs_.erase(it);
}

void KubeController::CheckFinished(const std::string& key, JobState& job) {
  if (!job.in_engine || job.finished) return;
  const engine::WorkloadRecord* r = engine_->Find(key);
  if (r == nullptr || r->phase != engine::Phase::kRunning) return;
  std::string message;
  auto finished = JobFinished(job.object, message);
  if (!finished) return;
  Status s = *finished ? engine_->Succeed(key) : engine_->FailPods(key, message);
  if (!s.ok()) Log(key + ": " + s.message());
}

void KubeController::Apply(const control::Change& change, bool& rebuild) {
  if (change.resource == "pods") return ApplyPod(change);
  if (change.resource == "workloads.kueue.x-k8s.io") {
    // Our own writes come back here. A Workload deleted by someone else is written
    // again at the next sync (Kueue re-creates it too).
    if (change.type != control::ChangeType::kDeleted) return;
    for (auto& [key, job] : jobs_) {
      if (job.ref.namespace_ == change.namespace_ &&
          control::WorkloadObjectName(job.ref) == change.name)
        job.written_workload = json();
    }
    return;
  }
  if (control::IsConfigResource(change.resource)) {
    const std::string id = ObjectId(change.resource, change.namespace_, change.name);
    std::string significant = change.type == control::ChangeType::kDeleted
                                  ? ""
                                  : Significant(change.resource, change.object);
    auto it = config_seen_.find(id);
    if (it != config_seen_.end() && it->second == significant) return;
    if (it == config_seen_.end() && significant.empty()) return;
    if (significant.empty()) {
      config_seen_.erase(id);
    } else {
      config_seen_[id] = significant;
    }
    rebuild = true;
    return;
  }
  if (control::IsJobResource(change.resource)) ApplyJob(change, rebuild);
}

void KubeController::ApplyJob(const control::Change& change, bool& rebuild) {
  const std::string id = ObjectId(change.resource, change.namespace_, change.name);
  auto known = job_keys_.find(id);
  if (change.type == control::ChangeType::kDeleted) {
    if (known != job_keys_.end()) RemoveJob(known->second);
    return;
  }
  if (known != job_keys_.end()) {
    const std::string key = known->second;
    JobState& job = jobs_.at(key);
    job.object = change.object;
    CheckFinished(key, job);
    int64_t generation = GenerationOf(change.object);
    // Generations only grow: the watch event of our own earlier write (a suspend
    // followed by a restore) arriving after the later write's answer is not news.
    if (generation <= job.generation) return;
    job.generation = generation;
    const auto* r = engine_ ? engine_->Find(key) : nullptr;
    // Our own admission / suspend writes change the spec too; only a pending job's
    // spec change by someone else is taken (Kueue re-creates the Workload).
    if (r == nullptr || r->phase != engine::Phase::kPending || !IsSuspended(change.object)) return;
    auto workload = control::DecodeJob(change.object, config_);
    if (!workload.ok()) return;
    RemoveJob(key);
    control::Change again = change;
    again.type = control::ChangeType::kAdded;
    ApplyJob(again, rebuild);
    return;
  }
  if (engine_ == nullptr) return;
  auto workload = control::DecodeJob(change.object, config_);
  if (!workload.ok()) {
    Log("ignoring " + id + ": " + workload.status().message());
    return;
  }
  if (!Managed(change.object, *workload)) return;
  const std::string key = workload->key;
  if (jobs_.count(key) != 0) {
    Log("ignoring " + id + ": another job in namespace " + change.namespace_ + " is named " +
        change.name);
    return;
  }
  JobState job;
  const json& meta = change.object.value("metadata", json::object());
  job.ref = {change.resource,
             change.namespace_,
             change.name,
             change.object.value("kind", ""),
             change.object.value("apiVersion", ""),
             meta.value("uid", "")};
  job.object = change.object;
  job.generation = GenerationOf(change.object);
  job_keys_[id] = key;
  auto& stored = jobs_.emplace(key, std::move(job)).first->second;
  workload->meta.order = next_order_++;
  AddJob(stored, std::move(workload).value());
}

void KubeController::ApplyPod(const control::Change& change) {
  const std::string pod_id = change.namespace_ + "/" + change.name;
  if (auto old = pod_gang_.find(pod_id); old != pod_gang_.end()) {
    gang_pods_[old->second].erase(change.name);
    pod_gang_.erase(old);
  }
  if (change.type == control::ChangeType::kDeleted) return;
  auto identity = IdentifyPod(change.object);
  if (!identity) return;
  const std::string key = change.namespace_ + "/" + identity->job_name;
  gang_pods_[key][change.name] = change.object;
  pod_gang_[pod_id] = key;
}

}  // namespace muster::kube
