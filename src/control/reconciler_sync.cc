// The reconciler's output half: Step(), write results, the decision log turned into
// dirty jobs and Events, and the writes both modes make (Workload objects, queue
// status; serve's job status).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "control/job_templates.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/volcano_queue_status.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

// metadata.resourceVersion, read in place ("" when absent).
std::string ResourceVersionOf(const json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : "";
}

void StripServerFields(json& object) {
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object())
    object["metadata"].erase("resourceVersion");
}

// a == b but for their "status" members, without copying either to erase it.
bool EqualExceptStatus(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) return a == b;
  auto significant = [](const json& o) { return o.size() - (o.contains("status") ? 1 : 0); };
  if (significant(a) != significant(b)) return false;
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (it.key() == "status") continue;
    auto other = b.find(it.key());
    if (other == b.end() || *other != it.value()) return false;
  }
  return true;
}

}  // namespace

uint64_t Reconciler::Submit(JobState* job, WriteOp op, int64_t epoch) {
  op.id = next_op_++;
  InFlight pending;
  pending.op = op;
  pending.job_key = job != nullptr ? job->key : "";
  pending.epoch = epoch;
  // Only what reading the result back needs is kept (not the object).
  pending.op.object = nullptr;
  in_flight_.emplace(op.id, std::move(pending));
  ++stats_.writes;
  const uint64_t id = op.id;
  sink_.Submit(std::move(op));
  return id;
}

void Reconciler::Decide() {
  step_ = StepResult{};
  writes_before_ = stats_.writes;
  ApplyResults();
  if (config_dirty_) Reconfigure();
  SyncWaitingPodGangs();
  if (engine_ != nullptr) {
    const Time now = clock_.Now();
    auto handle = [&](const std::vector<GangOutcome>& outcomes) {
      for (const GangOutcome& o : outcomes) {
        const engine::WorkloadRecord* r = engine_->Find(o.key);
        if (r == nullptr || r->phase != engine::Phase::kRunning) continue;
        Status s = o.succeeded ? engine_->Succeed(o.key)
                   : o.policy == GangOutcome::Policy::kFail
                       ? engine_->FailJob(o.key, o.reason, o.message)
                   : o.policy == GangOutcome::Policy::kIgnore
                       ? engine_->RestartUncounted(o.key, o.message)
                       : engine_->FailPods(o.key, o.message, o.directive);
        if (!s.ok()) Log(o.key + ": " + s.message());
        cycle_needed_ = true;
      }
    };
    if (runtime_ != nullptr) handle(runtime_->Poll(now));
    if (options_.mode == ReconcilerMode::kServe) EnforceDeadlines(now);
    if (!dirty_.empty()) cycle_needed_ = true;
    // A waitForPodsReady timeout or backoff, or a NoExecute taint's eviction, that
    // fell due acts in this step.
    if (auto due = engine_->NextTimedEvent(); due && now >= *due) cycle_needed_ = true;
    if (cycle_needed_ || !last_cycle_ || now - *last_cycle_ >= options_.resync_seconds) {
      if (Status s = engine_->RunCycle(); !s.ok()) Log("scheduling cycle: " + s.message());
      ++stats_.cycles;
      step_.cycled = true;
      last_cycle_ = now;
      cycle_needed_ = !engine_->Settled();
      // Gangs the cycle started launch now rather than at the next step.
      if (runtime_ != nullptr) handle(runtime_->Poll(clock_.Now()));
    }
    ConsumeDecisions();
    // A round left unfinished by the last step is written on: this cycle's
    // admissions go before the rest of it.
    if (write_round_ > 0) MoveUrgent(dirty_);
  }
}

void Reconciler::MoveUrgent(std::set<std::string>& from) {
  for (auto it = from.begin(); it != from.end();) {
    const engine::WorkloadRecord* r = engine_->Find(*it);
    if (r != nullptr && r->Active()) {
      write_round_urgent_.push_back(*it);
      it = from.erase(it);
    } else {
      ++it;
    }
  }
}

void Reconciler::StartWriteRound() {
  write_round_keys_.swap(dirty_);
  ++write_round_;
  stats_.dirty += write_round_keys_.size();
  MoveUrgent(write_round_keys_);
  // Taken from the back: key order, as the rest of the round.
  std::reverse(write_round_urgent_.begin(), write_round_urgent_.end());
}

