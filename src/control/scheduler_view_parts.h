// Internal to the scheduler view's builder (scheduler_view*.cc): lookups over one
// admission snapshot, and the queue and node halves of the view.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admission/admission_snapshot.h"
#include "control/scheduler_view.h"

namespace muster::control {

// Each non-zero amount of `list` by resource name.
Amounts ToAmounts(const ResourceList& list);

class PartsIndex {
 public:
  PartsIndex(const admission::AdmissionSnapshot& snapshot, const engine::Engine& engine);

  const admission::ClusterQueueSnapshot* ClusterQueue(const std::string& name) const;
  const admission::VolcanoQueueSnapshot* VolcanoQueue(const std::string& name) const;
  const admission::QuotaNodeSnapshot* QuotaNode(const std::string& name, bool cluster_queue) const;
  // 0-based (position in the ClusterQueue, position in the LocalQueue) of a pending
  // workload.
  std::optional<std::pair<int32_t, int32_t>> Position(const std::string& key) const;
  // ClusterQueues in the same cohort tree as `cohort` (any depth), sorted by name.
  std::vector<const admission::ClusterQueueSnapshot*> CohortMembers(
      const std::string& cohort) const;
  // The ClusterQueue uses more than its own quota of some flavor and resource.
  bool Borrowing(const std::string& cluster_queue) const;

  const std::map<std::string, std::string>* preempted_for = nullptr;

 private:
  std::string RootOf(const std::string& name, bool cluster_queue) const;

  const admission::AdmissionSnapshot& snapshot_;
  std::map<std::string, size_t> cqs_;
  std::map<std::string, size_t> vqs_;
  std::map<std::pair<bool, std::string>, size_t> nodes_;
  std::map<std::string, std::pair<int32_t, int32_t>> positions_;
};

std::vector<QueueView> BuildQueueViews(const engine::Engine& engine,
                                       const admission::AdmissionSnapshot& snapshot,
                                       const PartsIndex& index);

// `config` (may be null) names the Kueue Topology levels that group nodes.
std::vector<NodeView> BuildNodeViews(const engine::Engine& engine,
                                     const model::ManifestSet* config);

}  // namespace muster::control
