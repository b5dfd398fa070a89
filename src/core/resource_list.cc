#include "core/resource_list.h"

#include <algorithm>

namespace muster {

int64_t ResourceList::Amount(ResourceId id, const Quantity& q) {
  return ResourceNames::IsMilli(id) ? q.MilliValue() : q.Value();
}

ResourceList ResourceList::FromQuantities(const std::map<std::string, Quantity>& named) {
  ResourceList out;
  for (const auto& [name, q] : named) {
    ResourceId id = ResourceNames::Intern(name);
    out.Set(id, Amount(id, q));
  }
  return out;
}

void ResourceList::Set(ResourceId id, int64_t amount) {
  if (id >= v_.size()) {
    if (amount == 0) return;
    v_.resize(id + 1, 0);
  }
  v_[id] = amount;
}

ResourceList& ResourceList::operator+=(const ResourceList& o) {
  if (o.v_.size() > v_.size()) v_.resize(o.v_.size(), 0);
  for (size_t i = 0; i < o.v_.size(); ++i) v_[i] += o.v_[i];
  return *this;
}

ResourceList& ResourceList::operator-=(const ResourceList& o) {
  if (o.v_.size() > v_.size()) v_.resize(o.v_.size(), 0);
  for (size_t i = 0; i < o.v_.size(); ++i) v_[i] -= o.v_[i];
  return *this;
}

ResourceList ResourceList::Scaled(int64_t factor) const {
  ResourceList out = *this;
  for (auto& x : out.v_) x *= factor;
  return out;
}

ResourceList ResourceList::Max(const ResourceList& a, const ResourceList& b) {
  ResourceList out = a;
  if (b.v_.size() > out.v_.size()) out.v_.resize(b.v_.size(), 0);
  for (size_t i = 0; i < b.v_.size(); ++i) out.v_[i] = std::max(out.v_[i], b.v_[i]);
  return out;
}

bool ResourceList::LessEqual(const ResourceList& o) const {
  // Walk the longer of the two: an amount absent here is 0, which is not <= a
  // negative amount in `o` (a node over-committed after a shrink).
  const size_t n = std::max(v_.size(), o.v_.size());
  for (size_t i = 0; i < n; ++i) {
    auto id = static_cast<ResourceId>(i);
    if (Get(id) > o.Get(id)) return false;
  }
  return true;
}

bool ResourceList::IsZero() const {
  return std::all_of(v_.begin(), v_.end(), [](int64_t x) { return x == 0; });
}

bool ResourceList::HasNegative() const {
  return std::any_of(v_.begin(), v_.end(), [](int64_t x) { return x < 0; });
}

bool ResourceList::operator==(const ResourceList& o) const {
  size_t n = std::max(v_.size(), o.v_.size());
  for (size_t i = 0; i < n; ++i) {
    auto id = static_cast<ResourceId>(i);
    if (Get(id) != o.Get(id)) return false;
  }
  return true;
}

void ResourceList::ForEachNonZero(const std::function<void(ResourceId, int64_t)>& fn) const {
  for (size_t i = 0; i < v_.size(); ++i) {
    if (v_[i] != 0) fn(static_cast<ResourceId>(i), v_[i]);
  }
}

std::vector<ResourceId> ResourceList::SortedIds() const {
  std::vector<ResourceId> ids;
  ids.reserve(
      static_cast<size_t>(std::count_if(v_.begin(), v_.end(), [](int64_t x) { return x != 0; })));
  SortedIdsInto(ids);
  return ids;
}

void ResourceList::SortedIdsInto(std::vector<ResourceId>& ids) const {
  ids.clear();
  for (size_t i = 0; i < v_.size(); ++i) {
    if (v_[i] != 0) ids.push_back(static_cast<ResourceId>(i));
  }
  std::sort(ids.begin(), ids.end(), [](ResourceId a, ResourceId b) {
    return ResourceNames::Name(a) < ResourceNames::Name(b);
  });
}

std::string ResourceList::FormatAmount(ResourceId id, int64_t amount) {
  if (ResourceNames::IsMilli(id)) return Quantity::FromMilli(amount).ToString();
  const std::string& n = ResourceNames::Name(id);
  bool binary = n == "memory" || n == "ephemeral-storage" || n.ends_with("memory");
  return Quantity::FromInt(amount,
                           binary ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI)
      .ToString();
}

std::string ResourceList::ToString() const {
  std::string out;
  for (ResourceId id : SortedIds()) {
    if (!out.empty()) out += ",";
    out += ResourceNames::Name(id) + "=" + FormatAmount(id, Get(id));
  }
  return out;
}

}  // namespace muster
