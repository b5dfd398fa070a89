// Engine changes a long-running server makes between cycles: workloads created and
// deleted at runtime, workloads adopted where they already run after the engine
// was rebuilt (server restart, cluster or queue configuration changed), and nodes
// added, edited and removed, queue quotas edited and LocalQueues put and removed in
// place.
#include <fmt/format.h>

#include <utility>

#include "engine/engine.h"
#include "model/kueue_names.h"

namespace muster::engine {
namespace {

// The plan must bind exactly the pods the assignment admits, no gang below its
// minimum, on nodes that exist and take pods: otherwise the invariants break.
Status CheckAdoptedPlan(const WorkloadRecord& record, const admission::Assignment& assignment,
                        const placement::GangPlan& plan, const placement::ClusterState& cluster) {
  const model::Workload& wl = record.workload;
  if (assignment.pod_sets.size() != wl.pod_sets.size()) {
    return InvalidArgument(
        fmt::format("cannot adopt {}: the assignment has {} pod sets, the workload {}", wl.key,
                    assignment.pod_sets.size(), wl.pod_sets.size()));
  }
  std::vector<int32_t> per_set(wl.pod_sets.size(), 0);
  for (const placement::PodPlacement& pod : plan.pods) {
    if (pod.pod_set < 0 || static_cast<size_t>(pod.pod_set) >= per_set.size()) {
      return InvalidArgument(
          fmt::format("cannot adopt {}: the plan names unknown pod set {}", wl.key, pod.pod_set));
    }
    per_set[pod.pod_set]++;
    if (pod.node < 0 || pod.node >= cluster.NodeCount()) {
      return FailedPrecondition(fmt::format(
          "cannot adopt {}: node index {} of its plan is not in the cluster", wl.key, pod.node));
    }
    const model::Node& node = cluster.GetNode(pod.node);
    if (node.unschedulable) {
      return FailedPrecondition(
          fmt::format("cannot adopt {}: node {} is unschedulable", wl.key, node.meta.name));
    }
  }
  int32_t total = 0;
  for (size_t i = 0; i < per_set.size(); ++i) {
    total += per_set[i];
    if (per_set[i] != assignment.pod_sets[i].count) {
      return InvalidArgument(
          fmt::format("cannot adopt {}: the plan places {} pods of {}, the "
                      "assignment admits {}",
                      wl.key, per_set[i], wl.pod_sets[i].name, assignment.pod_sets[i].count));
    }
  }
  if (total < wl.min_available) {
    return InvalidArgument(fmt::format("cannot adopt {}: {} pods are below its gang minimum {}",
                                       wl.key, total, wl.min_available));
  }
  return Status::Ok();
}

}  // namespace

Status Engine::AddWorkload(model::Workload workload) {
  if (workload.key.empty()) return InvalidArgument("a workload needs a key");
  if (records_.Find(workload.key) != nullptr) {
    return AlreadyExists("workload " + workload.key + " already exists");
  }
  records_.Add(std::move(workload));
  ++generation_;
  return Status::Ok();
}

Status Engine::RemoveWorkload(const std::string& key) {
  WorkloadRecord* found = records_.Find(key);
  if (found == nullptr) return NotFound("workload " + key + " not found");
  WorkloadRecord& record = *found;
  bool held_capacity = record.Active();
  if (held_capacity) StopGang(record, StopCause::kDeleted);
  parts_.admitter->Remove(key);
  if (held_capacity) {
    // Freed nodes may let parked workloads of any queue fit.
    parts_.admitter->NotifyCapacityChanged();
    bridge_.Reset();
  }
  placement_waits_.erase(key);
  log_.Add({Now(), key, "Delete", "", std::string(PhaseName(record.phase))});
  ++generation_;
  records_.Remove(key);  // last: `key` may be the record's own
  return Status::Ok();
}

Status Engine::Adopt(const std::string& key, const admission::Assignment& assignment,
                     placement::GangPlan plan, Time admitted_at, Time started_at) {
  WorkloadRecord* r = FindMutable(key);
  if (r == nullptr) return NotFound("workload " + key + " not found");
  if (!r->submitted || r->phase != Phase::kPending || r->bound) {
    return FailedPrecondition(fmt::format("cannot adopt {}: it is {}{}", key, PhaseName(r->phase),
                                          r->submitted ? "" : " (not submitted)"));
  }
  if (Status st = CheckAdoptedPlan(*r, assignment, plan, *parts_.cluster); !st.ok()) return st;
  plan.workload_key = key;
  // Nodes first (Commit validates before it binds), then quota; undo the nodes
  // when quota refuses, so a failure changes nothing.
  if (Status st = parts_.cluster->Commit(plan, r->workload); !st.ok()) {
    return Status(st.code(), "cannot adopt " + key + ": " + st.message());
  }
  if (Status st = parts_.admitter->Adopt(r->SharedWorkload(), assignment, Now()); !st.ok()) {
    parts_.cluster->Release(key);
    return st;
  }
  bridge_.Reset();  // plans cached before these nodes were taken are stale
  r->pending_note = {};
  placement_waits_.erase(key);
  RememberQueue(*r);
  r->assignment = assignment;
  r->plan = std::move(plan);
  r->bound = true;
  r->phase = Phase::kRunning;
  r->admit_time = admitted_at;
  if (!r->first_admit_time) r->first_admit_time = admitted_at;
  r->start_time = started_at;
  // It ran before: counted ready until the executor says otherwise (then only
  // waitForPodsReady's recoveryTimeout applies), not timed out from its old admission.
  r->pods_ready = true;
  ++generation_;
  TrackGrowth(*r);            // an adopted elastic gang below its counts may grow again
  ApplyNoExecute(*r, false);  // a NoExecute taint set while no server watched
  log_.Add({Now(), key, "Adopt", "",
            fmt::format("{} pods, admitted at {}, started at {}", r->plan.pods.size(), admitted_at,
                        started_at)});
  return Status::Ok();
}

Status Engine::UpdateNode(const model::Node& node, const model::NodeTopology* numa) {
  auto idx = parts_.cluster->FindNode(node.meta.name);
  if (!idx) return NotFound("node " + node.meta.name + " not found");
  // What changed, read before the cluster replaces the old node.
  const model::Node& before = parts_.cluster->GetNode(*idx);
  const bool cordon_changed = before.unschedulable != node.unschedulable;
  const bool resized = !(before.allocatable == node.allocatable);
  // Volcano's proportion divides the allocatable of ready, schedulable nodes.
  const bool ready = parts_.cluster->NodeReady(*idx);
  const ResourceList counted_before =
      ready && !before.unschedulable ? before.allocatable : ResourceList();
  std::string what;
  auto note = [&what](const char* part) { what += what.empty() ? part : std::string(", ") + part; };
  if (cordon_changed) note(node.unschedulable ? "cordoned" : "uncordoned");
  if (resized) note("allocatable");
  if (before.meta.labels != node.meta.labels) note("labels");
  const std::vector<model::Taint> before_taints = before.taints;
  if (before_taints != node.taints) note("taints");
  if (before.meta.annotations != node.meta.annotations) note("annotations");
  if (Status s = parts_.cluster->UpdateNode(*idx, node, numa); !s.ok()) return s;
  // Placement results of this pass may have read the old node.
  bridge_.Reset();
  if (cordon_changed || resized) {
    if (!cluster_total_) {
      UpdateClusterCapacity();
    } else {
      *cluster_total_ -= counted_before;
      if (ready && !node.unschedulable) *cluster_total_ += node.allocatable;
      parts_.admitter->SetClusterCapacity(*cluster_total_);
    }
  }
  // Running pods stay, as on a cordoned or resized Kubernetes node, unless a
  // NoExecute taint turns them out.
  if (before_taints != node.taints && NodeTaintsChanged(*idx, node.meta.name)) ++generation_;
  parts_.admitter->NotifyCapacityChanged();
  log_.Add({Now(), node.meta.name, "NodeUpdated", "", std::move(what)});
  return Status::Ok();
}

Status Engine::AddNode(const model::Node& node, const model::NodeTopology* numa) {
  auto added = parts_.cluster->AddNode(node, numa);
  if (!added.ok()) return added.status();
  bridge_.Reset();  // plans of this pass were made without it
  if (!cluster_total_) {
    UpdateClusterCapacity();
  } else if (!node.unschedulable) {
    *cluster_total_ += node.allocatable;
    parts_.admitter->SetClusterCapacity(*cluster_total_);
  }
  parts_.admitter->NotifyCapacityChanged();
  log_.Add(
      {Now(), node.meta.name, "NodeAdded", "",
       fmt::format("{} nodes", parts_.cluster->NodeCount() - parts_.cluster->RemovedNodeCount())});
  return Status::Ok();
}

Status Engine::SetHyperNodes(const std::vector<model::HyperNode>& hyper_nodes) {
  if (Status s = parts_.cluster->SetHyperNodes(hyper_nodes); !s.ok()) return s;
  bridge_.Reset();  // plans of this pass were made with the old domains
  parts_.admitter->NotifyCapacityChanged();
  ++generation_;
  log_.Add({Now(), "", "HyperNodesChanged", "", fmt::format("{} HyperNodes", hyper_nodes.size())});
  return Status::Ok();
}

Status Engine::RemoveNode(const std::string& node) {
  auto idx = parts_.cluster->FindNode(node);
  if (!idx) return NotFound("node " + node + " not found");
  const bool counted =
      parts_.cluster->NodeReady(*idx) && !parts_.cluster->GetNode(*idx).unschedulable;
  const ResourceList allocatable = parts_.cluster->GetNode(*idx).allocatable;
  ++generation_;
  // Its gangs first (sorted by key: a deterministic order); the cluster refuses to
  // drop a node with pods bound.
  const std::string detail = "node " + node + " was removed";
  for (WorkloadRecord* r : GangsOnNode(*idx, node)) {
    EvictAndRequeue(*r, Eviction{Now(), kReasonNodeFailure, detail, ""});
  }
  if (Status s = parts_.cluster->RemoveNode(*idx); !s.ok()) {
    parts_.admitter->NotifyCapacityChanged();  // the evicted gangs' nodes are free
    return s;
  }
  bridge_.Reset();  // plans of this pass may name it
  if (!cluster_total_) {
    UpdateClusterCapacity();
  } else if (counted) {
    *cluster_total_ -= allocatable;
    parts_.admitter->SetClusterCapacity(*cluster_total_);
  }
  parts_.admitter->NotifyCapacityChanged();
  log_.Add(
      {Now(), node, "NodeRemoved", kReasonNodeFailure,
       fmt::format("{} nodes", parts_.cluster->NodeCount() - parts_.cluster->RemovedNodeCount())});
  return Status::Ok();
}

Status Engine::UpdateQuotas(const std::string& queue,
                            const std::vector<model::ResourceGroup>& groups) {
  if (Status s = parts_.admitter->UpdateQuotas(queue, groups); !s.ok()) return s;
  log_.Add({Now(), queue, "QuotaUpdated", "", ""});
  return Status::Ok();
}

Status Engine::SetStopPolicy(const std::string& cluster_queue, model::StopPolicy policy,
                             bool terminating) {
  if (Status s = parts_.admitter->UpdateStopPolicy(cluster_queue, policy, terminating); !s.ok())
    return s;
  ++generation_;
  log_.Add({Now(), cluster_queue, "StopPolicy", "",
            terminating ? std::string("Terminating") : model::StopPolicyName(policy)});
  return Status::Ok();
}

Status Engine::PutLocalQueue(const model::LocalQueue& lq) {
  if (Status s = parts_.admitter->PutLocalQueue(lq); !s.ok()) return s;
  ++generation_;
  // The entry is the LocalQueue's (a namespaced key, withheld from readers of other
  // namespaces); its message names no ClusterQueue, which would say whose it is.
  log_.Add({Now(), lq.meta.namespace_ + "/" + lq.meta.name, "LocalQueueUpdated", "",
            std::string("stopPolicy ") + model::StopPolicyName(lq.stop_policy)});
  return Status::Ok();
}

Status Engine::PutNamespace(const model::Namespace& ns) {
  if (Status s = parts_.admitter->PutNamespace(ns); !s.ok()) return s;
  ++generation_;
  return Status::Ok();
}

Status Engine::RemoveNamespace(const std::string& name) {
  if (Status s = parts_.admitter->RemoveNamespace(name); !s.ok()) return s;
  ++generation_;
  return Status::Ok();
}

Status Engine::RemoveLocalQueue(const std::string& namespace_, const std::string& name) {
  if (Status s = parts_.admitter->RemoveLocalQueue(namespace_, name); !s.ok()) return s;
  ++generation_;
  log_.Add({Now(), namespace_ + "/" + name, "LocalQueueRemoved", "", ""});
  return Status::Ok();
}

}  // namespace muster::engine
