#include "placement/free_capacity_index.h"

#include <algorithm>
#include <cstddef>

namespace muster::placement {
namespace {

constexpr std::array<ResourceId, 3> kIndexed = {kCpu, kMemory, kPods};

}  // namespace

FreeCapacityIndex::Amounts FreeCapacityIndex::FreeOf(const ResourceList& allocatable,
                                                     const ResourceList& used) {
  Amounts out;
  for (size_t k = 0; k < kIndexed.size(); ++k) {
    out[k] = allocatable.Get(kIndexed[k]) - used.Get(kIndexed[k]);
  }
  return out;
}

FreeCapacityIndex::Amounts FreeCapacityIndex::NeedOf(const ResourceList& requests) {
  Amounts out;
  for (size_t k = 0; k < kIndexed.size(); ++k) {
    int64_t amount = requests.Get(kIndexed[k]);
    out[k] = amount == 0 ? kAny : amount;
  }
  return out;
}

bool FreeCapacityIndex::Covers(const ResourceList& requests) {
  const auto n = static_cast<ResourceId>(requests.size());
  for (ResourceId id = 0; id < n; ++id) {
    if (requests.Get(id) != 0 && id != kCpu && id != kMemory && id != kPods) return false;
  }
  return true;
}

void FreeCapacityIndex::Reset(int32_t nodes, int32_t buckets) {
  leaves_ = 1;
  while (leaves_ < nodes) leaves_ *= 2;
  bucket_of_.assign(static_cast<size_t>(nodes), -1);
  bucket_size_.assign(static_cast<size_t>(buckets), 0);
  tree_.assign(static_cast<size_t>(buckets) * 2 * leaves_, Amounts{kAbsent, kAbsent, kAbsent});
  min_tree_.assign(tree_.size(), Amounts{kAbsentMin, kAbsentMin, kAbsentMin});
}

void FreeCapacityIndex::Put(int32_t bucket, int32_t rank, const Amounts& value) {
  Amounts* t = &tree_[Base(bucket)];
  Amounts* m = &min_tree_[Base(bucket)];
  int32_t i = leaves_ + rank;
  t[i] = value;
  // An absent leaf is the lowest maximum and the highest minimum.
  m[i] = value[0] == kAbsent ? Amounts{kAbsentMin, kAbsentMin, kAbsentMin} : value;
  // Stop once an inner node keeps its maxima and minima: every ancestor above it
  // would too. Most binds change a node that is neither its subtree's maximum nor
  // minimum, so the walk ends near the leaf instead of touching every level of a
  // tree that outgrows the caches with the cluster.
  for (i /= 2; i >= 1; i /= 2) {
    const ptrdiff_t left = static_cast<ptrdiff_t>(i) * 2;
    Amounts hi;
    Amounts lo;
    for (size_t k = 0; k < value.size(); ++k) {
      hi[k] = std::max(t[left][k], t[left + 1][k]);
      lo[k] = std::min(m[left][k], m[left + 1][k]);
    }
    if (hi == t[i] && lo == m[i]) break;
    t[i] = hi;
    m[i] = lo;
  }
}

bool FreeCapacityIndex::Set(int32_t rank, int32_t bucket, const Amounts& free) {
  int32_t& was = bucket_of_[rank];
  if (was == bucket && tree_[Base(bucket) + static_cast<size_t>(leaves_ + rank)] == free) {
    return false;
  }
  bool rose = was < 0 || bucket > was;
  if (!rose) {
    const Amounts& before = tree_[Base(was) + static_cast<size_t>(leaves_ + rank)];
    rose = free[0] > before[0] || free[1] > before[1] || free[2] > before[2];
  }
  if (was >= 0 && was != bucket) Put(was, rank, Amounts{kAbsent, kAbsent, kAbsent});
  if (was != bucket) {
    if (was >= 0) --bucket_size_[static_cast<size_t>(was)];
    ++bucket_size_[static_cast<size_t>(bucket)];
  }
  was = bucket;
  Put(bucket, rank, free);
  return rose;
}

template <typename MayHold>
int32_t FreeCapacityIndex::Find(int32_t from, const MayHold& may_hold) const {
  if (from >= leaves_) return -1;
  // Steps to the subtree just right of `i` (same size or larger); false past the end.
  auto right_of = [&](int32_t& i) {
    while (i % 2 == 1) {
      i /= 2;
      if (i == 0) return false;
    }
    ++i;
    return true;
  };
  int32_t i = leaves_ + from;
  while (true) {
    while (!may_hold(i)) {
      if (!right_of(i)) return -1;
    }
    // Descend to the leftmost leaf that holds one; back out to the right when
    // neither child of a passing subtree does.
    while (i < leaves_) {
      if (may_hold(2 * i)) {
        i = 2 * i;
      } else if (may_hold(2 * i + 1)) {
        i = 2 * i + 1;
      } else {
        break;
      }
    }
    if (i >= leaves_) return i - leaves_;
    if (!right_of(i)) return -1;
  }
}

int32_t FreeCapacityIndex::Next(int32_t bucket, int32_t from, const Amounts& need) const {
  if (bucket < 0) return -1;
  const Amounts* t = &tree_[Base(bucket)];
  // A subtree may hold a match only if each maximum covers the need; the maxima
  // may come from different nodes, so a subtree that passes can still hold none.
  return Find(from, [&](int32_t i) {
    return t[i][0] >= need[0] && t[i][1] >= need[1] && t[i][2] >= need[2];
  });
}

int32_t FreeCapacityIndex::NextMayFit(int32_t min_bucket, int32_t from, const Amounts& need) const {
  int32_t best = -1;
  const int32_t buckets = static_cast<int32_t>(bucket_size_.size());
  for (int32_t b = std::max(min_bucket, 0); b < buckets; ++b) {
    if (bucket_size_[static_cast<size_t>(b)] == 0) continue;
    int32_t r = Next(b, from, need);
    if (r >= 0 && (best < 0 || r < best)) best = r;
  }
  return best;
}

int32_t FreeCapacityIndex::NextShort(int32_t bucket, int32_t from, const Amounts& need) const {
  if (bucket < 0) return -1;
  const Amounts* m = &min_tree_[Base(bucket)];
  // A subtree holds a short node exactly when some minimum is below the need.
  return Find(
      from, [&](int32_t i) { return m[i][0] < need[0] || m[i][1] < need[1] || m[i][2] < need[2]; });
}

}  // namespace muster::placement
