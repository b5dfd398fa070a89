// A bare pod's container restarted in place, as the kubelet does under restartPolicy
// Always (or OnFailure after a failure): the pod stays Running and keeps its address;
// its container waits in CrashLoopBackOff (container_restart.h) and StartAddedPods
// starts it again, restartCount one more and lastState its previous end.
#include "control/json_fields.h"
#include "server/image_pull_backoff.h"
#include "server/local_executor.h"
#include "server/pod_object.h"

namespace muster::server {

bool LocalExecutor::RestartInPlace(const Gang& gang, PodRun& pod, Time now) {
  if (gang.stopping || gang.deleted || pod.shrunk || pod.object_deleted || pod.let_go) return false;
  if (!IsExistingPod(gang.workload, pod.pod_set)) return false;
  const model::PodSpec& spec = gang.workload.pod_sets[pod.pod_set].tmpl.spec;
  if (!RestartsInPlace(spec.restart_policy, pod.exit_code)) return false;
  const std::string key = gang.namespace_ + "/" + pod.name;
  if (auto t = terminated_.find(key); t != terminated_.end()) pod.last_terminated = t->second;
  const double wait = pod.backoff.Wait(now - pod.started);
  pod.state = PodState::kWaiting;
  pod.crash_wait = true;
  pod.restart_at = now + wait;
  pod.exit_code = 0;
  pod.finished_at.clear();
  pod.dirty = true;
  if (wait <= 0) {  // the first restart is at once: no back-off to show
    pod.reason.clear();
    pod.message.clear();
    return true;
  }
  const std::string container = spec.containers.empty() ? "main" : spec.containers[0].name;
  std::string uid;
  if (auto object = store_.Get({"pods", gang.namespace_, pod.name}); object.ok()) {
    uid = control::StringField(control::ObjectField(*object, "metadata"), "uid");
  }
  const std::string who = pod.name + "_" + gang.namespace_ + "(" + uid + ")";
  pod.reason = "CrashLoopBackOff";
  pod.message =
      "back-off " + GoDuration(wait) + " restarting failed container=" + container + " pod=" + who;
  pending_events_.push_back(
      {gang.namespace_,
       pod.name,
       pod.node,
       {"Warning", "BackOff",
        "Back-off restarting failed container " + container + " in pod " + who}});
  return true;
}

}  // namespace muster::server
