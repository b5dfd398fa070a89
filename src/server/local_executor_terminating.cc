// Graceful pod deletion on this machine's kubelet side (local_executor.h): a Pod
// marked with a grace period keeps running, Terminating, until its process stops;
// then its object goes.
#include "server/local_executor.h"
#include "server/pod_paths.h"

namespace muster::server {

void LocalExecutor::HandleMarkedPods() {
  std::vector<TerminatingPod> marked;
  {
    std::lock_guard<std::mutex> lock(deleted_mu_);
    marked.swap(marked_pods_);
  }
  for (TerminatingPod& pod : marked) {
    const std::string id = PodProcessId(pod.key.namespace_, pod.key.name);
    if (!processes_.Running(id)) {
      // Nothing runs for it here (not started, waiting for its image, ended): the
      // kubelet has nothing to stop and deletes it at once.
      terminating_.erase(id);
      store_.Delete(pod.key, std::nullopt, pod.uid).ok();
      continue;
    }
    // A second delete may have shortened the period: the earlier SIGKILL wins.
    Terminate(id, static_cast<double>(pod.grace));
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
