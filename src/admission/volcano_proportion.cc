#include "admission/volcano_proportion.h"

#include <algorithm>
#include <numeric>

namespace muster::admission {
namespace {

std::map<ResourceId, int64_t> ToMap(const model::QuantityMap& m) {
  std::map<ResourceId, int64_t> out;
  for (const auto& [name, q] : m) {
    ResourceId id = ResourceNames::Intern(name);
    out[id] = ResourceList::Amount(id, q);
  }
  return out;
}

}  // namespace

int32_t VolcanoProportion::AddQueue(const model::VolcanoQueue& vq) {
  Queue q;
  q.name = vq.meta.name;
  q.weight = std::max<int32_t>(vq.weight, 0);
  q.capability = ToMap(vq.capability);
  q.deserved_spec = ToMap(vq.deserved);
  q.guarantee = ResourceList::FromQuantities(vq.guarantee);
  q.reclaimable = vq.reclaimable;
  q.open = vq.open;
  queues_.push_back(std::move(q));
  parent_names_.push_back(vq.parent);
  return static_cast<int32_t>(queues_.size() - 1);
}

void VolcanoProportion::SetParents() {
  for (size_t i = 0; i < queues_.size(); ++i) {
    auto p = Find(parent_names_[i]);
    if (!p || *p == static_cast<int32_t>(i)) continue;
    // Ignore an edge that would close a cycle.
    bool cycle = false;
    for (int32_t a = *p; a >= 0; a = queues_[a].parent) cycle |= a == static_cast<int32_t>(i);
    if (!cycle) queues_[i].parent = *p;
  }
}

std::optional<int32_t> VolcanoProportion::Find(const std::string& name) const {
  for (size_t i = 0; i < queues_.size(); ++i) {
    if (queues_[i].name == name) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

void VolcanoProportion::ComputeDeserved() {
  size_t dims = std::max(total_.size(), ResourceNames::Count());
  std::vector<int32_t> order(queues_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return queues_[a].name < queues_[b].name; });
  for (auto& q : queues_) q.deserved = ResourceList();
  for (size_t d = 0; d < dims; ++d) {
    auto id = static_cast<ResourceId>(d);
    // Shares are kept in thousandths of a unit, as Volcano keeps them in floats,
    // so that e.g. 8 GPUs over weights 1:1:3 still give 1.6 + 1.6 + 4.8.
    int64_t remaining = total_.Get(id) * kScale;
    std::vector<int32_t> unmet;
    std::vector<int64_t> cap(queues_.size(), 0);
    for (int32_t i : order) {
      Queue& q = queues_[i];
      int64_t c = q.request.Get(id);
      if (auto it = q.capability.find(id); it != q.capability.end()) c = std::min(c, it->second);
      cap[i] = c * kScale;
      if (auto it = q.deserved_spec.find(id); it != q.deserved_spec.end()) {
        int64_t fixed = it->second;
        if (auto cit = q.capability.find(id); cit != q.capability.end())
          fixed = std::min(fixed, cit->second);
        fixed *= kScale;
        q.deserved.Set(id, fixed);
        remaining -= fixed;
        continue;
      }
      // Like Volcano, a queue without demand takes no part in the split.
      if (q.weight > 0 && cap[i] > 0) unmet.push_back(i);
    }
    while (remaining > 0 && !unmet.empty()) {
      int64_t total_weight = 0;
      for (int32_t i : unmet) total_weight += queues_[i].weight;
      int64_t gained = 0;
      std::vector<int32_t> still;
      for (int32_t i : unmet) {
        Queue& q = queues_[i];
        int64_t before = q.deserved.Get(id);
        int64_t share =
            static_cast<int64_t>(static_cast<__int128>(remaining) * q.weight / total_weight);
        int64_t now = std::max(std::min(before + share, cap[i]), q.guarantee.Get(id) * kScale);
        q.deserved.Set(id, now);
        gained += now - before;
        if (now < cap[i]) still.push_back(i);
      }
      remaining -= gained;
      unmet.swap(still);
      if (gained == 0) break;
    }
    for (int32_t i : order) {
      Queue& q = queues_[i];
      q.deserved.Set(id, std::max(q.deserved.Get(id), q.guarantee.Get(id) * kScale));
    }
  }
}

std::string VolcanoProportion::NotAllocatable(int32_t qi, const ResourceList& request) const {
  std::string out;
  for (ResourceId id : request.SortedIds()) {
    int64_t req = request.Get(id);
    if (req <= 0) continue;
    // Capability is hard for the queue and for every ancestor.
    for (int32_t a = qi; a >= 0; a = queues_[a].parent) {
      const Queue& q = queues_[a];
      auto it = q.capability.find(id);
      if (it == q.capability.end()) continue;
      int64_t used = q.allocated.Get(id);
      if (a != qi) {
        used = 0;
        for (size_t c = 0; c < queues_.size(); ++c) {
          for (int32_t x = static_cast<int32_t>(c); x >= 0; x = queues_[x].parent) {
            if (x == a) {
              used += queues_[c].allocated.Get(id);
              break;
            }
          }
        }
      }
      if (used + req > it->second) {
        return "insufficient " + ResourceNames::Name(id) + " in Volcano queue " + q.name +
               ": capability " + ResourceList::FormatAmount(id, it->second) + ", allocated " +
               ResourceList::FormatAmount(id, used) + ", request " +
               ResourceList::FormatAmount(id, req);
      }
    }
    const Queue& q = queues_[qi];
    int64_t alloc = q.allocated.Get(id), des = q.deserved.Get(id) / kScale;
    if ((alloc + req) * kScale > q.deserved.Get(id)) {
      return "insufficient " + ResourceNames::Name(id) + " in Volcano queue " + q.name +
             ": deserved " + ResourceList::FormatAmount(id, des) + ", allocated " +
             ResourceList::FormatAmount(id, alloc) + ", request " +
             ResourceList::FormatAmount(id, req);
    }
  }
  return out;
}

bool VolcanoProportion::Overused(int32_t q) const { return OverusedWith(q, queues_[q].allocated); }

bool VolcanoProportion::OverusedWith(int32_t q, const ResourceList& allocated) const {
  bool over = false;
  allocated.ForEachNonZero([&](ResourceId id, int64_t v) {
    if (v * kScale > queues_[q].deserved.Get(id)) over = true;
  });
  return over;
}

}  // namespace muster::admission
