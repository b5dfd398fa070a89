// Gang minimums: spreading a job-level minimum over pod sets, and PodGroup overrides.
#include <algorithm>

#include "workloads/build_internal.h"
#include "workloads/elastic.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {

void DistributeMinCount(int32_t total, std::vector<model::PodSet>* pod_sets) {
  int32_t left = std::max(total, 0);
  for (model::PodSet& ps : *pod_sets) {
    ps.min_count = std::min(ps.count, left);
    left -= ps.min_count;
  }
}

bool IsElasticJob(const model::ObjectMeta& meta) {
  auto it = meta.annotations.find(std::string(kElasticJobAnnotation));
  return it != meta.annotations.end() && it->second == "true";
}

int32_t SumMinCounts(const std::vector<model::PodSet>& pod_sets) {
  int32_t n = 0;
  for (const model::PodSet& ps : pod_sets) n += ps.min_count;
  return n;
}

// The PodGroup a job's pods belong to: the one named by the annotation (on the job or
// its first template), else the one with the job's name, as the Volcano and
// training-operator controllers create it.
const model::PodGroup* FindPodGroup(const model::ManifestSet& manifests,
                                    const model::Workload& workload) {
  std::string name = workload.meta.name;
  auto from = [&](const model::StringMap& annotations) {
    auto it = annotations.find(std::string(kPodGroupNameAnnotation));
    if (it == annotations.end() || it->second.empty()) return false;
    name = it->second;
    return true;
  };
  if (!from(workload.meta.annotations) && !workload.pod_sets.empty()) {
    from(workload.pod_sets.front().tmpl.annotations);
  }
  for (const model::PodGroup& pg : manifests.pod_groups) {
    if (pg.meta.name == name && pg.meta.namespace_ == workload.meta.namespace_) return &pg;
  }
  return nullptr;
}

std::string ApplyPodGroup(const model::ManifestSet& manifests, model::Workload* workload) {
  const model::PodGroup* pg = FindPodGroup(manifests, *workload);
  if (pg == nullptr) return "";

  bool per_task = false;
  for (model::PodSet& ps : workload->pod_sets) {
    auto it = pg->min_task_member.find(ps.name);
    if (it == pg->min_task_member.end()) continue;
    ps.min_count = std::clamp(it->second, 0, ps.count);
    per_task = true;
  }
  int32_t min_member = std::clamp(pg->min_member, 0, workload->TotalCount());
  // Without minTaskMember the group constrains only the total; keep the per-set
  // minimums consistent with it so that they never demand more than minMember.
  if (!per_task) DistributeMinCount(min_member, &workload->pod_sets);
  workload->min_available = min_member;
  // Volcano schedules the group's pods beyond its minimums as they fit; a PyTorch
  // elastic job keeps its own source (its minReplicas is the group's minMember).
  if (workload->elastic != model::ElasticSource::kPyTorchElasticPolicy) {
    workload->elastic = SumMinCounts(workload->pod_sets) < workload->TotalCount()
                            ? model::ElasticSource::kPodGroupMinMember
                            : model::ElasticSource::kNone;
  }

  if (workload->volcano_queue.empty() && workload->local_queue.empty()) {
    workload->volcano_queue = pg->queue;
  }
  if (!workload->network_topology && pg->network_topology) {
    workload->network_topology = pg->network_topology;
  }
  return pg->priority_class_name;
}

}  // namespace muster::workloads::internal
