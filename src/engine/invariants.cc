// Engine::CheckInvariants: the loud checks run after every cycle in tests.
#include <fmt/format.h>

#include "engine/engine.h"

namespace muster::engine {

std::vector<std::string> Engine::CheckInvariants() const {
  std::vector<std::string> broken = errors_;
  // No node or device over-committed.
  for (auto& line : parts_.cluster->CheckInvariants()) broken.push_back("placement: " + line);
  // No quota over-committed.
  for (auto& line : parts_.admitter->CheckInvariants()) broken.push_back("admission: " + line);

  for (const WorkloadRecord& r : records_) {
    if (r.phase == Phase::kRunning) {
      // No gang running below its minimum.
      if (!r.bound) broken.push_back(fmt::format("{} is Running but not bound", r.key()));
      std::vector<int32_t> per_set(r.workload.pod_sets.size(), 0);
      for (const auto& pod : r.plan.pods) {
        if (pod.pod_set < 0 || static_cast<size_t>(pod.pod_set) >= per_set.size()) {
          broken.push_back(fmt::format("{} has a pod in unknown pod set {}", r.key(), pod.pod_set));
          continue;
        }
        per_set[pod.pod_set]++;
      }
      int32_t total = 0;
      for (size_t i = 0; i < per_set.size(); ++i) {
        total += per_set[i];
        const auto& ps = r.workload.pod_sets[i];
        if (per_set[i] > ps.count) {
          broken.push_back(fmt::format("{} runs {} pods of {}, more than its {}", r.key(),
                                       per_set[i], ps.name, ps.count));
        }
      }
      int32_t min_total = r.workload.min_available;
      if (total < min_total) {
        broken.push_back(
            fmt::format("{} runs {} pods, below its gang minimum {}", r.key(), total, min_total));
      }
    } else if (r.bound) {
      broken.push_back(
          fmt::format("{} is {} but still bound to nodes", r.key(), PhaseName(r.phase)));
    }
    // Every pending workload has a reason.
    if (r.phase == Phase::kPending && r.submitted) {
      bool has_reason = parts_.admitter->PendingReason(r.key()).has_value() || r.pending_note.noted;
      if (!has_reason) broken.push_back(fmt::format("{} is Pending without a reason", r.key()));
    }
  }
  return broken;
}

}  // namespace muster::engine