Reconciler::StepResult Reconciler::Write(size_t max_jobs, bool urgent_only) {
  // A synchronous sink (serve, tests) has finished the writes already: a job whose
  // Workload was just written may take its next step in the same pass, up to this many
  // passes.
  constexpr int kWriteRounds = 4;
  sink_.Flush();
  StepResult out = step_;
  step_ = StepResult{};
  if (engine_ != nullptr) {
    const bool resuming = write_round_ > 0;
    if (!resuming) {
      if (runtime_ != nullptr) {
        for (auto& key : runtime_->TakeChangedGangs()) dirty_.insert(std::move(key));
      }
      stats_.dirty = 0;
    }
    size_t budget = max_jobs;
    while (budget > 0) {
      if (write_round_keys_.empty() && write_round_urgent_.empty()) {
        if (dirty_.empty() || write_round_ == kWriteRounds) break;
        StartWriteRound();
      }
      while (budget > 0 && !write_round_urgent_.empty()) {
        auto it = jobs_.find(write_round_urgent_.back());
        write_round_urgent_.pop_back();
        if (it != jobs_.end()) SyncJob(*it->second);
        --budget;
      }
      if (urgent_only) {
        ApplyResults();
        break;
      }
      while (budget > 0 && !write_round_keys_.empty()) {
        auto node = write_round_keys_.extract(write_round_keys_.begin());
        auto it = jobs_.find(node.value());
        if (it != jobs_.end()) SyncJob(*it->second);
        --budget;
      }
      ApplyResults();
    }
    out.more = !write_round_keys_.empty() || !write_round_urgent_.empty() ||
               (!dirty_.empty() && write_round_ < kWriteRounds);
    if (!out.more) write_round_ = 0;
    // Queue counts follow the engine (as Kueue's follow its cache): once the round's
    // admissions are written, not after every Workload the round creates.
    if (!out.more || write_round_urgent_.empty()) {
      if (queues_dirty_) {
        const Time now = clock_.Now();
        if (!queue_status_synced_ ||
            now - *queue_status_synced_ >= options_.queue_status_interval) {
          queue_status_synced_ = now;
          SyncQueues();
        }
      }
    }
  }
  out.submitted = static_cast<size_t>(stats_.writes - writes_before_);
  out.in_flight = in_flight_.size();
  out.retry = retry_;
  retry_ = false;
  return out;
}

void Reconciler::ConsumeDecisions() {
  std::vector<engine::LogEntry> entries = engine_->TakeLog();
  if (!entries.empty()) queues_dirty_ = true;
  unviewed_decisions_.insert(unviewed_decisions_.end(), entries.begin(), entries.end());
  if (unviewed_decisions_.size() > kMaxUnviewedDecisions) {
    unviewed_decisions_.erase(
        unviewed_decisions_.begin(),
        unviewed_decisions_.end() - static_cast<std::ptrdiff_t>(kMaxUnviewedDecisions));
  }
  for (const engine::LogEntry& e : entries) {
    if (options_.on_decision) options_.on_decision(e, *engine_);
    auto it = jobs_.find(e.workload);
    if (it == jobs_.end()) continue;
    JobState& job = *it->second;
    dirty_.insert(job.key);
    if (e.action == "Start") {
      ++job.admit_epoch;
      job.admission_written = false;
    } else if (e.action == "Evict" || e.action == "Restart") {
      job.admission_written = false;
      if (!SuspendPath(job.ref.kind, job.ref.api_version)) job.delete_pods = true;
    }
    // Adoption is how a restart resumes, not news: no Event per running job.
    if (e.action == "Adopt") continue;
    if (e.action == "Admit" && e.message.empty()) {
      SubmitEvent(DescribedAdmission(e), job.ref);
      continue;
    }
    SubmitEvent(e, job.ref);
  }
}

engine::LogEntry Reconciler::DescribedAdmission(const engine::LogEntry& entry) const {
  // Kueue's words: which queue admitted it and how long it waited since it was queued.
  engine::LogEntry out = entry;
  const admission::QueueInfo queue = engine_->QueueOf(entry.workload);
  if (queue.cluster_queue.empty()) return out;
  out.message =
      (queue.volcano ? "Admitted by Queue " : "Admitted by ClusterQueue ") + queue.cluster_queue;
  if (const engine::WorkloadRecord* r = engine_->Find(entry.workload); r && r->submit_time) {
    out.message += fmt::format(", wait time since queued was {:.0f}s",
                               std::max(0.0, entry.time - *r->submit_time));
  }
  return out;
}

