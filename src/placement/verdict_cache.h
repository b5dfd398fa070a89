// VerdictCache: the filter verdict of each node a pod set's search has visited
// (-1 = not yet known). A plan for a small gang visits a few dozen nodes, so the
// cache starts as a small open-addressing table and becomes a dense per-node array
// only once it holds a good share of the cluster: a dense array built per plan
// cost O(nodes) for every one-pod workload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace muster::placement {

class VerdictCache {
 public:
  VerdictCache() = default;
  explicit VerdictCache(int32_t nodes) : nodes_(nodes) {}

  int32_t size() const { return nodes_; }
  // -1 when unknown.
  int8_t Get(int32_t node) const;
  void Set(int32_t node, int8_t verdict);

 private:
  static constexpr int32_t kEmpty = -1;
  // The table's slot for `node`: where it is, or the empty slot it would take.
  size_t Slot(int32_t node) const;
  void Grow();

  int32_t nodes_ = 0;
  std::vector<int8_t> dense_;   // per node, once the table grew past its share
  std::vector<int32_t> keys_;   // open addressing (power-of-two size); kEmpty = free
  std::vector<int8_t> values_;  // beside keys_
  int32_t count_ = 0;           // keys in the table
};

}  // namespace muster::placement
