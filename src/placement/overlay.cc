#include "placement/overlay.h"

#include <algorithm>

namespace muster::placement {

NodeUsage& Overlay::Mutable(NodeIndex i) {
  auto [it, inserted] = slot_.emplace(i, copies_.size());
  if (inserted) {
    copies_.push_back(base_->Usage(i));
    touched_.push_back(i);
  }
  return copies_[it->second];
}

void Overlay::Evict(const std::string& workload_key) {
  const std::vector<BoundPod>* pods = base_->Bound(workload_key);
  if (pods == nullptr) return;
  for (auto p = pods->rbegin(); p != pods->rend(); ++p) {
    Refund(Mutable(p->node), p->shape, p->alloc, p->charges);
  }
}

void Overlay::EvictAbove(const std::string& workload_key, const std::vector<int32_t>& keep) {
  const std::vector<BoundPod>* pods = base_->Bound(workload_key);
  if (pods == nullptr) return;
  for (auto p = pods->rbegin(); p != pods->rend(); ++p) {
    if (p->pod_set < 0 || static_cast<size_t>(p->pod_set) >= keep.size()) continue;
    if (p->index < keep[p->pod_set]) continue;
    Refund(Mutable(p->node), p->shape, p->alloc, p->charges);
  }
}

int64_t Overlay::DomainFreeGpus(int32_t domain) const {
  int64_t free = base_->DomainFreeGpus(domain);
  for (NodeIndex i : touched_) {
    const auto& ds = base_->Info(i).domains;
    if (std::find(ds.begin(), ds.end(), domain) == ds.end()) continue;
    free += Usage(i).FreeWholeGpus() - base_->Usage(i).FreeWholeGpus();
  }
  return free;
}

}  // namespace muster::placement
