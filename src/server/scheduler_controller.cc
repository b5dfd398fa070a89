#include "server/scheduler_controller.h"

#include <chrono>
#include <functional>
#include <iostream>

#include "control/workload_objects.h"
#include "server/emulated_executor.h"
#include "server/local_executor.h"
#include "server/metrics.h"
#include "server/pod_paths.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

std::string ObjectId(const std::string& resource, const std::string& ns, const std::string& name) {
  return resource + "/" + ns + "/" + name;
}

int64_t GenerationOf(const json& object) {
  return object.value("metadata", json::object()).value("generation", int64_t{0});
}

// What the engine reads of a configuration object: status writes (our own queue
// counts) must not rebuild the engine. Node allocatable lives in status, so nodes
// keep it.
std::string Significant(const std::string& resource, json object) {
  if (object.contains("metadata")) {
    for (const char* f : {"resourceVersion", "generation", "managedFields", "creationTimestamp"})
      object["metadata"].erase(f);
  }
  if (resource != "nodes") object.erase("status");
  return object.dump();
}

}  // namespace

Time SchedulerController::WallClock::Now() const {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

SchedulerController::~SchedulerController() { Stop(); }

std::string SchedulerController::Now() const { return control::Rfc3339(clock_.Now()); }

void SchedulerController::Log(const std::string& line) {
  std::cerr << "muster serve: scheduler: " << line << std::endl;
}

Status SchedulerController::Start(ServeContext& context) {
  store_ = &context.store;
  metrics_ = context.metrics;
  views_ = context.views;
  data_dir_ = context.data_dir;
  if (metrics_ != nullptr) DeclareSchedulerMetrics(*metrics_);
  processes_ = std::make_unique<ProcessSupervisor>(data_dir_ + "/pods");
  if (executor_kind_ == ExecutorKind::kEmulated) {
    executor_ = std::make_unique<EmulatedExecutor>(*store_);
  } else {
    executor_ = std::make_unique<LocalExecutor>(*store_, *processes_);
  }

  // Subscribe before reading, so no change between the read and the subscription is
  // lost; changes already reflected in the read are applied again harmlessly.
  subscription_ = store_->hub().Subscribe([this](const control::Change& change) {
    if (!control::IsConfigResource(change.resource) && !control::IsJobResource(change.resource))
      return;
    std::lock_guard<std::mutex> lock(mu_);
    changes_.push_back(change);
    cv_.notify_one();
  });
  std::map<std::string, RecoveredProcess> recovered;
  for (auto& p : processes_->Recover()) recovered[p.id] = p;
  Rebuild(recovered, /*at_start=*/true);
  PublishView();
  {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.clear();  // the rebuild read everything up to now
  }
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void SchedulerController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (subscription_ != 0 && store_ != nullptr) store_->hub().Unsubscribe(subscription_);
  subscription_ = 0;
  // Running processes are left running: a restarted server adopts them.
}

void SchedulerController::Rebuild(const std::map<std::string, RecoveredProcess>& recovered,
                                  bool at_start) {
  // What the engine is built from counts as seen, so the first status write of each
  // queue does not rebuild it again. Read before the snapshot: a change in between
  // then differs from `seen` and rebuilds once more (never the reverse).
  std::map<std::string, std::string> seen;
  for (const auto& resource : control::ConfigResources()) {
    auto list = store_->List(resource, "");
    if (!list.ok()) continue;
    for (const auto& o : list->items) {
      const json& m = o["metadata"];
      seen[ObjectId(resource, m.value("namespace", ""), m.value("name", ""))] =
          Significant(resource, o);
    }
  }
  auto snapshot = control::ReadStoreSnapshot(*store_);
  if (!snapshot.ok()) {
    Log("cannot read the store: " + snapshot.status().message());
    return;
  }
  for (const auto& [object, problem] : snapshot->problems)
    Log("ignoring " + object + ": " + problem);
  // The engine being replaced: gangs of jobs deleted since it last ran are stopped.
  std::unique_ptr<engine::Engine> previous_engine;
  auto parts = engine::BuildEngineParts(snapshot->config);
  if (!parts.ok()) {
    engine_error_ = "the cluster configuration is not usable: " + parts.status().message();
    Log(engine_error_);
    if (engine_ != nullptr) return;  // keep scheduling with the last good configuration
  } else {
    engine_error_.clear();
    previous_engine = std::move(engine_);
    engine::EngineOptions options;
    options.check_invariants = true;
    engine_ = std::make_unique<engine::Engine>(snapshot->config, std::vector<model::Workload>{},
                                               std::move(parts).value(), clock_, options);
    engine_->SetExecutor(executor_.get());
    config_ = snapshot->config;
    executor_->SetEngine(engine_.get());
    config_seen_ = std::move(seen);
    decisions_seen_ = 0;
  }

  std::map<std::string, JobState> previous = std::move(jobs_);
  jobs_.clear();
  job_keys_.clear();
  for (auto& sj : snapshot->jobs) {
    std::string key = sj.workload.key;
    if (jobs_.count(key) != 0) {
      Log("job " + sj.ref.kind + " " + key +
          " has the name of another job in its namespace; ignored");
      continue;
    }
    JobState job;
    if (auto it = previous.find(key); it != previous.end()) job = std::move(it->second);
    job.ref = sj.ref;
    auto object = store_->Get({sj.ref.resource, sj.ref.namespace_, sj.ref.name});
    if (object.ok()) job.object = *object;
    job.generation = GenerationOf(job.object);
    job.in_engine = false;
    auto wl = store_->Get(
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
    if (engine_ != nullptr && !stored.finished) AddJob(stored, std::move(sj.workload));
  }
  // Gangs that were running: adopt them where they run, in their recorded order.
  for (auto& [key, job] : jobs_) {
    if (job.in_engine) AdoptFromStore(key, job, recovered, at_start);
  }
  // Processes nobody adopted (their job is gone or could not be adopted) are stopped.
  if (at_start) {
    std::set<std::string> owned;
    for (const auto& [key, job] : jobs_) {
      const auto* r = engine_ ? engine_->Find(key) : nullptr;
      if (r == nullptr || r->phase != engine::Phase::kRunning) continue;
      for (auto& id : GangProcessIds(r->workload, r->plan)) owned.insert(std::move(id));
    }
    for (const auto& [id, p] : recovered) {
      if (!p.running || orphans_.count(id) != 0 || owned.count(id) != 0) continue;
      Log("stopping process " + id + ": no running job owns it any more");
      processes_->Terminate(id, 10);
      orphans_.insert(id);
    }
  }
  // Jobs of the previous engine that are gone from the store (deleted meanwhile).
  if (!at_start) {
    for (auto& [key, job] : previous) {
      if (jobs_.count(key) == 0) {
        // Deleted between the change that caused this rebuild and the read: its
        // deletion arrives later as an unknown job, so its gang is stopped here.
        const engine::Engine* old = previous_engine ? previous_engine.get() : engine_.get();
        const engine::WorkloadRecord* r = old != nullptr ? old->Find(key) : nullptr;
        if (r != nullptr && r->Active())
          executor_->Stopped(*r, clock_.Now(), engine::StopCause::kDeleted);
        store_->Delete(
            {"workloads.kueue.x-k8s.io", job.ref.namespace_, control::WorkloadObjectName(job.ref)});
      }
    }
  }
}

void SchedulerController::AdoptFromStore(const std::string& key, JobState& job,
                                         const std::map<std::string, RecoveredProcess>& recovered,
                                         bool at_start) {
  // Null when the server stopped before the job's Workload object was first written.
  const json status = job.written_workload.is_object()
                          ? job.written_workload.value("status", json::object())
                          : json::object();
  if (!status.contains("admission") || !status.contains("placement")) return;
  const engine::WorkloadRecord* record = engine_->Find(key);
  if (record == nullptr) return;
  const model::Workload& w = record->workload;
  control::RecordedAdmission recorded = control::ReadRecordedAdmission(
      status["admission"], status["placement"].value("pods", json::array()), *record,
      engine_->cluster());
  const placement::GangPlan& plan = recorded.plan;
  Time now = clock_.Now();
  Status adopted = recorded.status.ok() ? engine_->Adopt(key, recorded.assignment, plan, now, now)
                                        : recorded.status;
  if (adopted.ok()) {
    if (at_start) executor_->Adopt(*engine_->Find(key), now, recovered);
    return;
  }
  Log("cannot adopt running " + key + " (" + adopted.message() + "): stopping it; it is requeued");
  if (at_start) {
    for (const auto& id : GangProcessIds(w, plan)) {
      auto it = recovered.find(id);
      if (it != recovered.end() && it->second.running) {
        processes_->Terminate(id, 30);
        orphans_.insert(id);
      }
    }
  } else {
    // The executor still runs the old gang: stop it like an eviction.
    engine::WorkloadRecord old = *record;
    old.plan = plan;
    executor_->Stopped(old, now, engine::StopCause::kEvicted);
  }
}

void SchedulerController::AddJob(JobState& job, model::Workload workload) {
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

void SchedulerController::RemoveJob(const std::string& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  if (it->second.in_engine && engine_ != nullptr) engine_->RemoveWorkload(key);
  store_->Delete({"workloads.kueue.x-k8s.io", it->second.ref.namespace_,
                  control::WorkloadObjectName(it->second.ref)});
  job_keys_.erase(
      ObjectId(it->second.ref.resource, it->second.ref.namespace_, it->second.ref.name));
  jobs_.erase(it);
}

void SchedulerController::Apply(const control::Change& change, bool& rebuild) {
  if (control::IsConfigResource(change.resource)) {
    // Only what the engine reads counts: our own queue status writes must not
    // trigger a rebuild. Node allocatable lives in status, so nodes keep it.
    const std::string id = ObjectId(change.resource, change.namespace_, change.name);
    std::string significant = change.type == control::ChangeType::kDeleted
                                  ? ""
                                  : Significant(change.resource, change.object);
    auto it = config_seen_.find(id);
    if (it != config_seen_.end() && it->second == significant) return;
    if (significant.empty()) {
      config_seen_.erase(id);
    } else {
      config_seen_[id] = significant;
    }
    rebuild = true;
    return;
  }
  const std::string id = ObjectId(change.resource, change.namespace_, change.name);
  auto known = job_keys_.find(id);
  if (change.type == control::ChangeType::kDeleted) {
    if (known != job_keys_.end()) RemoveJob(known->second);
    return;
  }
  if (known != job_keys_.end()) {
    JobState& job = jobs_.at(known->second);
    job.object = change.object;
    int64_t generation = GenerationOf(change.object);
    if (generation == job.generation) return;  // status or metadata only (often our own write)
    job.generation = generation;
    const auto* r = engine_ ? engine_->Find(known->second) : nullptr;
    if (r != nullptr && r->phase != engine::Phase::kPending) {
      Log("spec of " + known->second +
          " changed while it runs or ran; the change applies when it is requeued");
      return;
    }
    // A pending job's spec changed: take the new spec (Kueue re-creates the Workload).
    std::string key = known->second;
    RemoveJob(key);
    control::Change again = change;
    again.type = control::ChangeType::kAdded;
    Apply(again, rebuild);
    return;
  }
  if (engine_ == nullptr) {
    rebuild = true;  // retried with the configuration at the next rebuild
    return;
  }
  auto workload = control::DecodeJob(change.object, config_);
  if (!workload.ok()) {
    Log("ignoring " + id + ": " + workload.status().message());
    return;
  }
  std::string key = workload->key;
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

void SchedulerController::HandleOutcomes(const std::vector<GangOutcome>& outcomes) {
  if (engine_ == nullptr) return;
  for (const auto& o : outcomes) {
    const auto* r = engine_->Find(o.key);
    if (r == nullptr || r->phase != engine::Phase::kRunning) continue;
    Status s = o.succeeded ? engine_->Succeed(o.key) : engine_->FailPods(o.key, o.message);
    if (!s.ok()) Log(o.key + ": " + s.message());
  }
}

void SchedulerController::PublishView() {
  if (views_ == nullptr) return;
  control::ViewInputs in;
  in.engine = engine_.get();
  in.config = &config_;
  in.now = clock_.Now();
  in.engine_error = engine_error_;
  views_->Publish(control::BuildSchedulerView(in, views_->Current().get()));
}

void SchedulerController::Loop() {
  bool dirty = true;
  auto last_cycle = std::chrono::steady_clock::now();
  // The controller's writes (pods, Workload objects, job and queue status, Events)
  // are derived state: one store transaction per phase instead of one commit (one
  // fsync) per object. If a batch fails nothing of it was stored: forget what was
  // "written" so the next sync writes it again.
  auto write_batch = [this](const std::function<void()>& writes) {
    Status s = store_->Batch(writes);
    if (s.ok()) return;
    Log("writing status: " + s.message());
    for (auto& [key, job] : jobs_) {
      job.written_workload = nullptr;
      job.written_status.clear();
    }
    written_queue_status_.clear();
  };
  // Under load, a cycle and its status sync (which holds the store for its batch)
  // are followed by a pause as long as they took, so the API gets at least half of
  // the store however long the sync grows; changes queue meanwhile.
  auto next_cycle = std::chrono::steady_clock::now();
  while (true) {
    std::deque<control::Change> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (std::chrono::steady_clock::now() < next_cycle) {
        cv_.wait_until(lock, next_cycle, [this] { return stopping_; });
      } else {
        cv_.wait_for(lock, std::chrono::milliseconds(100),
                     [this] { return stopping_ || !changes_.empty(); });
      }
      if (stopping_) return;
      changes.swap(changes_);
    }
    bool rebuild = false;
    for (const auto& c : changes) Apply(c, rebuild);
    if (rebuild) Rebuild({}, /*at_start=*/false);
    dirty = dirty || !changes.empty();

    std::vector<GangOutcome> outcomes;
    write_batch([&] {
      outcomes = executor_->Poll(clock_.Now());
      HandleOutcomes(outcomes);
    });
    dirty = dirty || !outcomes.empty() || executor_->changes() != executor_changes_;
    auto now = std::chrono::steady_clock::now();
    if (engine_ != nullptr && (dirty || now - last_cycle > std::chrono::seconds(1))) {
      auto begin = std::chrono::steady_clock::now();
      if (Status s = engine_->RunCycle(); !s.ok()) Log("scheduling cycle: " + s.message());
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      last_cycle = now;
      // Gangs the cycle started launch now rather than at the next tick.
      std::vector<GangOutcome> more;
      write_batch([&] {
        more = executor_->Poll(clock_.Now());
        HandleOutcomes(more);
        executor_changes_ = executor_->changes();
        SyncStatus(seconds);
      });
      dirty = !more.empty();
      PublishView();
      auto end = std::chrono::steady_clock::now();
      next_cycle = end + (end - begin);
    }
  }
}

}  // namespace muster::server
