// LocalExecutor after a restart: a gang a previous server started is adopted with
// its pods' processes as they are now (running, or ended while the server was down),
// and the pod directories whose Pod objects went meanwhile are removed.
#include "control/json_fields.h"
#include "control/workload_objects.h"
#include "server/adopted_pods.h"
#include "server/local_executor.h"
#include "server/pod_paths.h"
#include "workloads/workloads.h"

namespace muster::server {

using json = nlohmann::json;

void LocalExecutor::AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                                   const std::map<std::string, RecoveredProcess>& recovered) {
  // The pods' addresses are the ones the previous server gave them.
  std::map<std::string, std::string> ips;
  std::map<std::string, json> stored;  // before Started rewrites them
  std::set<std::string> held;          // pods held back by their start order: never started
  for (const auto& p : record.plan.pods) {
    std::string name = workloads::DefaultHostname(record.workload, p.pod_set, p.index);
    auto object = store_.Get({"pods", record.workload.meta.namespace_, name});
    if (object.ok() && object->contains("status") && (*object)["status"].is_object()) {
      ips[name] = (*object)["status"].value("podIP", "");
      if (!record.workload.pod_sets[p.pod_set].start_after.empty() &&
          (*object)["status"].value("phase", "") == "Pending") {
        held.insert(name);
      }
      stored[name] = std::move(*object);
    }
  }
  Started(record, now);
  Gang& gang = gangs_.at(current_.at(record.key()));
  gang.launched = true;
  gang.released = true;  // its Workload recorded the admission before this start
  int64_t attempt = current_.at(record.key());
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    PodRun& pod = gang.pods[i];
    if (addresses_.Reserve(ips[pod.name])) pod.ip = ips[pod.name];
    // Its restarts so far, as its object counted them (the next start counts on).
    const json& statuses =
        control::ArrayField(control::ObjectField(stored[pod.name], "status"), "containerStatuses");
    if (!statuses.empty()) {
      pod.restarts = static_cast<int32_t>(control::IntField(statuses[0], "restartCount"));
      restarts_[gang.namespace_ + "/" + pod.name] = pod.restarts + 1;
    }
    auto it = recovered.find(pod.id);
    if (it == recovered.end() &&
        (held.count(pod.name) != 0 || ResumeImageWait(gang, pod, stored[pod.name]))) {
      // Never started: still waiting for its replicated job's turn (the next Run
      // starts it), or for its image again.
    } else if (it == recovered.end()) {
      pod.state = PodState::kFailed;
      pod.exit_code = 137;
      pod.reason = "ContainerStatusUnknown";
      pod.message = "the pod's process was not found after the server restarted";
    } else if (it->second.running) {
      pod.state = PodState::kRunning;
      // Its start is the one its object recorded (status.startTime), not this adoption.
      if (auto o = stored.find(pod.name); o != stored.end() && o->second.is_object()) {
        const json status = o->second.value("status", json::object());
        if (status.is_object() && status.value("startTime", json()).is_string()) {
          pod.started_at = status["startTime"].get<std::string>();
        }
      }
      by_process_[pod.id] = {attempt, i};
    } else {
      const ProcessExit exit = it->second.exit.value_or(ProcessExit{pod.id, 137, 0, true});
      pod.exit_code = exit.exit_code;
      pod.state = exit.exit_code == 0 ? PodState::kSucceeded : PodState::kFailed;
      pod.reason = exit.exit_code == 0 ? "Completed" : exit.oom_killed ? "OOMKilled" : "Error";
      pod.message = exit.lost ? "the process vanished while the server was down"
                              : "exited with code " + std::to_string(exit.exit_code);
      // A bare pod's container restarts in place (at once: the back-off is the old
      // server's); its end is its lastState.
      terminated_[gang.namespace_ + "/" + pod.name] = {pod.exit_code, pod.reason, pod.message,
                                                       pod.started_at, control::Rfc3339(now)};
      if (!RestartInPlace(gang, pod, now)) ReleaseAddress(pod);
    }
    WritePod(gang, pod, now);
  }
  // A bare pod's gang owns no other pods (and one that takes over an orphaned pod
  // does so while the server runs, after the start-up's index of pods).
  if (IsExistingPod(gang.workload, 0)) return;
  std::set<std::string> names;
  for (const auto& pod : gang.pods) names.insert(pod.name);
  Sweeper(store_).DeleteOutsideGang(gang.namespace_, gang.job_uid, names);
}

// Pod directories whose Pod object is gone (deleted while the server was down).
void LocalExecutor::CollectOrphanDirs() {
  collected_orphans_ = true;
  for (const std::string& id : processes_.KnownIds()) {
    if (processes_.Running(id) || by_process_.count(id) != 0) continue;
    auto pod = ParsePodProcessId(id);
    if (pod && store_.Get({"pods", pod->first, pod->second}).ok()) continue;
    processes_.Remove(id).ok();
  }
}

}  // namespace muster::server
