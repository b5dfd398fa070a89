// LocalExecutor: pods waiting for their image, as the kubelet keeps them
// (image_pull_backoff.h). A pull that fails inside `podman run` (exit 125 with a pull
// error) or an image absent under imagePullPolicy Never leaves the pod Pending with
// the container's waiting reason, keeps its address, and records the kubelet's
// Events; each Run looks at it when due: still in its back-off -> ImagePullBackOff,
// else it is started again (StartAddedPods picks it up, with the gang's rank env).
//
// Gangs: a gang whose pod waits stays admitted and its other pods keep running, as
// upstream, where each pod pulls on its own and a Job's controller never fails a
// pod for its image; only a stop (the job deleted or preempted, its lifecycle) or the
// pod's deletion ends the wait. Before, the wait was a failure and the job's restart
// policy restarted the whole gang at once, over and over.
#include "control/pod_workloads.h"
#include "server/local_executor.h"

namespace muster::server {

void LocalExecutor::WaitForImage(const Gang& gang, PodRun& pod, const ImageWaitState& state) {
  pod.state = PodState::kWaiting;
  pod.image_wait = true;
  pod.retry_start = false;
  pod.exit_code = 0;
  pod.reason = state.reason;
  pod.message = state.message;
  pod.dirty = true;
  for (const PodEventNote& note : state.events) {
    pending_events_.push_back({gang.namespace_, pod.name, pod.node, note});
  }
}

void LocalExecutor::SyncImageWaits(Gang& gang, Time now) {
  for (PodRun& pod : gang.pods) {
    if (!pod.image_wait || pod.retry_start || pod.shrunk || pod.object_deleted) continue;
    ImageWaitState state;
    switch (pull_backoff_.Sync(ImagePullBackOff::Key(pod.id, pod.image), pod.image, now, &state)) {
      case ImagePullBackOff::Next::kWait:
        break;
      case ImagePullBackOff::Next::kBackOff:
        WaitForImage(gang, pod, state);
        break;
      case ImagePullBackOff::Next::kRetry:
        pod.retry_start = true;  // StartAddedPods starts it in this Run
        break;
    }
  }
}

void LocalExecutor::EndImageWait(PodRun& pod) {
  if (!pod.image.empty()) pull_backoff_.Forget(ImagePullBackOff::Key(pod.id, pod.image));
  pod.image_wait = false;
  pod.retry_start = false;
}

void LocalExecutor::WritePodEvents(Time now) {
  std::vector<PendingEvent> events;
  events.swap(pending_events_);
  for (const PendingEvent& e : events) {
    auto pod = store_.Get({"pods", e.namespace_, e.pod});
    if (!pod.ok()) continue;  // deleted meanwhile
    nlohmann::json event =
        control::PodEvent(*pod, e.note.type, e.note.reason, e.note.message, now, ++event_sequence_);
    event["source"] = {{"component", "kubelet"}, {"host", e.node}};
    // Each look at a pod in back-off repeats its Events: one Event with a count, as
    // the kubelet's recorder does.
    const bool fresh = event_correlator_.Correlate(event);
    control::ObjectKey key{"events", e.namespace_, event["metadata"].value("name", "")};
    if (!fresh && store_.Get(key).ok()) {
      store_.Update(key, std::move(event), WriteScope::kAll);
    } else {
      store_.Create(key, std::move(event));
    }
  }
}

}  // namespace muster::server
