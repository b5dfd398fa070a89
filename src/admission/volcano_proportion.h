// Volcano's proportion plugin (pkg/scheduler/plugins/proportion): each queue's
// deserved share of the cluster by water-filling over queue weights, capped by the
// queue's demand (its pending and running workloads) and its capability, raised to
// its guarantee. A workload is allocatable only while queue allocated + its request
// stays within deserved in every dimension it requests; capability is a hard limit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"
#include "model/volcano.h"

namespace muster::admission {

class VolcanoProportion {
 public:
  static constexpr int64_t kScale = 1000;
  // Deserved amount of resource `id` for queue `q`, in whole fixed-point units.
  int64_t Deserved(int32_t q, ResourceId id) const { return queues_[q].deserved.Get(id) / kScale; }
  struct Queue {
    std::string name;
    int32_t weight = 1;
    std::map<ResourceId, int64_t> capability;     // absent dimension = unlimited
    std::map<ResourceId, int64_t> deserved_spec;  // spec.deserved: fixed share
    ResourceList guarantee;
    bool reclaimable = true;
    bool open = true;
    int32_t parent = -1;
    ResourceList allocated;  // admitted workloads (queue itself only)
    ResourceList request;    // pending + admitted workloads
    ResourceList deserved;   // computed by ComputeDeserved(), in units of 1/kScale
  };

  int32_t AddQueue(const model::VolcanoQueue& q);
  void SetParents();  // resolves Queue::parent from the manifests' names
  std::optional<int32_t> Find(const std::string& name) const;
  void SetTotal(const ResourceList& total) { total_ = total; }
  const ResourceList& total() const { return total_; }

  Queue& queue(int32_t i) { return queues_[i]; }
  const Queue& queue(int32_t i) const { return queues_[i]; }
  int32_t size() const { return static_cast<int32_t>(queues_.size()); }

  // Water-filling per resource dimension over queues sorted by name. Volcano fills
  // the whole vector at once and stops a queue when every dimension is met; filling
  // each dimension alone reaches the same fixed point without float rounding.
  void ComputeDeserved();

  // "" when `request` may be allocated now; else a one-line reason naming the
  // resource and the numbers.
  std::string NotAllocatable(int32_t q, const ResourceList& request) const;
  // allocated > deserved in some dimension.
  bool Overused(int32_t q) const;
  // Overused with `allocated` in place of the queue's own allocation.
  bool OverusedWith(int32_t q, const ResourceList& allocated) const;

 private:
  std::vector<Queue> queues_;
  std::vector<std::string> parent_names_;
  ResourceList total_;
};

}  // namespace muster::admission
