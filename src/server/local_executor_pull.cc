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
//
// The pull itself is a step of its own before `podman run`, as the kubelet's image
// manager does it (EnsureImageExists): imagePullPolicy Always pulls, IfNotPresent
// pulls when `podman image exists` says no, Never never does; Events Pulling, then
// Pulled ("Successfully pulled image ...", or "... already present on machine"). While
// it pulls (in the background: PodmanRuntime::StartPull) the pod is Pending,
// ContainerCreating; a failed pull enters the back-off above.
//
// The back-off is saved in the data directory (image-pull-backoff.json) whenever it
// changes: a pod waiting for its image when the server was killed is adopted waiting
// again, where its back-off was, instead of failing (no process) and restarting it.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "control/pod_workloads.h"
#include "server/local_executor.h"
#include "server/podman_command.h"
#include "server/podman_runtime.h"

namespace muster::server {
namespace {

constexpr char kBackOffFile[] = "image-pull-backoff.json";

}  // namespace

bool LocalExecutor::EnsureImage(const Gang& gang, PodRun& pod, Time now) {
  const auto& containers = gang.workload.pod_sets[pod.pod_set].tmpl.spec.containers;
  if (containers.empty() || containers[0].image.empty()) return true;
  const model::Container& c = containers[0];
  auto policy = PodmanPullPolicy(c.image, c.image_pull_policy);
  if (!policy.ok()) return true;  // the plan reports it (CreateContainerConfigError)
  pod.image = c.image;
  auto note = [&](const PodEventNote& n) {
    pending_events_.push_back({gang.namespace_, pod.name, pod.node, n});
  };
  if (*policy != "always") {
    const std::optional<bool> present = config_.podman->ImagePresent(c.image);
    if (present.value_or(false)) {
      note(AlreadyPresentEvent(c.image));
      return true;
    }
    if (*policy == "never") {
      if (!present) return true;  // podman itself failed: the start reports it
      WaitForImage(gang, pod,
                   pull_backoff_.NeverPull(ImagePullBackOff::Key(pod.id, c.image), c.image, now));
      return false;
    }
  }
  config_.podman->StartPull(pod.id, c.image);
  note(PullingEvent(c.image));
  pod.state = PodState::kWaiting;
  pod.image_wait = true;  // waiting, with no reason: ContainerCreating
  pod.pulling = true;
  pod.pull_started = now;
  pod.retry_start = false;
  pod.reason.clear();
  pod.message.clear();
  pod.dirty = true;
  return false;
}

void LocalExecutor::PullEnded(const Gang& gang, PodRun& pod, Time now) {
  std::optional<PodmanRuntime::PullResult> result = config_.podman->PollPull(pod.id);
  if (!result) return;  // still pulling
  pod.pulling = false;
  if (!result->ok) {
    WaitForImage(gang, pod,
                 pull_backoff_.PullFailed(ImagePullBackOff::Key(pod.id, pod.image), pod.image,
                                          result->error, now));
    return;
  }
  pending_events_.push_back({gang.namespace_, pod.name, pod.node,
                             PulledEvent(pod.image, now - pod.pull_started, result->size)});
  pod.image_ready = true;
  pod.retry_start = true;  // StartAddedPods starts it in this Run
}

bool LocalExecutor::ResumeImageWait(const Gang& gang, PodRun& pod, const nlohmann::json& stored) {
  const auto& containers = gang.workload.pod_sets[pod.pod_set].tmpl.spec.containers;
  if (!config_.podman || containers.empty() || !stored.is_object()) return false;
  const nlohmann::json statuses =
      stored.value("status", nlohmann::json::object()).value("containerStatuses", nlohmann::json());
  if (!statuses.is_array() || statuses.empty() || !statuses[0].is_object()) return false;
  const nlohmann::json waiting =
      statuses[0].value("state", nlohmann::json::object()).value("waiting", nlohmann::json());
  if (!waiting.is_object()) return false;
  const std::string reason = waiting.value("reason", "");
  if (reason != "ErrImagePull" && reason != "ImagePullBackOff" && reason != "ErrImageNeverPull" &&
      reason != "ContainerCreating") {
    return false;
  }
  // It waits as it did (its Events are not repeated); its next look (at once: a
  // loaded entry is due) shows its back-off or tries again. ContainerCreating: its
  // pull was cut short, it is tried again.
  pod.state = PodState::kWaiting;
  pod.image = containers[0].image;
  pod.image_wait = true;
  pod.retry_start = !pull_backoff_.Waiting(ImagePullBackOff::Key(pod.id, pod.image));
  pod.reason = reason == "ContainerCreating" ? "" : reason;
  pod.message = reason == "ContainerCreating" ? "" : waiting.value("message", "");
  return true;
}

void LocalExecutor::LoadPullBackOff() {
  if (config_.data_dir.empty()) return;
  std::ifstream in(config_.data_dir + "/" + kBackOffFile);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  // A damaged file costs only the back-off's progress.
  pull_backoff_.Load(nlohmann::json::parse(text.str(), nullptr, false));
  saved_backoff_version_ = pull_backoff_.version();
}

void LocalExecutor::SavePullBackOff() {
  if (config_.data_dir.empty() || pull_backoff_.version() == saved_backoff_version_) return;
  saved_backoff_version_ = pull_backoff_.version();
  const std::string path = config_.data_dir + "/" + kBackOffFile;
  if (pull_backoff_.size() == 0) {
    ::unlink(path.c_str());
    return;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << pull_backoff_.Save().dump();
    if (!out) return;
  }
  ::rename(tmp.c_str(), path.c_str());
}

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
    if (pod.pulling) {
      PullEnded(gang, pod, now);
      continue;
    }
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
  if (pod.pulling && config_.podman) config_.podman->CancelPull(pod.id);
  pod.image_wait = false;
  pod.retry_start = false;
  pod.pulling = false;
  pod.image_ready = false;
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
