// Graceful pod deletion on this machine's kubelet side (local_executor.h): a Pod
// marked with a grace period keeps running, Terminating, until its process stops;
// then its object goes.
#include "control/json_fields.h"
#include "server/graceful_deletion.h"
#include "server/local_executor.h"
#include "server/pod_paths.h"

namespace muster::server {

void LocalExecutor::QueueMarkedPods() {
  auto pods = store_.List("pods", "");
  if (!pods.ok()) return;
  std::lock_guard<std::mutex> lock(deleted_mu_);
  for (const nlohmann::json& pod : pods->items) {
    if (!BeingDeleted(pod) || DeletionGracePeriod(pod) <= 0) continue;
    const nlohmann::json& md = control::ObjectField(pod, "metadata");
    const std::string ns = control::StringField(md, "namespace");
    const std::string name = control::StringField(md, "name");
    marked_pods_.push_back(MarkedPod{PodProcessId(ns, name),
                                     {"pods", ns, name},
                                     control::StringField(md, "uid"),
                                     DeletionGracePeriod(pod)});
  }
}

void LocalExecutor::HandleMarkedPods() {
  std::vector<MarkedPod> marked;
  {
    std::lock_guard<std::mutex> lock(deleted_mu_);
    marked.swap(marked_pods_);
  }
  for (MarkedPod& pod : marked) {
    if (!processes_.Running(pod.id)) {
      // Nothing runs for it here (not started, waiting for its image, ended): the
      // kubelet has nothing to stop and deletes it at once.
      terminating_.erase(pod.id);
      store_.Delete(pod.key, std::nullopt, pod.uid).ok();
      continue;
    }
    // A second delete may have shortened the period: the earlier SIGKILL wins.
    Terminate(pod.id, static_cast<double>(pod.grace));
    const std::string id = pod.id;
    terminating_[id] = std::move(pod);
  }
}

void LocalExecutor::DeleteTerminatedPods() {
  for (auto it = terminating_.begin(); it != terminating_.end();) {
    if (processes_.Running(it->first)) {
      ++it;
      continue;
    }
    // Its end is written (Poll wrote the pod before): the object goes, unless it was
    // replaced meanwhile (uid precondition).
    store_.Delete(it->second.key, std::nullopt, it->second.uid).ok();
    it = terminating_.erase(it);
  }
}

}  // namespace muster::server
