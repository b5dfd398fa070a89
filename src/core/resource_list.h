// ResourceList: fixed-point amounts per resource, a small dense vector indexed by
// ResourceId. cpu is in milli-units, memory and ephemeral-storage in bytes, every
// other resource (pods, GPUs, NICs, MIG profiles) in whole units. No floating point.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/quantity.h"
#include "core/resource_name.h"

namespace muster {

class ResourceList {
 public:
  ResourceList() = default;

  // Fixed-point amount of `q` for resource `id` (milli for cpu, rounded up as
  // Kubernetes rounds; whole units otherwise).
  static int64_t Amount(ResourceId id, const Quantity& q);
  // Builds a list from named quantities ({"cpu": 500m, "nvidia.com/gpu": 1}).
  static ResourceList FromQuantities(const std::map<std::string, Quantity>& named);

  int64_t Get(ResourceId id) const { return id < v_.size() ? v_[id] : 0; }
  void Set(ResourceId id, int64_t amount);
  void Add(ResourceId id, int64_t amount) { Set(id, Get(id) + amount); }

  ResourceList& operator+=(const ResourceList& o);
  ResourceList& operator-=(const ResourceList& o);
  friend ResourceList operator+(ResourceList a, const ResourceList& b) { return a += b; }
  friend ResourceList operator-(ResourceList a, const ResourceList& b) { return a -= b; }
  ResourceList Scaled(int64_t factor) const;
  // Element-wise max (used for init containers vs. the sum of containers).
  static ResourceList Max(const ResourceList& a, const ResourceList& b);

  // True when every amount in *this is <= the same amount in `o` (absent = 0).
  bool LessEqual(const ResourceList& o) const;
  bool IsZero() const;
  bool HasNegative() const;
  bool operator==(const ResourceList& o) const;

  // Visits non-zero entries in id order (not name order: do not print from this).
  void ForEachNonZero(const std::function<void(ResourceId, int64_t)>& fn) const;
  // Resource names with non-zero amounts, sorted by name: the order for output.
  std::vector<ResourceId> SortedIds() const;
  // The same into `ids` (its storage reused: asked for every head of a cycle).
  void SortedIdsInto(std::vector<ResourceId>& ids) const;
  // Formats one amount as a Kubernetes quantity string ("500m", "16Gi", "8").
  static std::string FormatAmount(ResourceId id, int64_t amount);
  // "cpu=4,memory=16Gi,nvidia.com/gpu=1" sorted by name.
  std::string ToString() const;

  size_t size() const { return v_.size(); }

 private:
  std::vector<int64_t> v_;
};

}  // namespace muster
