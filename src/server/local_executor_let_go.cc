// LocalExecutor and orphaned pods: a Job deleted with its dependents orphaned
// (kubectl delete --cascade=orphan) leaves its pods running, unowned, as a kubelet
// runs them on. The gang lets go of their processes (they are neither stopped with
// it, written nor deleted), and the one-pod workload each becomes adopts the process
// (ServeExecutor::Adopt) where it runs.
#include "server/local_executor.h"
#include "server/pod_paths.h"

namespace muster::server {

std::set<std::string> LocalExecutor::LetGo(const std::string& key,
                                           const std::set<std::string>& pods) {
  std::set<std::string> out;
  auto cur = current_.find(key);
  if (cur == current_.end()) return out;
  Gang& gang = gangs_.at(cur->second);
  for (PodRun& pod : gang.pods) {
    if (pod.state != PodState::kRunning || pod.shrunk || pod.let_go || pods.count(pod.name) == 0)
      continue;
    by_process_.erase(pod.id);
    // Its address goes with it: the workload that adopts it reserves it again.
    ReleaseAddress(pod);
    pod.ip.clear();
    pod.let_go = true;
    pod.object_deleted = true;  // never written by this gang again
    pod.state = PodState::kSucceeded;
    pod.reason = "Orphaned";
    NoteLetGo(gang.namespace_, pod.name);
    out.insert(pod.name);
  }
  if (!out.empty()) MarkChanged(gang.key);
  return out;
}

void LocalExecutor::StopLetGo(const std::string& ns, const std::string& pod) {
  const std::string id = PodProcessId(ns, pod);
  ForgetLetGo(id);
  Terminate(id, 30);
}

}  // namespace muster::server
