#include "server/emulated_executor.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "server/adopted_pods.h"
#include "server/table_printer.h"
#include "workloads/workloads.h"

namespace muster::server {

EmulatedExecutor::EmulatedExecutor(ObjectStore& store) : store_(store) {}

std::string EmulatedExecutor::NodeName(int32_t node_index) const {
  if (engine_ == nullptr || node_index < 0 || node_index >= engine_->cluster().NodeCount()) {
    return "";
  }
  return engine_->cluster().GetNode(node_index).meta.name;
}

void EmulatedExecutor::Started(const engine::WorkloadRecord& record, Time now) {
  StartGang(record, now);
}

void EmulatedExecutor::AdoptRecovered(
    const engine::WorkloadRecord& record, Time now,
    const std::map<std::string, RecoveredProcess>& /*recovered*/) {
  StartGang(record, RecordedStart(record).value_or(now));
  const Gang& gang = gangs_.at(record.key());
  std::set<std::string> names;
  for (const auto& pod : gang.pods) names.insert(pod.name);
  Sweeper(store_).DeleteOutsideGang(record.workload.meta.namespace_,
                                    gang.pods.empty() ? "" : gang.pods.front().owner_uid, names);
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

PodRunView EmulatedExecutor::NewPod(const model::Workload& workload,
                                    const placement::PodPlacement& placement,
                                    const std::string& job_uid, const std::string& started) {
  PodRunView pod;
  pod.owner_uid = job_uid;
  pod.pod_set = placement.pod_set;
  pod.index = placement.index;
  pod.name = workloads::DefaultHostname(workload, placement.pod_set, placement.index);
  pod.node = NodeName(placement.node);
  pod.state = PodRunState::kRunning;
  pod.started_at = started;
  pod.restarts = starts_[workload.meta.namespace_ + "/" + pod.name]++;
  return pod;
}

void EmulatedExecutor::Resized(const engine::WorkloadRecord& record,
                               const std::vector<placement::PodPlacement>& added,
                               const std::vector<placement::PodPlacement>& removed, Time now) {
  auto it = gangs_.find(record.key());
  if (it == gangs_.end()) return;
  Gang& gang = it->second;
  const std::string& ns = gang.workload.meta.namespace_;
  for (const auto& p : removed) {
    auto pod = std::find_if(gang.pods.begin(), gang.pods.end(), [&](const PodRunView& v) {
      return v.pod_set == p.pod_set && v.index == p.index;
    });
    if (pod == gang.pods.end()) continue;
    // Nothing to wait for: the pod leaves, and one made again later is a new pod.
    if (!IsExistingPod(gang.workload, pod->pod_set)) store_.Delete({"pods", ns, pod->name});
    starts_.erase(ns + "/" + pod->name);
    gang.pods.erase(pod);
  }
  if (!added.empty()) {
    const std::string job_uid = JobUid(store_, gang.workload.meta);
    const std::string started = control::Rfc3339(now);
    for (const auto& p : added) gang.pods.push_back(NewPod(gang.workload, p, job_uid, started));
    to_write_.push_back(record.key());
  }
  MarkChanged(record.key());
  ++changes_;
}

void EmulatedExecutor::StartGang(const engine::WorkloadRecord& record, Time started_at) {
  const std::string key = record.key();
  if (auto old = gangs_.find(key); old != gangs_.end()) {
    // Not expected (the engine stops a gang before restarting it); keep one per key.
    if (old->second.ends_at) deadlines_.erase({*old->second.ends_at, key});
    gangs_.erase(old);
  }
  Gang gang;
  gang.workload = record.workload;
  const std::string started = control::Rfc3339(started_at);
  const std::string job_uid = JobUid(store_, record.workload.meta);
  for (const auto& p : record.plan.pods) {
    gang.pods.push_back(NewPod(record.workload, p, job_uid, started));
  }
  if (record.workload.sim.duration) {
    gang.ends_at = started_at + *record.workload.sim.duration;
    deadlines_.insert({*gang.ends_at, key});
  }
  last_counts_.erase(key);
  gangs_.emplace(key, std::move(gang));
  // Written at the next Poll, which the controller calls right after the cycle: the
  // cycle's starts are then written together (one store batch) rather than one
  // commit per pod in the middle of the cycle.
  to_write_.push_back(key);
}

void EmulatedExecutor::Stopped(const engine::WorkloadRecord& record, Time now,
                               engine::StopCause cause) {
  auto it = gangs_.find(record.key());
  if (it == gangs_.end()) return;
  Gang& gang = it->second;
  if (gang.ends_at) deadlines_.erase({*gang.ends_at, it->first});
  if (cause == engine::StopCause::kDeleted) {
    DeletePods(gang);
  } else {
    bool changed = false;
    for (auto& pod : gang.pods) {
      if (pod.state != PodRunState::kRunning) continue;
      changed = true;
      pod.finished_at = control::Rfc3339(now);
      if (cause == engine::StopCause::kSucceeded) {
        pod.state = PodRunState::kSucceeded;
        pod.message = "completed";
      } else {
        // What a process stopped with SIGTERM reports.
        pod.state = PodRunState::kFailed;
        pod.exit_code = 143;
        pod.message = cause == engine::StopCause::kEvicted ? "stopped: the gang was evicted"
                                                           : "stopped: the job failed";
      }
    }
    if (changed) WritePods(gang, now);
  }
  last_counts_[it->first] = Counts(it->first);
  MarkChanged(it->first);
  gangs_.erase(it);
  ++changes_;
}

std::vector<control::GangOutcome> EmulatedExecutor::Poll(Time now) {
  for (const auto& key : to_write_) {
    auto it = gangs_.find(key);
    if (it != gangs_.end()) WritePods(it->second, now);
  }
  to_write_.clear();
  std::vector<control::GangOutcome> outcomes;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto [ends_at, key] = *deadlines_.begin();
    deadlines_.erase(deadlines_.begin());
    Gang& gang = gangs_.at(key);
    for (auto& pod : gang.pods) {
      pod.state = PodRunState::kSucceeded;
      pod.exit_code = 0;
      pod.message = "completed after its sim.muster.dev/duration";
      pod.finished_at = control::Rfc3339(ends_at);
    }
    WritePods(gang, now);
    outcomes.push_back(control::GangOutcome{key, true, ""});
  }
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
    switch (pod.state) {
      case PodRunState::kWaiting:
        ++counts.waiting;
        break;
      case PodRunState::kRunning:
        ++counts.running;
        break;
      case PodRunState::kSucceeded:
        ++counts.succeeded;
        break;
      case PodRunState::kFailed:
        ++counts.failed;
        break;
    }
  }
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
    control::ObjectKey key{"pods", ns, pod.name};
    nlohmann::json object = BuildPodObject(gang.workload, pod, now);
    if (IsExistingPod(gang.workload, pod.pod_set)) {
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

void EmulatedExecutor::DeletePods(const Gang& gang) {
  for (const auto& pod : gang.pods) {
    // A bare Pod's object is the user's: it stays until the user deletes it.
    if (IsExistingPod(gang.workload, pod.pod_set)) continue;
    store_.Delete({"pods", gang.workload.meta.namespace_, pod.name});
  }
}

}  // namespace muster::server
