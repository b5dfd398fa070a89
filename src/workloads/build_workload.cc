// BuildWorkload / BuildWorkloads: dispatch to the per-kind builder, then the steps
// every kind shares (queues, PodGroup, priority, simulation annotations).
#include <variant>

#include "workloads/build_internal.h"
#include "workloads/keys.h"
#include "workloads/limit_ranges.h"
#include "workloads/workloads.h"

namespace muster::workloads {

Result<model::Workload> BuildWorkload(const model::JobObject& job,
                                      const model::ManifestSet& manifests) {
  internal::PriorityRefs refs;
  Result<model::Workload> built = std::visit(
      [&refs, &manifests](const auto& j) -> Result<model::Workload> {
        using T = std::decay_t<decltype(j)>;
        if constexpr (std::is_same_v<T, model::BatchJob>) {
          return internal::BuildBatchJob(j, &refs);
        } else if constexpr (std::is_same_v<T, model::KubeflowJob>) {
          return internal::BuildKubeflowJob(j, &refs);
        } else if constexpr (std::is_same_v<T, model::JobSet>) {
          return internal::BuildJobSet(j, &refs);
        } else if constexpr (std::is_same_v<T, model::TrainJob>) {
          return internal::BuildTrainJob(j, manifests, &refs);
        } else {
          return internal::BuildVolcanoJob(j, &refs);
        }
      },
      job);
  if (!built.ok()) return built.status();
  model::Workload& w = *built;
  w.meta = model::MetaOf(job);
  w.key = w.meta.Key();  // "namespace/name": the decoder fills the namespace

  // Before anything reads the pod sets' requests: the pods will carry the defaults.
  ApplyLimitRanges(manifests.limit_ranges, &w);
  internal::ResolveQueues(&w);
  std::string group_class = internal::ApplyPodGroup(manifests, &w);
  internal::ApplyTaskTopology(manifests, &w);
  internal::ApplySla(manifests, &w);
  if (refs.spec_class.empty() && !group_class.empty()) {
    refs.spec_class = group_class;
    refs.spec_field = "PodGroup spec.priorityClassName";
  }
  if (auto it = w.meta.labels.find(std::string(kPriorityClassLabel)); it != w.meta.labels.end()) {
    refs.workload_priority_class = it->second;
  }
  if (Status s = internal::ResolvePriority(manifests, refs, &w); !s.ok()) return s;
  if (Status s = internal::ParseSimSpec(w.meta, &w.sim); !s.ok()) return s;
  return built;
}

Result<std::vector<model::Workload>> BuildWorkloads(const model::ManifestSet& manifests) {
  std::vector<model::Workload> out;
  out.reserve(manifests.jobs.size());
  for (const model::JobObject& job : manifests.jobs) {
    Result<model::Workload> w = BuildWorkload(job, manifests);
    if (!w.ok()) return w.status();
    out.push_back(std::move(*w));
  }
  return out;
}

}  // namespace muster::workloads
