// batch/v1 Job -> Workload: one pod set "main", as Kueue's job integration names it.
#include <algorithm>
#include <charconv>
#include <string>

#include "workloads/build_internal.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {

Result<model::Workload> BuildBatchJob(const model::BatchJob& job, PriorityRefs* refs) {
  const model::BatchJobSpec& spec = job.spec;
  // Kueue counts the pods that run at once: parallelism, but never more than the
  // completions still to do.
  int32_t count = spec.parallelism;
  if (spec.completions) count = std::min(count, *spec.completions);

  Result<model::PodSet> main = MakePodSet(job.meta, "spec.template", "main", count, spec.tmpl);
  if (!main.ok()) return main.status();
  main->indexed = spec.completion_mode == model::CompletionMode::kIndexed;

  // Partial admission: Kueue may start the job with fewer pods, down to this value.
  if (auto it = job.meta.annotations.find(std::string(kJobMinParallelismAnnotation));
      it != job.meta.annotations.end()) {
    const std::string& text = it->second;
    int32_t min = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), min);
    if (ec != std::errc() || ptr != text.data() + text.size() || min < 1 || min > count) {
      return FieldError(
          job.meta, "metadata.annotations[" + std::string(kJobMinParallelismAnnotation) + "]",
          "\"" + text + "\" must be an integer from 1 to the pod count " + std::to_string(count));
    }
    main->min_count = min;
  }

  model::Workload w;
  NoteTemplateClass(spec.tmpl, "spec.template", refs);
  w.scheduler_name = spec.tmpl.spec.scheduler_name;
  w.pod_sets.push_back(std::move(*main));
  w.min_available = SumMinCounts(w.pod_sets);
  if (IsElasticJob(job.meta)) w.elastic = model::ElasticSource::kKueueElasticJob;
  // The Job controller replaces failed pods (restartPolicy Never) or the kubelet
  // restarts them (OnFailure) until backoffLimit failures: both are retries.
  w.lifecycle.max_restarts = spec.backoff_limit;
  w.lifecycle.restart_on_failure = spec.backoff_limit > 0;
  w.lifecycle.pod_failure_policy = spec.pod_failure_policy;
  return w;
}

}  // namespace muster::workloads::internal
