// Volcano's task-topology plugin (pkg/scheduler/plugins/task-topology) for one gang
// plan. The job's pods whose task takes part in an affinity or anti-affinity group
// are put into buckets (a pod joins the bucket it is most attracted to, a new one
// when every bucket repels it); pods are placed biggest bucket first, and a node
// scores higher for a pod the more of its bucket's pods are already there or would
// still fit there, lower for every pod there its task is anti-affine to. Soft: the
// score is added to the scoring policy's, as Volcano adds plugin scores.
//
// Deterministic where Volcano is not: ties in the bucket order go to the task name
// and pod index, and a bucket that does not fit a node gives up its pods last in
// placement order first (Volcano takes them in Go map order).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/resource_list.h"
#include "model/workload.h"

namespace muster::placement {

class TaskTopologyPlan {
 public:
  struct Pod {
    int32_t pod_set = 0;
    int32_t bucket = -1;  // -1: its task takes part in no affinity group
  };

  // nullopt when the workload has no task topology, none of its pods take part, or
  // `weight` (task-topology.weight) is 0. `counts` are the pods to place per pod
  // set; `requests` the per-pod request of each pod set as scorers see it.
  static std::optional<TaskTopologyPlan> Make(const model::Workload& workload,
                                              const std::vector<int32_t>& counts,
                                              const std::vector<ResourceList>& requests,
                                              int32_t weight);

  // Every pod to place, in the order the plugin's TaskOrderFn places them.
  const std::vector<Pod>& pods() const { return pods_; }
  // What the plugin adds to the score of `node` for pod `k` of pods(), where
  // `free` is what the node has left: on the scorers' 0..1000 scale, times the
  // weight, divided by the largest bucket (Volcano's MaxNodeScore normalisation).
  int64_t Bonus(size_t k, int32_t node, const ResourceList& free) const;
  // Pod `k` was placed on `node`.
  void Bound(size_t k, int32_t node);

 private:
  struct Bucket {
    std::set<size_t> pending;            // pods() positions not placed yet
    std::map<int32_t, int32_t> tasks;    // pod set -> pods in the bucket
    std::map<int32_t, int32_t> on_node;  // node -> pods of the bucket placed there
    ResourceList request;                // of the pending pods
    int64_t req_score = 0;               // cpu milli + memory MiB + other units
  };

  // +count for every pod of `tasks` the task is affine to, -count for every one it
  // is anti-affine to (only the latter when `only_anti`).
  int32_t Affinity(int32_t task, const std::map<int32_t, int32_t>& tasks, bool only_anti) const;
  // -1 / 0 / 1: the task order annotation first, then the strongest topology kind.
  int32_t Order(int32_t a, int32_t b) const;

  int32_t weight_ = 1;
  int32_t bucket_max_size_ = 0;
  std::vector<std::string> names_;                // by pod set
  std::vector<int32_t> priority_;                 // 0 = no topology
  std::vector<int32_t> exist_order_;              // from the task-order annotation
  std::vector<std::set<int32_t>> affine_, anti_;  // inter-task, by pod set
  std::vector<bool> self_affine_, self_anti_;
  std::vector<ResourceList> requests_;  // per pod set
  std::vector<Pod> pods_;
  std::vector<Bucket> buckets_;
  std::map<int32_t, std::map<int32_t, int32_t>> node_tasks_;  // node -> pod set -> pods
};

}  // namespace muster::placement
