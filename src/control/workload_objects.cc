#include "control/workload_objects.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "control/job_deadlines.h"
#include "control/jobset_status.h"
#include "control/json_fields.h"
#include "control/pod_spec_json.h"
#include "control/trainjob_status.h"
#include "core/resource_list.h"
#include "core/resource_name.h"
#include "core/text.h"

namespace muster::control {
namespace {

using json = nlohmann::json;
using engine::Phase;

json ResourceMap(const ResourceList& list) {
  json out = json::object();
  for (ResourceId id : list.SortedIds()) {
    int64_t amount = list.Get(id);
    if (amount != 0) out[ResourceNames::Name(id)] = ResourceList::FormatAmount(id, amount);
  }
  return out;
}

json Admission(const engine::WorkloadRecord& r, const std::string& cluster_queue) {
  json sets = json::array();
  for (size_t i = 0; i < r.assignment.pod_sets.size(); ++i) {
    const auto& a = r.assignment.pod_sets[i];
    json flavors = json::object();
    for (const auto& [res, flavor] : a.flavors) flavors[res] = flavor;
    ResourceList usage;
    if (i < r.workload.pod_sets.size()) usage = r.workload.pod_sets[i].requests.Scaled(a.count);
    sets.push_back({{"name", a.pod_set},
                    {"flavors", flavors},
                    {"resourceUsage", ResourceMap(usage)},
                    {"count", a.count}});
  }
  return {{"clusterQueue", cluster_queue}, {"podSetAssignments", sets}};
}

// Where each pod runs: muster's own status field (Kueue has no per-pod placement),
// also what a restarted server adopts running processes from.
json Placement(const engine::WorkloadRecord& r, const placement::ClusterState* cluster) {
  json pods = json::array();
  for (const auto& p : r.plan.pods) {
    std::string pod_set = p.pod_set < static_cast<int32_t>(r.workload.pod_sets.size())
                              ? r.workload.pod_sets[p.pod_set].name
                              : "";
    std::string node = cluster != nullptr && p.node >= 0 && p.node < cluster->NodeCount()
                           ? cluster->GetNode(p.node).meta.name
                           : "";
    json entry = {{"podSet", pod_set}, {"index", p.index}, {"node", node}};
    entry["gpus"] = p.gpus;
    if (p.numa_zone >= 0) entry["numaZone"] = p.numa_zone;
    if (!p.container_zones.empty()) entry["containerZones"] = p.container_zones;
    pods.push_back(std::move(entry));
  }
  return pods;
}

// Kueue copies each pod set's template into the Workload: its labels, annotations and
// spec (what the model holds of it).
json PodSetsSpec(const model::Workload& w) {
  json sets = json::array();
  for (const auto& ps : w.pod_sets) {
    json tmpl = {{"spec", PodSpecJson(ps.tmpl.spec)}};
    if (!ps.tmpl.labels.empty()) tmpl["metadata"]["labels"] = ps.tmpl.labels;
    if (!ps.tmpl.annotations.empty()) tmpl["metadata"]["annotations"] = ps.tmpl.annotations;
    json set = {{"name", ps.name}, {"count", ps.count}, {"template", std::move(tmpl)}};
    if (ps.min_count < ps.count) set["minCount"] = ps.min_count;
    sets.push_back(std::move(set));
  }
  return sets;
}

const json* FindCondition(const json& conditions, const std::string& type) {
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

// Kueue marks a past eviction False once the workload holds quota again, keeping
// what happened as "Previously: ...".
void SettleEviction(json& conditions, const std::string& type, const std::string& now) {
  const json* c = FindCondition(conditions, type);
  if (c == nullptr || c->value("status", "") != "True") return;
  std::string message = "Previously: " + c->value("message", "");
  SetCondition(conditions, type, false, "QuotaReserved", message, now);
}

}  // namespace

std::string Rfc3339(Time unix_seconds) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool SetCondition(json& conditions, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, const std::string& now) {
  if (!conditions.is_array()) conditions = json::array();
  const std::string value = status ? "True" : "False";
  for (auto& c : conditions) {
    if (c.value("type", "") != type) continue;
    bool changed = false;
    if (c.value("status", "") != value) {
      c["status"] = value;
      c["lastTransitionTime"] = now;
      changed = true;
    }
    if (c.value("reason", "") != reason) c["reason"] = reason, changed = true;
    if (c.value("message", "") != message) c["message"] = message, changed = true;
    return changed;
  }
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"reason", reason},
                        {"message", message},
                        {"lastTransitionTime", now}});
  return true;
}

