// FreeCapacityIndex: for each free-GPU bucket, a max segment tree over node name
// ranks of the free cpu, memory and pod slots of the bucket's nodes. A
// whole-cluster node search walks a bucket in rank order; with the index it jumps
// straight to the next node that can hold the pod's cpu, memory and one more pod
// instead of visiting every full node in front of it (a packing scorer fills nodes
// in rank order, so without it the walk grew with the number of full nodes:
// O(nodes) per pod).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/resource_list.h"

namespace muster::placement {

class FreeCapacityIndex {
 public:
  // Free (or requested) cpu, memory and pods, in that order.
  using Amounts = std::array<int64_t, 3>;
  static Amounts FreeOf(const ResourceList& allocatable, const ResourceList& used);
  // What a pod asks of each; a request of 0 asks nothing (ResourcesFit skips it),
  // so it matches every node of the bucket, even an overcommitted one.
  static Amounts NeedOf(const ResourceList& requests);

  // `nodes` ranks, every one absent from every bucket.
  void Reset(int32_t nodes, int32_t buckets);
  // Node `rank` is in `bucket` with `free`; it leaves the bucket it was in before.
  // True when it may now pass a MayFit it failed before: it had no bucket, or its
  // bucket or some free amount went up.
  bool Set(int32_t rank, int32_t bucket, const Amounts& free);
  // The smallest rank >= `from` of `bucket` whose free amounts are all >= `need`;
  // -1 when none. A node it skips would fail ResourcesFit.
  int32_t Next(int32_t bucket, int32_t from, const Amounts& need) const;
  // The smallest rank >= `from` of `bucket` short of `need` in some amount (such a
  // node fails ResourcesFit); -1 when none. Lets a count of the nodes with room skip
  // visiting them: bucket size minus the short ones.
  int32_t NextShort(int32_t bucket, int32_t from, const Amounts& need) const;
  // The bucket node `rank` is in (-1: none yet), and how many nodes a bucket holds.
  int32_t BucketOf(int32_t rank) const { return bucket_of_[static_cast<size_t>(rank)]; }
  int32_t BucketSize(int32_t bucket) const { return bucket_size_[static_cast<size_t>(bucket)]; }
  // True when `requests` asks nothing beyond cpu, memory and pods, so that Next's
  // nodes are exactly those passing ResourcesFit.
  static bool Covers(const ResourceList& requests);
  // The smallest rank >= `from` that MayFit(rank, min_bucket, need); -1 when none.
  // One descent per bucket from `min_bucket` up: a narrowed search jumps over a run
  // of full nodes with it instead of testing each.
  int32_t NextMayFit(int32_t min_bucket, int32_t from, const Amounts& need) const;
  // Whether node `rank` is in a bucket >= `min_bucket` with free amounts all >=
  // `need`; false means it would fail ResourcesFit or the GPU count.
  bool MayFit(int32_t rank, int32_t min_bucket, const Amounts& need) const {
    const int32_t bucket = bucket_of_[static_cast<size_t>(rank)];
    if (bucket < min_bucket) return false;
    const Amounts& free = tree_[Base(bucket) + static_cast<size_t>(leaves_ + rank)];
    return free[0] >= need[0] && free[1] >= need[1] && free[2] >= need[2];
  }

 private:
  static constexpr int64_t kAbsent = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kAny = kAbsent + 1;
  static constexpr int64_t kAbsentMin = std::numeric_limits<int64_t>::max();

  void Put(int32_t bucket, int32_t rank, const Amounts& value);
  // Leftmost rank >= `from` whose leaf passes `may_hold`; `may_hold(i)` on an inner
  // node i says whether its subtree can hold one.
  template <typename MayHold>
  int32_t Find(int32_t from, const MayHold& may_hold) const;
  size_t Base(int32_t bucket) const { return static_cast<size_t>(bucket) * 2 * leaves_; }

  int32_t leaves_ = 0;                // a power of two >= nodes
  std::vector<int32_t> bucket_of_;    // per rank; -1 = none yet
  std::vector<int32_t> bucket_size_;  // per bucket: nodes in it
  std::vector<Amounts> tree_;         // per bucket: 2 * leaves_ maxima, root at 1
  std::vector<Amounts> min_tree_;     // the same shape, minima (absent = kAbsentMin)
};

}  // namespace muster::placement