void Reconciler::SubmitEvent(const engine::LogEntry& entry, const JobRef& ref) {
  json event = DecisionEvent(entry, ref, event_counter_ + 1);
  if (event.is_null()) return;  // a decision no Event reports
  ++event_counter_;
  SubmitEventObject(std::move(event), ref.namespace_);
}

void Reconciler::SubmitEventObject(json event, const std::string& namespace_) {
  WriteOp op;
  op.kind = WriteKind::kEvent;
  op.resource = "events";
  op.create = event_correlator_.Correlate(event);
  op.namespace_ = namespace_;
  op.name = event["metadata"].value("name", "");
  op.object = std::move(event);
  Submit(nullptr, std::move(op));
}

void Reconciler::ApplyResults() {
  for (WriteResult& result : sink_.TakeResults()) {
    auto it = in_flight_.find(result.id);
    if (it == in_flight_.end()) continue;
    InFlight pending = std::move(it->second);
    in_flight_.erase(it);
    auto job = jobs_.find(pending.job_key);
    if (pending.job_key.empty() || job == jobs_.end()) {
      // Queue status written or not: a failure is written again next time.
      if (!result.status.ok() && pending.op.kind == WriteKind::kMergeStatus) {
        written_queue_status_.erase(pending.op.resource + "/" + pending.op.namespace_ + "/" +
                                    pending.op.name);
        queues_dirty_ = true;
        retry_ = true;
      }
      if (!result.status.ok() && result.status.code() != StatusCode::kNotFound &&
          pending.op.kind == WriteKind::kRemoveFinalizer) {
        released_finalizers_.erase(pending.op.resource + "/" + pending.op.name);  // again next time
        queues_dirty_ = true;
        retry_ = true;
      }
      if (!result.status.ok() && result.status.code() != StatusCode::kNotFound &&
          pending.op.kind != WriteKind::kMergeStatus)
        Log("cannot write " + pending.op.resource + " " + pending.op.namespace_ + "/" +
            pending.op.name + ": " + result.status.message());
      continue;
    }
    JobState& state = *job->second;
    if (result.status.code() == StatusCode::kConflict) ++stats_.conflicts;
    switch (pending.op.kind) {
      case WriteKind::kWorkload:
        state.workload_op = 0;
        if (result.status.ok()) {
          state.workload = std::move(result.object);
          if (pending.epoch >= 0) state.workload_admit_epoch = pending.epoch;
          if (pending.epoch >= 0 && pending.epoch == state.admit_epoch)
            NoteAdmissionRecorded(state);
        } else {
          // Written again from the fresh object (or created again) next pass.
          state.workload = std::move(result.object);
          retry_ = true;
          if (result.status.code() != StatusCode::kConflict)
            Log("cannot write Workload for " + state.key + ": " + result.status.message());
        }
        break;
      case WriteKind::kJobStatus:
        state.job_op = 0;
        if (result.status.ok()) {
          if (result.object.is_object()) state.SetObject(std::move(result.object));
        } else {
          state.written_status = 0;
          retry_ = true;
        }
        break;
      case WriteKind::kJob:
        state.job_op = 0;
        ApplyJobResult(state, pending, result);
        break;
      case WriteKind::kBind:
        state.bind_op = 0;
        ApplyBindResult(state, pending, result);
        break;
      default:
        break;
    }
    dirty_.insert(state.key);
  }
}

void Reconciler::ForgetWrites() {
  // Not stored: the gangs wait until a later Write records them again.
  recorded_admissions_.clear();
  for (auto& [key, job] : jobs_) {
    job->workload = json();
    job->written_status = 0;
    dirty_.insert(key);
  }
  written_queue_status_.clear();
  queues_dirty_ = true;
}

std::vector<std::string> Reconciler::TakeRecordedAdmissions() {
  std::vector<std::string> out(recorded_admissions_.begin(), recorded_admissions_.end());
  recorded_admissions_.clear();
  return out;
}

void Reconciler::NoteAdmissionRecorded(const JobState& job) {
  if (runtime_ != nullptr) recorded_admissions_.insert(job.key);
}