std::string WorkloadObjectName(const JobRef& job) {
  std::string name = AsciiLower(job.kind) + "-" + job.name;
  if (name.size() > 253) name.resize(253);
  return name;
}

json BuildWorkloadObject(const JobRef& job, const WorkloadFacts& facts, const json* existing) {
  const engine::WorkloadRecord& r = *facts.record;
  const model::Workload& w = r.workload;
  json object = existing != nullptr ? *existing : json::object();
  object["apiVersion"] = "kueue.x-k8s.io/v1beta1";
  object["kind"] = "Workload";
  json& meta = object["metadata"];
  meta["name"] = WorkloadObjectName(job);
  meta["namespace"] = job.namespace_;
  meta["labels"]["kueue.x-k8s.io/job-uid"] = job.uid;
  meta["ownerReferences"] = json::array({{{"apiVersion", job.api_version},
                                          {"kind", job.kind},
                                          {"name", job.name},
                                          {"uid", job.uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  // waitForPodsReady's backoffLimitCount deactivates a workload: spec.active=false.
  json spec = {{"podSets", PodSetsSpec(w)}, {"priority", w.priority}, {"active", !r.deactivated}};
  if (!w.local_queue.empty()) spec["queueName"] = w.local_queue;
  if (!w.priority_class.empty()) spec["priorityClassName"] = w.priority_class;
  object["spec"] = std::move(spec);

  // `object` is our own copy: its status and conditions are moved out, not copied
  // (they are most of a Workload), and put back at the end.
  json status = json::object();
  if (auto it = object.find("status"); it != object.end()) status = std::move(*it);
  json conditions = status.is_object() && status.contains("conditions")
                        ? std::move(status["conditions"])
                        : status.value("conditions", json::array());
  const std::string& now = facts.now;
  const bool holds_quota = r.Active();
  if (holds_quota) {
    SetCondition(conditions, "QuotaReserved", true, "QuotaReserved",
                 "Quota reserved in ClusterQueue " + facts.cluster_queue, now);
    SetCondition(conditions, "Admitted", true, "Admitted", "The workload is admitted", now);
    SettleEviction(conditions, "Evicted", now);
    SettleEviction(conditions, "Preempted", now);
    status["admission"] = Admission(r, facts.cluster_queue);
    status["placement"] = {{"pods", Placement(r, facts.cluster)}};
    if (facts.pods_ready) {
      // Kueue: Started, or Recovered once readiness came back after a pod failed.
      const json* was = FindCondition(conditions, "PodsReady");
      const std::string was_reason = was != nullptr ? was->value("reason", "") : "";
      const bool recovered = was_reason == "WaitForRecovery" || was_reason == "Recovered";
      SetCondition(conditions, "PodsReady", true, recovered ? "Recovered" : "Started",
                   "All pods reached readiness and the workload is running", now);
    } else {
      SetCondition(conditions, "PodsReady", false,
                   r.ready_lost_time ? "WaitForRecovery" : "WaitForStart",
                   r.phase == Phase::kAdmitted ? "Admitted, waiting for nodes for the gang"
                                               : "Not all pods are ready or succeeded",
                   now);
    }
  } else if (r.phase == Phase::kPending) {
    SetCondition(conditions, "QuotaReserved", false, "Pending",
                 facts.pending_message.empty() ? "Waiting for admission" : facts.pending_message,
                 now);
    SetCondition(conditions, "Admitted", false, "NoReservation", "The workload has no reservation",
                 now);
    status.erase("admission");
    status.erase("placement");
    if (FindCondition(conditions, "PodsReady") != nullptr) {
      SetCondition(conditions, "PodsReady", false, "WaitForStart",
                   "Not all pods are ready or succeeded", now);
    }
  }
  if (!r.evictions.empty() && !holds_quota && !r.Finished()) {
    const engine::Eviction& e = r.evictions.back();
    std::string message = e.detail.empty() ? e.reason : e.detail;
    if (!e.by.empty()) message += ": evicted to admit " + e.by;
    SetCondition(conditions, "Evicted", true, e.reason, message, now);
    if (e.reason == engine::kReasonPreempted) {
      SetCondition(conditions, "Preempted", true, e.detail.empty() ? "Preempted" : e.detail,
                   message, now);
    }
  }
  if (r.requeue_count > 0 || r.requeue_at) {
    // waitForPodsReady: requeues so far, and when the backoff ends.
    json rs = {{"count", r.requeue_count}};
    if (r.requeue_at) rs["requeueAt"] = Rfc3339(*r.requeue_at);
    status["requeueState"] = std::move(rs);
  } else {
    status.erase("requeueState");
  }
  if (r.phase == Phase::kSucceeded) {
    // PodsReady is left as the run left it, as Kueue does: its job reconciler stops
    // updating the condition once the job has finished.
    SetCondition(conditions, "Finished", true, "Succeeded", "Job finished successfully", now);
  } else if (r.phase == Phase::kFailed) {
    SetCondition(conditions, "Finished", true, "Failed",
                 r.failure_message.empty() ? "Job failed" : r.failure_message, now);
  }
  status["conditions"] = std::move(conditions);
  object["status"] = std::move(status);
  return object;
}

std::string IndexRanges(const std::vector<int32_t>& ascending) {
  std::string out;
  for (size_t i = 0; i < ascending.size();) {
    size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ascending[i]);
    if (j > i) out += "-" + std::to_string(ascending[j]);
    i = j + 1;
  }
  return out;
}

json WithJobStatus(const json& job_object, const WorkloadFacts& facts, int32_t running_pods,
                   int32_t succeeded_pods, int32_t failed_pods, int32_t waiting_pods,
                   const std::vector<int32_t>& succeeded_indexes) {
  const engine::WorkloadRecord& r = *facts.record;
  const std::string& now = facts.now;
  json object = job_object;
  json status = object.value("status", json::object());
  json conditions = status.value("conditions", json::array());
  const std::string kind = object.value("kind", "");
  const std::string api_version = object.value("apiVersion", "");
  const bool kubeflow = api_version.rfind("kubeflow.org/", 0) == 0;
  const bool batch = api_version == "batch/v1" && kind == "Job";
  const bool jobset = kind == "JobSet";
  const bool volcano = api_version.rfind("batch.volcano.sh/", 0) == 0;
  const std::string job_desc = kind + " " + object["metadata"].value("name", "");

  if (kubeflow) {
    SetCondition(conditions, "Created", true, kind + "Created", job_desc + " is created.", now);
    if (r.phase == Phase::kRunning) {
      SetCondition(conditions, "Running", true, kind + "Running", job_desc + " is running.", now);
      if (FindCondition(conditions, "Restarting") != nullptr) {
        SetCondition(conditions, "Restarting", false, kind + "Restarting",
                     job_desc + " is running again.", now);
      }
    } else if (r.phase == Phase::kPending && !r.evictions.empty()) {
      SetCondition(conditions, "Restarting", true, kind + "Restarting",
                   job_desc + " is restarting: " + r.evictions.back().reason, now);
    }
    if (r.phase == Phase::kSucceeded) {
      SetCondition(conditions, "Running", false, kind + "Succeeded", job_desc + " finished.", now);
      SetCondition(conditions, "Succeeded", true, kind + "Succeeded",
                   job_desc + " is successfully completed.", now);
    } else if (r.phase == Phase::kFailed) {
      SetCondition(conditions, "Running", false, kind + "Failed", job_desc + " failed.", now);
      SetCondition(conditions, "Failed", true, kind + "Failed", r.failure_message, now);
    }
  } else if (batch) {
    status["active"] = running_pods;
    status["ready"] = running_pods;  // a pod is Ready once it runs (no readiness probes)
    status["succeeded"] = succeeded_pods;
    status["failed"] = failed_pods;
    if (StringField(ObjectField(object, "spec"), "completionMode") == "Indexed") {
      const std::string completed = IndexRanges(succeeded_indexes);
      if (completed.empty()) {
        status.erase("completedIndexes");
      } else {
        status["completedIndexes"] = completed;
      }
    }
    // Evicted (Kueue suspends the Job): upstream clears startTime, and sets it again
    // when the Job resumes, so activeDeadlineSeconds counts afresh. A restart after
    // a pod failure is no eviction and keeps it.
    if (r.phase == Phase::kPending && !r.evictions.empty() &&
        r.evictions.back().time >= r.start_time.value_or(0)) {
      status.erase("startTime");
    }
    if (r.start_time && r.phase != Phase::kPending && !status.contains("startTime")) {
      status["startTime"] = Rfc3339(*r.start_time);
    }
    if (r.phase == Phase::kSucceeded) {
      SetCondition(conditions, "Complete", true, "CompletionsReached",
                   "Reached expected number of succeeded pods", now);
      if (r.finish_time) status["completionTime"] = Rfc3339(*r.finish_time);
    } else if (r.phase == Phase::kFailed) {
      // Engine::FailJob's reason (PodFailurePolicy, DeadlineExceeded, FailedIndexes);
      // otherwise the restart budget ran out.
      SetCondition(conditions, "Failed", true,
                   !r.failure_reason.empty()                         ? r.failure_reason
                   : object["spec"].contains("backoffLimitPerIndex") ? "FailedIndexes"
                                                                     : "BackoffLimitExceeded",
                   r.failure_message, now);
    }
  } else if (jobset) {
    SetJobSetStatus(status, conditions, object, r, waiting_pods,
                    running_pods + succeeded_pods + failed_pods, now);
  } else if (IsTrainJob(object)) {
    SetTrainJobConditions(conditions, r, now);
    status["jobsStatus"] = TrainJobJobsStatus(r);
  } else if (volcano) {
    std::string phase = r.phase == Phase::kRunning     ? "Running"
                        : r.phase == Phase::kSucceeded ? "Completed"
                        : r.phase == Phase::kFailed    ? "Failed"
                        : !r.evictions.empty()         ? "Restarting"
                                                       : "Pending";
    json state = status.value("state", json::object());
    if (state.value("phase", "") != phase) {
      state["phase"] = phase;
      state["lastTransitionTime"] = now;
    }
    status["state"] = state;
    status["running"] = running_pods;
    status["succeeded"] = succeeded_pods;
    status["failed"] = failed_pods;
    status["retryCount"] = r.failures;
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  object["status"] = std::move(status);
  return object;
}

void MovePlacementToAnnotation(json& workload) {
  json& status = workload["status"];
  json& meta = workload["metadata"];
  if (status.is_object() && status.contains("placement")) {
    meta["annotations"][kPlacementAnnotation] =
        status["placement"].value("pods", json::array()).dump();
    status.erase("placement");
  } else if (meta.contains("annotations") && meta["annotations"].is_object()) {
    meta["annotations"].erase(kPlacementAnnotation);
    if (meta["annotations"].empty()) meta.erase("annotations");
  }
}

json ParkedWorkloadObject(const json& existing, const std::string& why, const std::string& now) {
  if (!existing.is_object()) return json();
  json object = existing;
  json& status = object["status"];
  if (!status.is_object()) status = json::object();
  status.erase("admission");
  status.erase("placement");
  json conditions = status.value("conditions", json::array());
  SetCondition(conditions, "QuotaReserved", false, "Inadmissible",
               why + "; it waits until the job changes", now);
  SetCondition(conditions, "Admitted", false, "NoReservation", "The workload has no reservation",
               now);
  status["conditions"] = std::move(conditions);
  if (object["metadata"].contains("annotations") && object["metadata"]["annotations"].is_object())
    object["metadata"]["annotations"].erase(kPlacementAnnotation);
  return object;
}

json DecisionEvent(const engine::LogEntry& e, const JobRef& ref, int64_t sequence) {
  static const std::map<std::string, std::pair<std::string, std::string>> kEvents = {
      {"Admit", {"Admitted", "Normal"}},
      {"Start", {"Started", "Normal"}},
      {"Finish", {"Completed", "Normal"}},
      {"Preempt", {"Preempting", "Normal"}},
      {"Evict", {"Evicted", "Warning"}},
      {"Restart", {"Restarting", "Warning"}},
      {"Fail", {"Failed", "Warning"}},
      {"Adopt", {"Adopted", "Normal"}},
      // Elastic gangs resized in place: "4 -> 8 pods", "8 -> 6 pods: ... by <preemptor>".
      {"Grow", {"Resized", "Normal"}},
      {"Shrink", {"Shrunk", "Normal"}},
      {"WaitForNodes", {"WaitForNodes", "Normal"}},
      {"Inadmissible", {"FailedToStart", "Warning"}}};
  auto it = kEvents.find(e.action);
  if (it == kEvents.end()) return json();
  const auto& [reason, type] = it->second;
  std::string name = ref.name + "." + std::to_string(sequence) + "." +
                     std::to_string(static_cast<int64_t>(e.time * 1000));
  std::string ts = Rfc3339(e.time);
  std::string message = e.message;
  if (!e.reason.empty() && message.find(e.reason) == std::string::npos) {
    message = e.reason + (message.empty() ? "" : ": " + message);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", ref.namespace_}}},
          {"involvedObject",
           {{"apiVersion", ref.api_version},
            {"kind", ref.kind},
            {"name", ref.name},
            {"namespace", ref.namespace_},
            {"uid", ref.uid}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"count", 1},
          {"firstTimestamp", ts},
          {"lastTimestamp", ts},
          {"source", {{"component", "muster-scheduler"}}}};
}

RecordedAdmission ReadRecordedAdmission(const json& admission, const json& placement_pods,
                                        const engine::WorkloadRecord& record,
                                        const placement::ClusterState& cluster) {
  RecordedAdmission out;
  const model::Workload& w = record.workload;
  // Anyone with access may have edited the object: every shape is checked.
  if (!admission.is_object()) {
    out.status = FailedPrecondition("its recorded admission is not an object");
    return out;
  }
  const json assignments = admission.value("podSetAssignments", json::array());
  for (const auto& a : assignments.is_array() ? assignments : json::array()) {
    if (!a.is_object()) continue;
    admission::PodSetAssignment psa;
    psa.pod_set = a.value("name", "");
    psa.count = a.value("count", 0);
    const json flavors = a.value("flavors", json::object());
    for (const auto& [res, flavor] : flavors.items()) {
      if (flavor.is_string()) psa.flavors[res] = flavor.get<std::string>();
    }
    out.assignment.pod_sets.push_back(std::move(psa));
  }
  out.plan.workload_key = record.key();
  if (!placement_pods.is_array()) {
    out.status = FailedPrecondition("its recorded placement is not a list of pods");
    return out;
  }
  for (const auto& p : placement_pods) {
    placement::PodPlacement pod;
    if (!p.is_object() || !p.value("podSet", json()).is_string() ||
        !p.value("node", json()).is_string()) {
      out.status = FailedPrecondition("its recorded placement has a malformed pod entry");
      return out;
    }
    const std::string set = p.value("podSet", "");
    pod.pod_set = -1;
    for (size_t i = 0; i < w.pod_sets.size(); ++i) {
      if (w.pod_sets[i].name == set) pod.pod_set = static_cast<int32_t>(i);
    }
    auto node = cluster.FindNode(p.value("node", ""));
    if (pod.pod_set < 0 || !node) {
      out.status = FailedPrecondition("its recorded placement names an unknown pod set or node");
      return out;
    }
    pod.node = *node;
    try {
      pod.index = p.value("index", 0);
      pod.gpus = p.value("gpus", std::vector<int32_t>{});
      pod.numa_zone = p.value("numaZone", -1);
      pod.container_zones = p.value("containerZones", std::vector<int32_t>{});
    } catch (const json::exception& e) {
      out.status =
          FailedPrecondition(std::string("its recorded placement is malformed: ") + e.what());
      return out;
    }
    out.plan.pods.push_back(std::move(pod));
  }
  return out;
}

QueueCounts CountQueueWorkloads(const engine::Engine& engine) {
  QueueCounts out;
  for (const auto& r : engine.workloads()) {
    if (!r.submitted || r.Finished()) continue;
    admission::QueueInfo q = engine.QueueOf(r.key());
    auto& cq = out.cluster_queues[q.cluster_queue];
    auto& lq = out.local_queues[r.workload.meta.namespace_ + "/" + q.local_queue];
    if (r.Active()) {
      ++cq.admitted, ++lq.admitted;
    } else {
      ++cq.pending, ++lq.pending;
    }
  }
  return out;
}

json ClusterQueueActiveCondition(const model::ClusterQueue& cq,
                                 const std::set<std::string>& flavors) {
  auto inactive = [](const char* reason, const std::string& message) {
    return json{{"type", "Active"}, {"status", "False"}, {"reason", reason}, {"message", message}};
  };
  if (cq.terminating)
    return inactive("Terminating", "Can't admit new workloads; clusterQueue is terminating");
  std::vector<std::string> reasons, messages, missing;
  for (const auto& group : cq.resource_groups) {
    for (const auto& f : group.flavors) {
      if (flavors.count(f.name) == 0) missing.push_back(f.name);
    }
  }
  if (cq.stop_policy != model::StopPolicy::kNone) {
    reasons.emplace_back("Stopped");
    messages.emplace_back("is stopped");
  }
  if (!missing.empty()) {
    reasons.emplace_back("FlavorNotFound");
    messages.push_back("references missing ResourceFlavor(s): " + JoinStrings(missing, ","));
  }
  if (reasons.empty()) {
    return {{"type", "Active"},
            {"status", "True"},
            {"reason", "Ready"},
            {"message", "Can admit new workloads"}};
  }
  return inactive(reasons.front().c_str(),
                  "Can't admit new workloads: " + JoinStrings(messages, ", ") + ".");
}

json QueueCountStatus(const QueueCounts::Count& count) {
  // Kueue counts a workload holding quota as both reserving and admitted.
  return {{"pendingWorkloads", count.pending},
          {"reservingWorkloads", count.admitted},
          {"admittedWorkloads", count.admitted}};
}

QueueUsage AdmittedUsage(const engine::Engine& engine) {
  QueueUsage usage;
  for (const auto& r : engine.workloads()) {
    if (!r.Active()) continue;
    std::string cq = engine.QueueOf(r.key()).cluster_queue;
    for (size_t i = 0; i < r.assignment.pod_sets.size() && i < r.workload.pod_sets.size(); ++i) {
      const auto& a = r.assignment.pod_sets[i];
      ResourceList total = r.workload.pod_sets[i].requests.Scaled(a.count);
      for (const auto& [res, flavor] : a.flavors) {
        ResourceId id = ResourceNames::Intern(res);
        usage[{cq, flavor, res}] += total.Get(id);
      }
    }
  }
  return usage;
}

json ClusterQueueStatus(const model::ClusterQueue& cq, const QueueCounts::Count& count,
                        const QueueUsage& usage) {
  json flavors = json::array();
  for (const auto& group : cq.resource_groups) {
    for (const auto& f : group.flavors) {
      json resources = json::array();
      for (const auto& res : f.resources) {
        auto it = usage.find({cq.meta.name, f.name, res.name});
        int64_t amount = it == usage.end() ? 0 : it->second;
        resources.push_back(
            {{"name", res.name},
             {"total", ResourceList::FormatAmount(ResourceNames::Intern(res.name), amount)}});
      }
      flavors.push_back({{"name", f.name}, {"resources", resources}});
    }
  }
  json status = QueueCountStatus(count);
  status["flavorsReservation"] = flavors;
  status["flavorsUsage"] = flavors;
  return status;
}

engine::Engine::RequeueState ReadRequeueState(const json& workload) {
  engine::Engine::RequeueState out;
  if (!workload.is_object()) return out;
  const json spec = workload.value("spec", json::object());
  out.deactivated = spec.is_object() && spec.value("active", json(true)) == json(false);
  const json status = workload.value("status", json::object());
  if (!status.is_object()) return out;
  const json rs = status.value("requeueState", json::object());
  if (rs.is_object()) {
    if (rs.value("count", json()).is_number_integer()) out.count = rs["count"].get<int32_t>();
    if (rs.value("requeueAt", json()).is_string()) {
      out.requeue_at = ParseRfc3339(rs["requeueAt"].get<std::string>());
    }
  }
  const json conditions = status.value("conditions", json::array());
  const json* evicted = FindCondition(conditions, "Evicted");
  if (evicted != nullptr && evicted->value("status", "") == "True" &&
      evicted->value("reason", "") == engine::kReasonPodsReadyTimeout) {
    out.evicted_at = ParseRfc3339(evicted->value("lastTransitionTime", ""));
  }
  return out;
}

}  // namespace muster::control
