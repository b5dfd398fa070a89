// LocalExecutor: elastic gangs changing size in place (Executor::Resized). The engine
// adds the next indices of each pod set when capacity frees and removes the highest
// ones when a preemptor takes them (engine/elastic.cc); here the added pods start
// beside the running ones once their GPUs and names are free, and the removed ones
// stop as a gang's pods do (SIGTERM, grace period, SIGKILL) and leave: their Pod
// objects are deleted once they have ended, as a scale-down of a training job
// deletes its highest replicas.
#include <algorithm>

#include "server/local_executor.h"
#include "server/pod_object.h"
#include "server/pod_paths.h"
#include "workloads/workloads.h"

namespace muster::server {

LocalExecutor::PodRun LocalExecutor::NewPodRun(const model::Workload& workload,
                                               const placement::PodPlacement& placement,
                                               const std::string& ns) const {
  PodRun pod;
  pod.pod_set = placement.pod_set;
  pod.index = placement.index;
  pod.name = workloads::DefaultHostname(workload, placement.pod_set, placement.index);
  pod.subdomain = workloads::DefaultSubdomain(workload, placement.pod_set);
  pod.id = PodProcessId(ns, pod.name);
  pod.node = NodeName(placement.node);
  pod.gpus = placement.gpus;
  return pod;
}

double LocalExecutor::GracePeriod(const Gang& gang, const PodRun& pod) {
  if (pod.pod_set < 0 || pod.pod_set >= static_cast<int32_t>(gang.workload.pod_sets.size()))
    return 30;
  return static_cast<double>(
      gang.workload.pod_sets[pod.pod_set].tmpl.spec.termination_grace_period_seconds);
}

void LocalExecutor::Resized(const engine::WorkloadRecord& record,
                            const std::vector<placement::PodPlacement>& added,
                            const std::vector<placement::PodPlacement>& removed, Time now) {
  auto cur = current_.find(record.key());
  if (cur == current_.end()) return;
  const int64_t attempt = cur->second;
  Gang& gang = gangs_.at(attempt);
  for (const auto& p : removed) {
    for (PodRun& pod : gang.pods) {
      if (pod.shrunk || pod.pod_set != p.pod_set || pod.index != p.index) continue;
      pod.shrunk = true;
      if (pod.state == PodState::kRunning) Terminate(pod.id, GracePeriod(gang, pod));
    }
  }
  // Pods that were not running leave now; the running ones once they have ended.
  RetireShrunkPods(attempt, gang);
  for (const auto& p : added) {
    gang.pods.push_back(NewPodRun(record.workload, p, gang.namespace_));
    // Pending until it starts (the next Run); written now so its uid exists.
    WritePod(gang, gang.pods.back(), now);
  }
  MarkChanged(gang.key);
  ++changes_;
}

bool LocalExecutor::PodCanStart(const PodRun& pod) const {
  // A pod of the same name (stopped by an earlier shrink, or an earlier gang) still
  // running or not yet reaped.
  if (processes_.Running(pod.id) || by_process_.count(pod.id) != 0) return false;
  for (const auto& [attempt, other] : gangs_) {
    for (const PodRun& q : other.pods) {
      if (&q == &pod) continue;
      if (q.id == pod.id && q.shrunk) return false;  // leaves first
      if (q.state != PodState::kRunning || q.node != pod.node) continue;
      for (int32_t g : q.gpus) {
        if (std::find(pod.gpus.begin(), pod.gpus.end(), g) != pod.gpus.end()) return false;
      }
    }
  }
  return true;
}

void LocalExecutor::StartAddedPods(int64_t attempt, Gang& gang, Time now) {
  std::vector<size_t> ready;
  const std::vector<bool> blocked = BlockedPodSets(gang);
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    const PodRun& pod = gang.pods[i];
    if (blocked[pod.pod_set]) continue;  // its replicated job starts after another
    // A pod waiting for its image starts again once its back-off ran out.
    if (pod.image_wait && !pod.retry_start) continue;
    // A container restarted in place starts again once its back-off ran out.
    if (pod.crash_wait && now < pod.restart_at) continue;
    if (!pod.shrunk && pod.state == PodState::kWaiting && PodCanStart(pod)) ready.push_back(i);
  }
  if (ready.empty()) return;
  for (size_t i : ready) {
    if (gang.pods[i].ip.empty()) gang.pods[i].ip = addresses_.Allocate();
  }
  // The rank env of the gang's launch: same master port, same rendezvous endpoint
  // (PET_RDZV_ENDPOINT), PET_NNODES=min:max, so torch elastic admits the newcomers.
  const workloads::RankContext context = RankContextOf(gang);
  const std::vector<DnsPod> dns = DnsPods(&gang);
  const std::vector<DnsService> services = Services();
  for (size_t i : ready) StartPod(attempt, gang, i, context, dns, services, now);
}

void LocalExecutor::RetireShrunkPods(int64_t attempt, Gang& gang) {
  bool erased = false;
  for (auto it = gang.pods.begin(); it != gang.pods.end();) {
    if (!it->shrunk || it->state == PodState::kRunning) {
      ++it;
      continue;
    }
    const std::string name = it->name, id = it->id;
    const bool existing = IsExistingPod(gang.workload, it->pod_set);
    const bool object_deleted = it->object_deleted;
    EndImageWait(*it);  // a shrink ends its wait for its image too
    it = gang.pods.erase(it);
    erased = true;
    // A later grow may already have added the same index again: its object stays.
    bool reused = std::any_of(gang.pods.begin(), gang.pods.end(),
                              [&](const PodRun& p) { return p.id == id && !p.shrunk; });
    if (reused) continue;
    if (!existing && !object_deleted) {
      if (store_.Delete({"pods", gang.namespace_, name}).ok()) own_deletes_.insert(id);
      ++changes_;
    }
    restarts_.erase(gang.namespace_ + "/" + name);  // a new pod of that name is a new pod
    terminated_.erase(gang.namespace_ + "/" + name);
    if (!processes_.Running(id)) processes_.Remove(id).ok();
  }
  if (!erased) return;
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    if (auto p = by_process_.find(gang.pods[i].id);
        p != by_process_.end() && p->second.first == attempt)
      p->second.second = i;
  }
}

}  // namespace muster::server
