// JobSet (jobset.x-k8s.io/v1alpha2) -> Workload: one pod set per replicated job, named
// by it, holding the pods of all its child Jobs (replicas x pods per Job), as Kueue's
// jobset integration counts them.
#include <algorithm>
#include <set>
#include <string>

#include "workloads/build_internal.h"

namespace muster::workloads::internal {

Result<model::Workload> BuildJobSet(const model::JobSet& job, PriorityRefs* refs) {
  if (job.replicated_jobs.empty()) {
    return FieldError(job.meta, "spec.replicatedJobs", "at least one replicated job is required");
  }
  model::Workload w;
  std::set<std::string> seen;
  for (size_t i = 0; i < job.replicated_jobs.size(); ++i) {
    const model::ReplicatedJob& rj = job.replicated_jobs[i];
    std::string field = "spec.replicatedJobs[" + std::to_string(i) + "]";
    if (rj.name.empty()) return FieldError(job.meta, field + ".name", "must not be empty");
    if (!seen.insert(rj.name).second) {
      return FieldError(job.meta, field + ".name", "\"" + rj.name + "\" is used twice");
    }
    if (rj.replicas < 0) return FieldError(job.meta, field + ".replicas", "must be 0 or more");

    int32_t per_job = rj.tmpl.parallelism;
    if (rj.tmpl.completions) per_job = std::min(per_job, *rj.tmpl.completions);
    std::string tmpl_field = field + ".template.spec.template";
    auto ps = MakePodSet(job.meta, tmpl_field, rj.name, rj.replicas * per_job, rj.tmpl.tmpl);
    if (!ps.ok()) return ps.status();
    ps->pods_per_job = per_job;
    ps->indexed = rj.tmpl.completion_mode == model::CompletionMode::kIndexed;
    NoteTemplateClass(rj.tmpl.tmpl, tmpl_field, refs);
    if (w.scheduler_name.empty()) w.scheduler_name = rj.tmpl.tmpl.spec.scheduler_name;
    // startupPolicy InOrder: each replicated job once the one before is Ready (all
    // its Jobs' pods ready); dependsOn: once the named one is Ready or Complete.
    if (job.startup_policy_order == "InOrder" && i > 0) {
      ps->start_after.push_back({job.replicated_jobs[i - 1].name, false});
    }
    for (const auto& d : rj.depends_on) ps->start_after.push_back({d.name, d.status == "Complete"});
    w.pod_sets.push_back(std::move(*ps));
  }
  // successPolicy and failurePolicy.rules, applied by the executor.
  w.gang_policy.child_jobs = true;
  w.gang_policy.success_any = job.success_policy.op == "Any";
  w.gang_policy.success_sets = job.success_policy.target_replicated_jobs;
  w.gang_policy.failure_rules = job.failure_policy.rules;
  w.gang_policy.in_order = job.startup_policy_order == "InOrder";
  // JobSet has no partial start: every pod of every child Job.
  w.min_available = SumMinCounts(w.pod_sets);
  if (IsElasticJob(job.meta)) w.elastic = model::ElasticSource::kKueueElasticJob;
  w.lifecycle.max_restarts = job.failure_policy.max_restarts;
  w.lifecycle.restart_on_failure = job.failure_policy.max_restarts > 0;
  return w;
}

}  // namespace muster::workloads::internal
