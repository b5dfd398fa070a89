// Queue objects edited at runtime (a long-running server): a ClusterQueue's stop
// policy, LocalQueues created, stopped, resumed and deleted, Namespaces' labels. Each
// re-routes only the pending workloads the object routes; what is admitted keeps its
// quota.
#include "admission/admitter_impl.h"

namespace muster::admission {

void AdmitterImpl::Reroute(WorkloadState& ws) {
  const std::string& key = ws.wl().key;
  if (PendingQueue* q = QueueFor(ws)) q->Erase(ws.qkey);
  physically_parked_.erase(key);
  Resolve(ws);
  if (ws.route == Route::kHeld) {
    // Held, no cycle visits it: what it kept as a preemptor goes, its victims now
    // and its nominated nodes at the next cycle (through the oracle).
    ReleaseHeldVictims(key);
    if (ws.nominated) nominations_to_end_.push_back(key);
  }
  if (PendingQueue* q = QueueFor(ws)) {
    q->Push(ws.qkey);
    // A victim held for its preemptor stays parked until the preemptor is done.
    if (held_for_preemptor_.count(key) != 0) q->Park(ws.qkey);
  }
}

Status AdmitterImpl::UpdateStopPolicy(const std::string& cluster_queue, model::StopPolicy policy,
                                      bool terminating) {
  std::optional<int32_t> found = FindClusterQueue(cluster_queue);
  if (!found) return NotFound("no ClusterQueue " + cluster_queue);
  int32_t c = *found;
  if (cqs_[c].stop_policy == policy && cqs_[c].terminating == terminating) return Status::Ok();
  cqs_[c].stop_policy = policy;
  cqs_[c].terminating = terminating;
  BumpGeneration(c);
  if (policy != model::StopPolicy::kNone) {
    for (const QueueKey& k : cq_pending_[c].All()) {
      Reroute(*static_cast<WorkloadState*>(k.state));  // held with ClusterQueueStopped
    }
    return Status::Ok();
  }
  // Order of insertion does not matter: the pending queue is a sorted set.
  for (auto& [key, ws] : workloads_) {
    if (ws.admitted || ws.route != Route::kHeld || ws.queue != c) continue;
    Reroute(ws);
  }
  return Status::Ok();
}

void AdmitterImpl::RerouteLocalQueue(const std::string& ns, const std::string& name) {
  // Every workload of it, held or queued: a scan of the pending ones' states (the
  // held ones are in no queue). Admitted ones keep their admission.
  for (auto& [key, ws] : workloads_) {
    if (ws.admitted || ws.local_queue != name) continue;
    if (NamespaceOf(ws.wl().meta.namespace_) != ns) continue;
    Reroute(ws);
  }
}

Status AdmitterImpl::PutLocalQueue(const model::LocalQueue& lq) {
  const std::string ns = NamespaceOf(lq.meta.namespace_);
  const std::string key = ns + "/" + lq.meta.name;
  auto it = local_queues_.find(key);
  if (it != local_queues_.end() && it->second.cluster_queue != lq.cluster_queue) {
    // Immutable in Kueue; a store that let it change gets the queues rebuilt.
    return FailedPrecondition("LocalQueue " + key +
                              ": spec.clusterQueue changed; the queues are rebuilt");
  }
  const bool changed = it == local_queues_.end() || it->second.stop != lq.stop_policy;
  LocalQueueState& s = local_queues_[key];
  s.name = lq.meta.name;
  s.cluster_queue = lq.cluster_queue;
  s.cq = FindClusterQueue(lq.cluster_queue).value_or(-1);
  s.stop = lq.stop_policy;
  if (!changed) return Status::Ok();
  if (s.cq >= 0) BumpGeneration(s.cq);
  RerouteLocalQueue(ns, lq.meta.name);
  return Status::Ok();
}

Status AdmitterImpl::RemoveLocalQueue(const std::string& namespace_, const std::string& name) {
  const std::string ns = NamespaceOf(namespace_);
  auto it = local_queues_.find(ns + "/" + name);
  if (it == local_queues_.end()) return NotFound("no LocalQueue " + ns + "/" + name);
  const int32_t cq = it->second.cq;
  local_queues_.erase(it);
  if (cq >= 0) BumpGeneration(cq);
  // Pending workloads wait with LocalQueueNotFound; admitted ones run on, as in
  // Kueue.
  RerouteLocalQueue(ns, name);
  return Status::Ok();
}

const model::StringMap* AdmitterImpl::NamespaceLabels(const std::string& ns) const {
  auto it = namespace_labels_.find(ns);
  return it == namespace_labels_.end() ? nullptr : &it->second;
}

void AdmitterImpl::RerouteNamespace(const std::string& ns) {
  for (auto& [key, ws] : workloads_) {
    if (ws.admitted || NamespaceOf(ws.wl().meta.namespace_) != ns) continue;
    Reroute(ws);
  }
}

Status AdmitterImpl::PutNamespace(const model::Namespace& ns) {
  auto it = namespace_labels_.find(ns.meta.name);
  if (it != namespace_labels_.end() && it->second == ns.meta.labels) return Status::Ok();
  namespace_labels_[ns.meta.name] = ns.meta.labels;
  RerouteNamespace(ns.meta.name);
  return Status::Ok();
}

Status AdmitterImpl::RemoveNamespace(const std::string& name) {
  if (namespace_labels_.erase(name) == 0) return NotFound("no Namespace " + name);
  RerouteNamespace(name);
  return Status::Ok();
}

}  // namespace muster::admission
