#include "server/emulated_executor.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "core/duration.h"
#include "server/adopted_pods.h"
#include "server/job_failure_policy.h"
#include "server/table_printer.h"
#include "workloads/keys.h"
#include "workloads/workloads.h"

namespace muster::server {
namespace {

constexpr char kFailAfterAnnotation[] = "sim.muster.dev/fail-after";

// A pod template's sim.muster.dev/* annotation in seconds; nullopt when absent or
// not a duration (the emulator's knob: the job itself was validated without it).
std::optional<Time> TemplateSeconds(const model::PodSet& ps, std::string_view key) {
  auto it = ps.tmpl.annotations.find(std::string(key));
  if (it == ps.tmpl.annotations.end()) return std::nullopt;
  auto seconds = ParseDurationSeconds(it->second);
  if (!seconds.ok() || *seconds < 0) return std::nullopt;
  return *seconds;
}

}  // namespace

EmulatedExecutor::EmulatedExecutor(ObjectStore& store) : store_(store) {
  subscription_ = store_.hub().Subscribe([this](const WatchHub::ChangePtr& change) {
    if (change->resource != "pods" || change->type == control::ChangeType::kDeleted) return;
    auto marked = TerminatingPodOf(change->Object());
    if (!marked) return;
    std::lock_guard<std::mutex> lock(marked_mu_);
    marked_pods_.push_back(std::move(*marked));
  });
}

EmulatedExecutor::~EmulatedExecutor() { store_.hub().Unsubscribe(subscription_); }

std::string EmulatedExecutor::NodeName(int32_t node_index) const {
  if (engine_ == nullptr || node_index < 0 || node_index >= engine_->cluster().NodeCount()) {
    return "";
  }
  return engine_->cluster().GetNode(node_index).meta.name;
}

std::vector<EmulatedExecutor::SetModel> EmulatedExecutor::SetModels(
    const model::Workload& workload) {
  std::vector<SetModel> sets(workload.pod_sets.size());
  for (size_t s = 0; s < sets.size(); ++s) {
    const model::PodSet& ps = workload.pod_sets[s];
    sets[s].duration = workload.sim.duration;
    if (ps.tmpl.annotations.empty()) continue;
    if (auto d = TemplateSeconds(ps, workloads::kDurationAnnotation)) sets[s].duration = d;
    sets[s].fail_after = TemplateSeconds(ps, kFailAfterAnnotation);
  }
  return sets;
}

void EmulatedExecutor::Started(const engine::WorkloadRecord& record, Time now) {
  StartGang(record, now);
}

void EmulatedExecutor::AdoptRecovered(
    const engine::WorkloadRecord& record, Time now,
    const std::map<std::string, RecoveredProcess>& /*recovered*/) {
  StartGang(record, RecordedStart(record).value_or(now));
  Gang& gang = gangs_.at(record.key());
  // Its replicated jobs started one after another: each pod as it was.
  if (control::HasStartOrder(gang.workload)) AdoptPods(record.key(), gang);
  if (IsExistingPod(gang.workload, 0)) return;  // a bare pod's gang owns no other pods
  std::set<std::string> names;
  for (const auto& pod : gang.pods) names.insert(pod.view.name);
  Sweeper(store_).DeleteOutsideGang(record.workload.meta.namespace_,
                                    gang.pods.empty() ? "" : gang.pods.front().view.owner_uid,
                                    names);
}

std::optional<Time> EmulatedExecutor::RecordedStart(const engine::WorkloadRecord& record) const {
  const std::string& ns = record.workload.meta.namespace_;
  for (const auto& p : record.plan.pods) {
    auto pod =
        store_.Get({"pods", ns, workloads::DefaultHostname(record.workload, p.pod_set, p.index)});
    if (!pod.ok()) continue;
    int64_t started =
        ParseTimestamp(pod->value("status", nlohmann::json::object()).value("startTime", ""));
    if (started >= 0) return static_cast<Time>(started);
  }
  return std::nullopt;
}

void EmulatedExecutor::AdoptPods(const std::string& key, Gang& gang) {
  // StartGang's wake-ups stay: one that finds no pod to end is skipped.
  const std::string& ns = gang.workload.meta.namespace_;
  for (Pod& pod : gang.pods) {
    auto stored = store_.Get({"pods", ns, pod.view.name});
    if (!stored.ok()) continue;  // as StartGang made it
    const nlohmann::json status = stored->value("status", nlohmann::json::object());
    const std::string phase = status.value("phase", "");
    const int64_t started = ParseTimestamp(status.value("startTime", ""));
    if (phase == "Pending") {
      if (pod.view.state != PodRunState::kWaiting) Hold(pod, "");
    } else if (phase == "Running" && started >= 0) {
      pod.view.started_at = status.value("startTime", "");
      RunPod(key, gang, pod, static_cast<Time>(started));
    } else if (phase == "Succeeded" || phase == "Failed") {
      pod.ends_at.reset();
      pod.view.state = phase == "Succeeded" ? PodRunState::kSucceeded : PodRunState::kFailed;
      pod.view.exit_code = phase == "Succeeded" ? 0 : 1;
      pod.view.message = "ended before the server restarted";
    }
  }
  // Held pods wait for their replicated jobs again (from the next Poll).
  gated_.erase(key);
  const std::vector<std::optional<std::string>> blockers = Blockers(gang);
  for (Pod& pod : gang.pods) {
    if (pod.view.state != PodRunState::kWaiting) continue;
    if (const auto& blocker = blockers[pod.view.pod_set]) pod.view.waiting_message = *blocker;
    gated_.insert(key);
  }
  to_check_.insert(key);
}

EmulatedExecutor::Pod EmulatedExecutor::NewPod(const model::Workload& workload,
                                               const placement::PodPlacement& placement,
                                               const std::string& job_uid) {
  Pod pod;
  PodRunView& view = pod.view;
  view.owner_uid = job_uid;
  view.pod_set = placement.pod_set;
  view.index = placement.index;
  view.name = workloads::DefaultHostname(workload, placement.pod_set, placement.index);
  view.node = NodeName(placement.node);
  view.restarts = starts_[workload.meta.namespace_ + "/" + view.name]++;
  return pod;
}

void EmulatedExecutor::RunPod(const std::string& key, Gang& gang, Pod& pod, Time from) {
  pod.view.state = PodRunState::kRunning;
  pod.view.waiting_reason.clear();
  pod.view.waiting_message.clear();
  if (pod.view.started_at.empty()) pod.view.started_at = control::Rfc3339(from);
  const SetModel& set = gang.sets[pod.view.pod_set];
  pod.fails = set.fail_after && (!set.duration || *set.fail_after < *set.duration);
  pod.ends_at.reset();
  if (pod.fails) {
    pod.ends_at = from + *set.fail_after;
  } else if (set.duration) {
    pod.ends_at = from + *set.duration;
  }
  if (pod.ends_at) deadlines_.insert({*pod.ends_at, key});
}

void EmulatedExecutor::Hold(Pod& pod, const std::string& blocker) {
  pod.view.state = PodRunState::kWaiting;
  pod.view.started_at.clear();
  pod.view.waiting_reason = "WaitingForReplicatedJob";
  pod.view.waiting_message = blocker;
  pod.ends_at.reset();
}

void EmulatedExecutor::Resized(const engine::WorkloadRecord& record,
                               const std::vector<placement::PodPlacement>& added,
                               const std::vector<placement::PodPlacement>& removed, Time now) {
  auto it = gangs_.find(record.key());
  if (it == gangs_.end()) return;
  Gang& gang = it->second;
  const std::string& ns = gang.workload.meta.namespace_;
  for (const auto& p : removed) {
    auto pod = std::find_if(gang.pods.begin(), gang.pods.end(), [&](const Pod& v) {
      return v.view.pod_set == p.pod_set && v.view.index == p.index;
    });
    if (pod == gang.pods.end()) continue;
    // Nothing to wait for: the pod leaves, and one made again later is a new pod.
    if (!IsExistingPod(gang.workload, pod->view.pod_set)) {
      store_.Delete({"pods", ns, pod->view.name});
    }
    starts_.erase(ns + "/" + pod->view.name);
    gang.pods.erase(pod);
  }
  if (!added.empty()) {
    const std::string job_uid = JobUid(store_, gang.workload.meta);
    for (const auto& p : added) {
      gang.pods.push_back(NewPod(gang.workload, p, job_uid));
      gang.pods.back().view.priority = gang.priorities[p.pod_set];
      gang.pods.back().view.started_at = control::Rfc3339(now);
      // The gang's duration does not change with its size: it ends with the others.
      RunPod(record.key(), gang, gang.pods.back(), gang.started_at);
    }
    to_write_.insert(record.key());
  }
  MarkChanged(record.key());
  ++changes_;
}

void EmulatedExecutor::StartGang(const engine::WorkloadRecord& record, Time started_at) {
  const std::string key = record.key();
  if (auto old = gangs_.find(key); old != gangs_.end()) {
    // Not expected (the engine stops a gang before restarting it); keep one per key.
    Unschedule(key, old->second);
    gangs_.erase(old);
  }
  Gang& gang = gangs_[key];
  // Its pods as Kueue would run them: the flavors' node labels and tolerations in.
  gang.workload = engine_ != nullptr ? engine_->AdmittedWorkload(record) : record.workload;
  gang.sets = SetModels(record.workload);
  gang.started_at = started_at;
  const std::string job_uid = JobUid(store_, record.workload.meta);
  gang.priorities = PodSetPriorities(store_, record.workload);
  gang.pods.reserve(record.plan.pods.size());
  for (const auto& p : record.plan.pods) {
    gang.pods.push_back(NewPod(record.workload, p, job_uid));
    gang.pods.back().view.priority = gang.priorities[p.pod_set];
  }
  // Pod sets that start after others wait (nothing has started yet).
  const std::vector<std::optional<std::string>> blockers = Blockers(gang);
  for (Pod& pod : gang.pods) {
    if (const auto& blocker = blockers[pod.view.pod_set]) {
      Hold(pod, *blocker);
      gated_.insert(key);
    } else {
      RunPod(key, gang, pod, started_at);
    }
  }
  last_counts_.erase(key);
  // Written at the next Poll, which the controller calls right after the cycle: the
  // cycle's starts are then written together (one store batch) rather than one
  // commit per pod in the middle of the cycle.
  to_write_.insert(key);
  to_check_.insert(key);
}

void EmulatedExecutor::Unschedule(const std::string& key, const Gang& gang) {
  for (const Pod& pod : gang.pods) {
    if (pod.ends_at) deadlines_.erase({*pod.ends_at, key});
  }
  gated_.erase(key);
}

void EmulatedExecutor::Stopped(const engine::WorkloadRecord& record, Time now,
                               engine::StopCause cause) {
  auto it = gangs_.find(record.key());
  if (it == gangs_.end()) return;
  Gang& gang = it->second;
  Unschedule(it->first, gang);
  if (cause == engine::StopCause::kDeleted) {
    DeletePods(gang);
  } else {
    bool changed = false;
    // A JobSet that met its successPolicy: upstream deletes its still-active Jobs.
    const bool cut_short = gang.workload.gang_policy.child_jobs;
    for (auto& pod : gang.pods) {
      PodRunView& view = pod.view;
      if (view.state == PodRunState::kWaiting) {
        changed = true;
        view.state = PodRunState::kFailed;
        view.exit_code = 0;
        view.message = "stopped before it started";
        continue;
      }
      if (view.state != PodRunState::kRunning) continue;
      changed = true;
      view.finished_at = control::Rfc3339(now);
      if (cause == engine::StopCause::kSucceeded && !cut_short) {
        view.state = PodRunState::kSucceeded;
        view.message = "completed";
      } else {
        // What a process stopped with SIGTERM reports.
        view.state = PodRunState::kFailed;
        view.exit_code = 143;
        view.message = cause == engine::StopCause::kEvicted     ? "stopped: the gang was evicted"
                       : cause == engine::StopCause::kSucceeded ? "stopped: the JobSet succeeded"
                                                                : "stopped: the job failed";
      }
    }
    if (changed) WritePods(gang, now);
  }
  last_counts_[it->first] = Counts(it->first);
  MarkChanged(it->first);
  to_write_.erase(it->first);
  to_check_.erase(it->first);
  gangs_.erase(it);
  ++changes_;
}

bool EmulatedExecutor::EndPods(Gang& gang, Time now) {
  bool ended = false;
  for (Pod& pod : gang.pods) {
    if (pod.view.state != PodRunState::kRunning || !pod.ends_at || *pod.ends_at > now) continue;
    ended = true;
    PodRunView& view = pod.view;
    view.finished_at = control::Rfc3339(*pod.ends_at);
    pod.ends_at.reset();
    if (pod.fails) {
      view.state = PodRunState::kFailed;
      view.exit_code = 1;
      view.reason = "Error";
      view.message = "failed after its sim.muster.dev/fail-after";
    } else {
      view.state = PodRunState::kSucceeded;
      view.exit_code = 0;
      view.message = "completed after its sim.muster.dev/duration";
    }
  }
  return ended;
}

std::vector<std::optional<std::string>> EmulatedExecutor::Blockers(const Gang& gang) {
  std::vector<std::optional<std::string>> out(gang.workload.pod_sets.size());
  if (!control::HasStartOrder(gang.workload)) return out;
  const std::vector<control::PolicyPod> pods = PolicyPods(gang);
  for (size_t s = 0; s < out.size(); ++s) {
    out[s] = control::StartBlocker(gang.workload, static_cast<int32_t>(s), pods);
  }
  return out;
}

bool EmulatedExecutor::StartUnblocked(const std::string& key, Gang& gang, Time now) {
  const std::vector<std::optional<std::string>> blockers = Blockers(gang);
  bool changed = false, waiting = false;
  for (Pod& pod : gang.pods) {
    if (pod.view.state != PodRunState::kWaiting) continue;
    if (const auto& blocker = blockers[pod.view.pod_set]) {
      waiting = true;
      // What it waits for may have moved on (a dependency Ready, the next one not).
      if (pod.view.waiting_message != *blocker) pod.view.waiting_message = *blocker, changed = true;
      continue;
    }
    RunPod(key, gang, pod, now);
    changed = true;
  }
  if (!waiting) gated_.erase(key);
  return changed;
}

std::vector<control::PolicyPod> EmulatedExecutor::PolicyPods(const Gang& gang) {
  std::vector<control::PolicyPod> out;
  out.reserve(gang.pods.size());
  for (const Pod& pod : gang.pods) {
    control::PolicyPod p;
    p.pod_set = pod.view.pod_set;
    p.index = pod.view.index;
    switch (pod.view.state) {
      case PodRunState::kWaiting:
        p.phase = control::PolicyPodPhase::kWaiting;
        break;
      case PodRunState::kRunning:
        p.phase = control::PolicyPodPhase::kRunning;
        break;
      case PodRunState::kSucceeded:
        p.phase = control::PolicyPodPhase::kSucceeded;
        break;
      case PodRunState::kFailed:
        p.phase = control::PolicyPodPhase::kFailed;
        p.failure = "pod " + pod.view.name + " failed: " + pod.view.message;
        break;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<control::GangOutcome> EmulatedExecutor::Evaluate(const std::string& key,
                                                               const Gang& gang) const {
  if (gang.reported) return std::nullopt;
  if (gang.workload.gang_policy.child_jobs) {
    return control::ChildJobOutcome(key, gang.workload, PolicyPods(gang));
  }
  std::vector<EndedPod> failed;
  bool all_succeeded = !gang.pods.empty();
  for (const Pod& pod : gang.pods) {
    if (pod.view.state != PodRunState::kSucceeded) all_succeeded = false;
    if (pod.view.state != PodRunState::kFailed) continue;
    failed.push_back({pod.view.name, pod.view.pod_set, pod.view.exit_code, pod.view.message});
  }
  if (!failed.empty()) return FailedGangOutcome(key, gang.workload, failed);
  if (all_succeeded) return control::GangOutcome{key, true, ""};
  return std::nullopt;
}

std::vector<control::GangOutcome> EmulatedExecutor::Poll(Time now) {
  std::vector<TerminatingPod> marked;
  if (!swept_marked_) {
    // Pods marked before a restart: their change came before this executor.
    swept_marked_ = true;
    marked = TerminatingPods(store_);
  }
  {
    std::lock_guard<std::mutex> lock(marked_mu_);
    marked.insert(marked.end(), marked_pods_.begin(), marked_pods_.end());
    marked_pods_.clear();
  }
  // Poll runs in the reconciler's Decide, outside the step's transactions: the pods
  // it writes go in one, where alone each was a durable commit queued behind the
  // API's group commits (the 2,000 pods a cycle of a burst started: seconds).
  std::vector<std::string> written;
  Status stored = store_.Batch([&] {
    for (const TerminatingPod& pod : marked) store_.Delete(pod.key, std::nullopt, pod.uid).ok();
    written = WriteDuePods(now);
  });
  // Not stored: written again at the next Poll.
  if (!stored.ok()) to_write_.insert(written.begin(), written.end());
  return Outcomes();
}

std::vector<std::string> EmulatedExecutor::WriteDuePods(Time now) {
  // Pods whose modelled run is over.
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const std::string key = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = gangs_.find(key);
    if (it == gangs_.end() || !EndPods(it->second, now)) continue;
    it->second.recheck = true;
    to_write_.insert(key);
    to_check_.insert(key);
  }
  // Replicated jobs whose turn came, in gangs whose pods changed since they were
  // last written: a gang started in this cycle shows its held pods Pending first (as
  // the local executor starts them at its next Run).
  for (auto it = gated_.begin(); it != gated_.end();) {
    const std::string key = *it++;  // StartUnblocked may erase it
    Gang& gang = gangs_.at(key);
    if (!gang.recheck) continue;
    gang.recheck = false;
    if (!StartUnblocked(key, gang, now)) continue;
    to_check_.insert(key);
    to_write_.insert(key);
  }
  std::vector<std::string> written(to_write_.begin(), to_write_.end());
  for (const auto& key : to_write_) {
    auto it = gangs_.find(key);
    if (it == gangs_.end()) continue;
    it->second.recheck = true;  // held pods look again at the next Poll
    WritePods(it->second, now);
  }
  to_write_.clear();
  return written;
}

std::vector<control::GangOutcome> EmulatedExecutor::Outcomes() {
  std::vector<control::GangOutcome> outcomes;
  for (const auto& key : to_check_) {
    auto it = gangs_.find(key);
    if (it == gangs_.end()) continue;
    if (auto outcome = Evaluate(key, it->second)) {
      it->second.reported = true;
      outcomes.push_back(std::move(*outcome));
    }
  }
  to_check_.clear();
  return outcomes;
}

control::GangPodCounts EmulatedExecutor::Counts(const std::string& key) const {
  auto it = gangs_.find(key);
  if (it == gangs_.end()) {
    auto last = last_counts_.find(key);
    return last == last_counts_.end() ? control::GangPodCounts{} : last->second;
  }
  control::GangPodCounts counts;
  for (const auto& pod : it->second.pods) {
    switch (pod.view.state) {
      case PodRunState::kWaiting:
        ++counts.waiting;
        break;
      case PodRunState::kRunning:
        ++counts.running;
        break;
      case PodRunState::kSucceeded:
        ++counts.succeeded;
        if (pod.view.pod_set == 0) counts.succeeded_indexes.push_back(pod.view.index);
        break;
      case PodRunState::kFailed:
        ++counts.failed;
        break;
    }
  }
  std::sort(counts.succeeded_indexes.begin(), counts.succeeded_indexes.end());
  return counts;
}

bool EmulatedExecutor::PodsReady(const std::string& key) const {
  control::GangPodCounts c = Counts(key);
  return c.waiting == 0 && c.failed == 0 && c.running + c.succeeded > 0;
}

void EmulatedExecutor::WritePods(const Gang& gang, Time now) {
  ++changes_;
  MarkChanged(gang.workload.key);
  const std::string& ns = gang.workload.meta.namespace_;
  for (const auto& pod : gang.pods) {
    if (pod.let_go) continue;
    control::ObjectKey key{"pods", ns, pod.view.name};
    nlohmann::json object = BuildPodObject(gang.workload, pod.view, now);
    if (IsExistingPod(gang.workload, pod.view.pod_set)) {
      // The user's own Pod: its status is written, never a pod re-created.
      if (auto stored = store_.Get(key); stored.ok()) {
        store_.Update(key, ExistingPodObject(*stored, object), WriteScope::kAll);
      }
      continue;
    }
    // Update first: after the first start of a job its pod objects exist.
    auto updated = store_.Update(key, object, WriteScope::kAll);
    if (!updated.ok() && updated.status().code() == StatusCode::kNotFound) {
      store_.Create(key, std::move(object));
    }
  }
}

std::set<std::string> EmulatedExecutor::LetGo(const std::string& key,
                                              const std::set<std::string>& pods) {
  std::set<std::string> out;
  auto it = gangs_.find(key);
  if (it == gangs_.end()) return out;
  for (Pod& pod : it->second.pods) {
    if (pod.view.state != PodRunState::kRunning || pod.let_go || pods.count(pod.view.name) == 0)
      continue;
    pod.let_go = true;
    NoteLetGo(it->second.workload.meta.namespace_, pod.view.name);
    out.insert(pod.view.name);
  }
  return out;
}

void EmulatedExecutor::DeletePods(const Gang& gang) {
  for (const auto& pod : gang.pods) {
    // A bare Pod's object is the user's: it stays until the user deletes it; an
    // orphaned one runs on.
    if (IsExistingPod(gang.workload, pod.view.pod_set) || pod.let_go) continue;
    store_.Delete({"pods", gang.workload.meta.namespace_, pod.view.name});
  }
}

}  // namespace muster::server
