// Elastic gangs in cluster mode, as Volcano runs them on a real cluster: the job's
// controller (training operator, Volcano's job controller) creates every replica;
// muster binds only as many as the engine admitted, and the others stay Pending with
// PodScheduled=False (Unschedulable) and a reason. When the engine grows the gang,
// the binder binds more of the pending pods (reconciler_cluster.cc, BindGang); when
// a preemptor shrinks it, the pods muster bound beyond the new count (the highest
// indices) are deleted, as Volcano's preempt and reclaim evict the pods above
// minAvailable: their controller makes them again, and they wait unbound.
#include <algorithm>
#include <set>
#include <utility>

#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

int32_t PlannedPods(const engine::WorkloadRecord& record) {
  return static_cast<int32_t>(record.plan.pods.size());
}

int32_t MaxPods(const engine::WorkloadRecord& record) {
  int32_t n = 0;
  for (const auto& ps : record.workload.pod_sets) n += ps.count;
  return n;
}

}  // namespace

std::vector<GangPod> Reconciler::GangPodsToBind(
    const engine::WorkloadRecord& record, const std::map<std::string, WatchedPod>& pods) const {
  std::vector<GangPod> out;
  for (const auto& [name, pod] : pods) {
    if (!pod.live) continue;
    if (std::find(options_.scheduler_names.begin(), options_.scheduler_names.end(),
                  pod.scheduler_name) == options_.scheduler_names.end())
      continue;  // another scheduler places it; muster's admission still steers it
    GangPod g;
    g.name = name;
    g.pod_set = pod.pod_set;
    g.index = pod.index;
    for (const auto& ps : record.workload.pod_sets) {
      if (ps.name == pod.pod_set && ps.pods_per_job > 0 && pod.job_index >= 0)
        g.index = pod.job_index * ps.pods_per_job + std::max(0, pod.index);
    }
    g.node_name = pod.node;
    out.push_back(std::move(g));
  }
  return out;
}

void Reconciler::DeleteShrunkPods(JobState& job) {
  const engine::WorkloadRecord* r = engine_->Find(job.key);
  auto gang = gang_pods_.find(job.key);
  if (r == nullptr || gang == gang_pods_.end()) return;
  std::set<std::pair<std::string, int32_t>> planned;
  for (const auto& p : r->plan.pods)
    planned.insert({r->workload.pod_sets[p.pod_set].name, p.index});
  for (const GangPod& pod : GangPodsToBind(*r, gang->second)) {
    // Only pods muster bound to a slot that the plan no longer has: an indexed pod
    // beyond the admitted count. Unindexed pods are never bound beyond the plan.
    if (pod.node_name.empty() || pod.index < 0 || planned.count({pod.pod_set, pod.index}) != 0)
      continue;
    if (!job.shrink_deleted.insert(pod.name).second) continue;  // asked already
    Log("deleting " + job.ref.namespace_ + "/" + pod.name + ": " + job.key + " shrank to " +
        std::to_string(PlannedPods(*r)) + " pods");
    WriteOp op;
    op.kind = WriteKind::kDeletePod;
    op.resource = "pods";
    op.namespace_ = job.ref.namespace_;
    op.name = pod.name;
    Submit(nullptr, std::move(op));
  }
  // A pod that is gone (or bound again after a later grow) may be deleted again.
  for (auto it = job.shrink_deleted.begin(); it != job.shrink_deleted.end();) {
    auto pod = gang->second.find(*it);
    bool pending = pod != gang->second.end() && pod->second.live && !pod->second.node.empty();
    it = pending ? std::next(it) : job.shrink_deleted.erase(it);
  }
}

void Reconciler::MarkUnboundPods(JobState& job, const engine::WorkloadRecord& record,
                                 const std::vector<GangPod>& pods, const BindPlan& plan) {
  std::set<std::string> bound;
  for (const auto& [pod, node] : plan.bindings) bound.insert(pod);
  const int32_t running = PlannedPods(record), size = MaxPods(record);
  if (running >= size) return;
  const std::string message = record.key() + " runs " + std::to_string(running) + " of its " +
                              std::to_string(size) +
                              " pods (elastic); this pod waits for free capacity";
  std::map<std::string, std::string> written;
  for (const GangPod& pod : pods) {
    if (!pod.node_name.empty() || bound.count(pod.name) != 0) continue;
    auto before = job.unbound_written.find(pod.name);
    if (before != job.unbound_written.end() && before->second == message) {
      written.insert(*before);
      continue;
    }
    written[pod.name] = message;
    WriteOp op;
    op.kind = WriteKind::kMergeStatus;
    op.resource = "pods";
    op.namespace_ = job.ref.namespace_;
    op.name = pod.name;
    op.object = {{"status",
                  {{"phase", "Pending"},
                   {"conditions", json::array({{{"type", "PodScheduled"},
                                                {"status", "False"},
                                                {"reason", "Unschedulable"},
                                                {"message", message},
                                                {"lastTransitionTime", Now()}}})}}}};
    Submit(nullptr, std::move(op));
  }
  job.unbound_written = std::move(written);
}

}  // namespace muster::control
