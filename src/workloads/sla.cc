#include "workloads/sla.h"

#include "core/duration.h"
#include "workloads/build_internal.h"

namespace muster::workloads {

std::optional<double> ParseSlaWaitingTime(const model::StringMap& annotations, std::string* why) {
  auto it = annotations.find(std::string(kSlaWaitingTimeAnnotation));
  if (it == annotations.end()) return std::nullopt;
  auto seconds = ParseDurationSeconds(it->second);
  if (!seconds.ok()) {
    *why = std::string(kSlaWaitingTimeAnnotation) + ": " + seconds.status().message();
    return std::nullopt;
  }
  if (*seconds <= 0) {
    *why = std::string(kSlaWaitingTimeAnnotation) + ": \"" + it->second + "\" must be positive";
    return std::nullopt;
  }
  return *seconds;
}

namespace internal {

void ApplySla(const model::ManifestSet& manifests, model::Workload* workload) {
  // Volcano reads it from the PodGroup, which its job controller copies the job's
  // annotations into.
  model::StringMap annotations = workload->meta.annotations;
  if (const model::PodGroup* pg = FindPodGroup(manifests, *workload)) {
    for (const auto& [k, v] : pg->meta.annotations) annotations[k] = v;
  }
  std::string why;
  workload->sla_waiting_seconds = ParseSlaWaitingTime(annotations, &why);
}

}  // namespace internal
}  // namespace muster::workloads