void Reconciler::SyncJob(JobState& job) {
  if (!job.parked.empty()) return SyncParkedWorkload(job);
  if (!job.in_engine) return;
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  if (r == nullptr) return;
  SyncWorkload(job);
  if (job.bare_pods) {
    // The pods are the job: serve's executor runs them; in a cluster muster binds
    // them once the Workload records the admission (then their kubelets run them).
    SyncPodJob(job);
    if (options_.mode == ReconcilerMode::kCluster && r->phase == engine::Phase::kRunning &&
        job.workload_admit_epoch == job.admit_epoch)
      BindGang(job);
  } else if (options_.mode == ReconcilerMode::kServe) {
    SyncServeJob(job);
  } else {
    SyncClusterJob(job);
  }
  if (r->Finished()) job.finished = true;
}

void Reconciler::SyncWorkload(JobState& job) {
  if (job.workload_op != 0) return;  // its result marks the job dirty again
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  WorkloadFacts facts;
  facts.record = r;
  facts.now = Now();
  facts.cluster = &engine_->cluster();
  facts.cluster_queue = engine_->QueueOf(job.key).cluster_queue;
  if (r->phase == engine::Phase::kRunning) {
    facts.pods_ready = PodsReady(job, *r);
    // waitForPodsReady reads the same fact; a change is acted on in the next step.
    const uint64_t before = engine_->generation();
    if (Status s = engine_->SetPodsReady(job.key, facts.pods_ready); !s.ok()) Log(s.message());
    if (engine_->generation() != before) cycle_needed_ = true;
  }
  if (r->phase == engine::Phase::kPending) facts.pending_message = engine_->PendingMessage(job.key);
  const json* existing = job.workload.is_object() ? &job.workload : nullptr;
  // The Workload is a function of the record, the facts and the existing object, and
  // time only where a condition changes: inputs that matched it once still match.
  auto& synced = job.workload_synced;
  const std::string version = existing != nullptr ? ResourceVersionOf(*existing) : "";
  if (synced.valid && !version.empty() && synced.engine == engines_made_ &&
      synced.generation == engine_->generation() && synced.resource_version == version &&
      synced.pods_ready == facts.pods_ready && synced.pending_message == facts.pending_message) {
    if (r->phase == engine::Phase::kRunning) NoteAdmissionRecorded(job);
    return;
  }
  synced.valid = false;
  json desired = BuildWorkloadObject(job.ref, facts, existing);
  if (options_.mode == ReconcilerMode::kCluster) MovePlacementToAnnotation(desired);
  if (existing != nullptr && desired == *existing) {
    // Already stored as it should be (a gang restarted in place keeps its admission).
    if (r->phase == engine::Phase::kRunning) NoteAdmissionRecorded(job);
    synced.valid = true;
    synced.engine = engines_made_;
    synced.generation = engine_->generation();
    synced.resource_version = version;
    synced.pods_ready = facts.pods_ready;
    synced.pending_message = std::move(facts.pending_message);
    return;
  }
  WriteOp op;
  op.kind = WriteKind::kWorkload;
  op.resource = kWorkloads;
  op.namespace_ = job.ref.namespace_;
  op.name = WorkloadObjectName(job.ref);
  op.create = existing == nullptr;
  if (op.create) {
    StripServerFields(desired);
  } else {
    op.status_only = EqualExceptStatus(desired, *existing);
  }
  op.object = std::move(desired);
  job.workload_op =
      Submit(&job, std::move(op), r->phase == engine::Phase::kRunning ? job.admit_epoch : -1);
}

bool Reconciler::PodsReady(const JobState& job, const engine::WorkloadRecord& r) const {
  if (runtime_ != nullptr) return runtime_->PodsReady(job.key);
  auto gang = gang_pods_.find(job.key);
  if (gang == gang_pods_.end()) return false;
  size_t ready = 0;
  for (const auto& [name, pod] : gang->second) ready += pod.ready ? 1 : 0;
  return ready >= r.plan.pods.size();
}

// Serve plays the job's controller: the job's status follows the engine and the pods.
void Reconciler::SyncServeJob(JobState& job) {
  if (job.job_op != 0) return;
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  WorkloadFacts facts;
  facts.record = r;
  facts.now = Now();
  GangPodCounts counts = runtime_->Counts(job.key);
  json with_status = WithJobStatus(job.Object(), facts, counts.running, counts.succeeded,
                                   counts.failed, counts.waiting, counts.succeeded_indexes);
  const size_t hash = std::hash<std::string>()(with_status.value("status", json::object()).dump());
  if (hash == job.written_status) return;
  job.written_status = hash;
  StripServerFields(with_status);
  WriteOp op;
  op.kind = WriteKind::kJobStatus;
  op.resource = job.ref.resource;
  op.namespace_ = job.ref.namespace_;
  op.name = job.ref.name;
  op.object = std::move(with_status);
  job.job_op = Submit(&job, std::move(op));
}

