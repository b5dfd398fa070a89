#include "placement/verdict_cache.h"

namespace muster::placement {
namespace {

constexpr size_t kInitialSlots = 64;

}  // namespace

size_t VerdictCache::Slot(int32_t node) const {
  const size_t mask = keys_.size() - 1;
  const uint32_t hash = static_cast<uint32_t>(node) * 2654435761u;  // Knuth's multiplicative hash
  size_t s = hash & mask;
  while (keys_[s] != kEmpty && keys_[s] != node) s = (s + 1) & mask;
  return s;
}

int8_t VerdictCache::Get(int32_t node) const {
  if (node < 0 || node >= nodes_) return -1;
  if (!dense_.empty()) return dense_[node];
  if (keys_.empty()) return -1;
  size_t s = Slot(node);
  return keys_[s] == node ? values_[s] : int8_t{-1};
}

void VerdictCache::Set(int32_t node, int8_t verdict) {
  if (node < 0 || node >= nodes_) return;
  if (!dense_.empty()) {
    dense_[node] = verdict;
    return;
  }
  if (keys_.empty() || 2 * (count_ + 1) > static_cast<int32_t>(keys_.size())) Grow();
  if (!dense_.empty()) {
    dense_[node] = verdict;
    return;
  }
  size_t s = Slot(node);
  if (keys_[s] == kEmpty) {
    keys_[s] = node;
    ++count_;
  }
  values_[s] = verdict;
}

void VerdictCache::Grow() {
  const size_t slots = keys_.empty() ? kInitialSlots : 2 * keys_.size();
  if (slots >= static_cast<size_t>(nodes_) / 4) {
    // A table this large costs as much as the dense array: switch for good.
    dense_.assign(static_cast<size_t>(nodes_), -1);
    for (size_t s = 0; s < keys_.size(); ++s) {
      if (keys_[s] != kEmpty) dense_[keys_[s]] = values_[s];
    }
    keys_.clear();
    values_.clear();
    return;
  }
  std::vector<int32_t> keys(slots, kEmpty);
  std::vector<int8_t> values(slots, -1);
  keys.swap(keys_);
  values.swap(values_);
  count_ = 0;
  for (size_t s = 0; s < keys.size(); ++s) {
    if (keys[s] == kEmpty) continue;
    size_t t = Slot(keys[s]);
    keys_[t] = keys[s];
    values_[t] = values[s];
    ++count_;
  }
}

}  // namespace muster::placement
