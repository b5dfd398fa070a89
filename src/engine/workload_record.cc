#include "engine/workload_record.h"

namespace muster::engine {

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kPending:
      return "Pending";
    case Phase::kAdmitted:
      return "Admitted";
    case Phase::kRunning:
      return "Running";
    case Phase::kSucceeded:
      return "Succeeded";
    case Phase::kFailed:
      return "Failed";
  }
  return "Unknown";
}

int64_t PlacedGpus(const WorkloadRecord& record) {
  int64_t gpus = 0;
  const auto& pod_sets = record.workload.pod_sets;
  for (const auto& pod : record.plan.pods) {
    if (pod.pod_set < 0 || static_cast<size_t>(pod.pod_set) >= pod_sets.size()) continue;
    gpus += pod_sets[pod.pod_set].requests.Get(kNvidiaGpu);
  }
  return gpus;
}

}  // namespace muster::engine