void Reconciler::SyncQueues() {
  queues_dirty_ = false;
  QueueCounts counts = CountQueueWorkloads(*engine_);
  QueueUsage usage = AdmittedUsage(*engine_);
  auto write = [&](const std::string& resource, const std::string& ns, const std::string& name,
                   json status) {
    const std::string id = resource + "/" + ns + "/" + name;
    auto it = written_queue_status_.find(id);
    if (it != written_queue_status_.end() && it->second == status) return;
    written_queue_status_[id] = status;
    WriteOp op;
    op.kind = WriteKind::kMergeStatus;
    op.resource = resource;
    op.namespace_ = ns;
    op.name = name;
    op.object = {{"status", std::move(status)}};
    Submit(nullptr, std::move(op));
  };
  // Takes the resource-in-use finalizer off a terminating object, once.
  std::set<std::string> releasing;  // "<resource>/<name>" of the objects released now
  auto release = [&](const char* resource, const std::string& name) {
    const std::string key = std::string(resource) + "/" + name;
    releasing.insert(key);
    if (!released_finalizers_.insert(key).second) return;
    WriteOp op;
    op.kind = WriteKind::kRemoveFinalizer;
    op.resource = resource;
    op.name = name;
    op.object = kResourceInUseFinalizer;
    Submit(nullptr, std::move(op));
  };
  std::set<std::string> flavors;
  for (const auto& f : config_.resource_flavors) flavors.insert(f.meta.name);
  std::map<std::string, ConditionSince> active_since;
  const std::string now = Now();  // one formatting for every queue's condition
  for (const auto& cq : config_.cluster_queues) {
    const QueueCounts::Count& count = counts.cluster_queues[cq.meta.name];
    json status = ClusterQueueStatus(cq, count, usage);
    // As metav1 conditions: the time moves only when the status does.
    json active = ClusterQueueActiveCondition(cq, flavors);
    ConditionSince since{active["status"].get<std::string>(), now};
    if (auto was = cq_active_since_.find(cq.meta.name);
        was != cq_active_since_.end() && was->second.status == since.status)
      since = was->second;
    active["lastTransitionTime"] = since.time;
    active_since.emplace(cq.meta.name, std::move(since));
    status["conditions"] = json::array({std::move(active)});
    write("clusterqueues.kueue.x-k8s.io", "", cq.meta.name, std::move(status));
    if (!cq.terminating) continue;
    // Kueue's ClusterQueueEmpty: nothing it admitted is left, so its finalizer comes
    // off and the API server removes it (once).
    if (count.admitted == 0) release("clusterqueues.kueue.x-k8s.io", cq.meta.name);
  }
  cq_active_since_ = std::move(active_since);
  // Kueue's ResourceFlavor controller: a flavor being deleted serves on while any
  // ClusterQueue (terminating ones too) names it; then its finalizer comes off.
  if (!terminating_flavors_.empty()) {
    std::set<std::string> named;
    for (const auto& cq : config_.cluster_queues) {
      for (const auto& group : cq.resource_groups) {
        for (const auto& flavor : group.flavors) named.insert(flavor.name);
      }
    }
    for (const auto& name : terminating_flavors_) {
      if (!named.count(name)) release("resourceflavors.kueue.x-k8s.io", name);
    }
  }
  // Gone (or never released): an object made again under the name starts afresh.
  std::erase_if(released_finalizers_,
                [&](const std::string& key) { return !releasing.count(key); });
  for (const auto& lq : config_.local_queues) {
    write("localqueues.kueue.x-k8s.io", lq.meta.namespace_, lq.meta.name,
          QueueCountStatus(counts.local_queues[lq.meta.namespace_ + "/" + lq.meta.name]));
  }
  if (!config_.volcano_queues.empty()) {
    auto tallies = TallyVolcanoQueues(*engine_);
    for (const auto& q : config_.volcano_queues) {
      write("queues.scheduling.volcano.sh", "", q.meta.name,
            VolcanoQueueStatus(q, tallies[q.meta.name]));
    }
  }
}

}  // namespace muster::control
