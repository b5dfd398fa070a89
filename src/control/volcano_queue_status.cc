#include "control/volcano_queue_status.h"

#include "core/resource_name.h"

namespace muster::control {

using nlohmann::json;

std::map<std::string, VolcanoQueueTally> TallyVolcanoQueues(const engine::Engine& engine) {
  std::map<std::string, VolcanoQueueTally> out;
  for (const auto& r : engine.workloads()) {
    if (!r.submitted) continue;
    admission::QueueInfo q = engine.QueueOf(r.key());
    if (!q.volcano) continue;
    VolcanoQueueTally& t = out[q.cluster_queue];
    switch (r.phase) {
      case engine::Phase::kPending:
        ++t.pending;
        break;
      case engine::Phase::kAdmitted:
        ++t.inqueue;
        break;
      case engine::Phase::kRunning:
        ++t.running;
        break;
      case engine::Phase::kSucceeded:
      case engine::Phase::kFailed:
        ++t.completed;
        break;
    }
    if (!r.Active()) continue;
    for (size_t i = 0; i < r.assignment.pod_sets.size() && i < r.workload.pod_sets.size(); ++i) {
      t.allocated += r.workload.pod_sets[i].requests.Scaled(r.assignment.pod_sets[i].count);
    }
  }
  return out;
}

json VolcanoQueueStatus(const model::VolcanoQueue& queue, const VolcanoQueueTally& tally) {
  json allocated = json::object();
  tally.allocated.ForEachNonZero([&](ResourceId id, int64_t amount) {
    allocated[ResourceNames::Name(id)] = ResourceList::FormatAmount(id, amount);
  });
  return {{"state", queue.open ? "Open" : "Closed"},
          {"pending", tally.pending},
          {"inqueue", tally.inqueue},
          {"running", tally.running},
          {"completed", tally.completed},
          {"unknown", 0},
          {"allocated", allocated}};
}

}  // namespace muster::control
