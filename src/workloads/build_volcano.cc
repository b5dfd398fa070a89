// Volcano Job (batch.volcano.sh/v1alpha1) -> Workload: one pod set per task.
#include <set>
#include <string>

#include "workloads/build_internal.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {
namespace {

bool Restarts(const std::vector<model::LifecyclePolicy>& policies) {
  for (const model::LifecyclePolicy& p : policies) {
    if (p.action == "RestartJob" || p.action == "RestartTask" || p.action == "RestartPod") {
      return true;
    }
  }
  return false;
}

// Gang minimums as Volcano's admission webhook and job controller set them: a task's
// minAvailable defaults to its replicas and the job's to the sum of the tasks'. A job
// minAvailable below that sum overrides the tasks' (the scheduler then checks the job's
// alone); above it, the rest is spread over the tasks that gave none of their own.
Status ApplyMinimums(const model::VolcanoJob& job, model::Workload* w) {
  int32_t explicit_sum = 0;
  std::vector<model::PodSet> open_tasks;
  std::vector<size_t> open_index;
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    const model::VolcanoTask& t = job.tasks[i];
    model::PodSet& ps = w->pod_sets[i];
    if (t.min_available) {
      if (*t.min_available < 0 || *t.min_available > t.replicas) {
        return FieldError(job.meta, "spec.tasks[" + std::to_string(i) + "].minAvailable",
                          std::to_string(*t.min_available) + " must be from 0 to replicas (" +
                              std::to_string(t.replicas) + ")");
      }
      ps.min_count = *t.min_available;
      explicit_sum += ps.min_count;
    } else {
      open_tasks.push_back(ps);
      open_index.push_back(i);
    }
  }
  int32_t total = w->TotalCount();
  if (!job.min_available) {
    w->min_available = SumMinCounts(w->pod_sets);
    if (w->min_available < total) w->elastic = model::ElasticSource::kVolcanoMinAvailable;
    return Status::Ok();
  }
  if (*job.min_available < 0 || *job.min_available > total) {
    return FieldError(job.meta, "spec.minAvailable",
                      std::to_string(*job.min_available) +
                          " must be from 0 to the total replicas of all tasks (" +
                          std::to_string(total) + ")");
  }
  if (*job.min_available < explicit_sum) {
    // Below the tasks' own minimums Volcano checks the job's alone (JobInfo's
    // CheckTaskReady skips the per-task check when MinAvailable < the tasks' total):
    // any minAvailable pods make the gang; they are counted from the first task on.
    DistributeMinCount(*job.min_available, &w->pod_sets);
  } else {
    DistributeMinCount(*job.min_available - explicit_sum, &open_tasks);
    for (size_t k = 0; k < open_index.size(); ++k) {
      w->pod_sets[open_index[k]].min_count = open_tasks[k].min_count;
    }
  }
  w->min_available = *job.min_available;
  // Volcano binds the job once minAvailable pods fit and the rest as they fit later.
  if (SumMinCounts(w->pod_sets) < total) w->elastic = model::ElasticSource::kVolcanoMinAvailable;
  return Status::Ok();
}

}  // namespace

Result<model::Workload> BuildVolcanoJob(const model::VolcanoJob& job, PriorityRefs* refs) {
  if (job.tasks.empty()) return FieldError(job.meta, "spec.tasks", "at least one task is required");
  model::Workload w;
  std::set<std::string> seen;
  bool restarts = Restarts(job.policies);
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    const model::VolcanoTask& t = job.tasks[i];
    std::string field = "spec.tasks[" + std::to_string(i) + "]";
    // Volcano's webhook names unnamed tasks "default<index>".
    std::string name = t.name.empty() ? "default" + std::to_string(i) : t.name;
    if (!seen.insert(name).second) {
      return FieldError(job.meta, field + ".name", "\"" + name + "\" is used twice");
    }
    auto ps = MakePodSet(job.meta, field + ".template", name, t.replicas, t.tmpl);
    if (!ps.ok()) return ps.status();
    ps->volcano_policies = t.policies;
    restarts = restarts || Restarts(t.policies);
    NoteTemplateClass(t.tmpl, field + ".template", refs);
    w.pod_sets.push_back(std::move(*ps));
  }
  if (Status s = ApplyMinimums(job, &w); !s.ok()) return s;

  w.volcano_queue = job.queue.empty() ? std::string(kVolcanoDefaultQueue) : job.queue;
  w.scheduler_name = job.scheduler_name;
  w.network_topology = job.network_topology;
  refs->spec_class = job.priority_class_name;
  refs->spec_field = "spec.priorityClassName";
  w.lifecycle.max_restarts = job.max_retry;
  w.lifecycle.restart_on_failure = restarts;
  w.lifecycle.volcano_policies = job.policies;
  w.rank.volcano_plugins = job.plugins;
  return w;
}

}  // namespace muster::workloads::internal
