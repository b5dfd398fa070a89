#include "placement/free_capacity_index.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace muster::placement {
namespace {

using Amounts = FreeCapacityIndex::Amounts;

// The rank a linear walk of the bucket would stop at: what Next must return.
int32_t Scan(const std::vector<int32_t>& bucket, const std::vector<Amounts>& free, int32_t b,
             int32_t from, const Amounts& need) {
  for (int32_t r = from; r < static_cast<int32_t>(bucket.size()); ++r) {
    if (bucket[r] == b && free[r][0] >= need[0] && free[r][1] >= need[1] && free[r][2] >= need[2]) {
      return r;
    }
  }
  return -1;
}

TEST(FreeCapacityIndex, SkipsNodesShortOfAnyResource) {
  FreeCapacityIndex idx;
  idx.Reset(5, 2);
  idx.Set(0, 1, {1000, 10, 1});   // short of memory
  idx.Set(1, 1, {0, 100, 1});     // short of cpu
  idx.Set(2, 0, {9000, 900, 9});  // other bucket
  idx.Set(3, 1, {4000, 100, 0});  // no pod slot left
  idx.Set(4, 1, {2000, 50, 3});
  const Amounts need{1000, 50, 1};
  EXPECT_EQ(idx.Next(1, 0, need), 4);
  EXPECT_EQ(idx.Next(1, 5, need), -1);
  EXPECT_EQ(idx.Next(0, 0, need), 2);
  // Moving a node to another bucket takes it out of the first.
  idx.Set(4, 0, {2000, 50, 3});
  EXPECT_EQ(idx.Next(1, 0, need), -1);
  EXPECT_EQ(idx.Next(0, 3, need), 4);
}

TEST(FreeCapacityIndex, ZeroRequestMatchesOvercommittedNodes) {
  FreeCapacityIndex idx;
  idx.Reset(2, 1);
  idx.Set(0, 0, {-500, 10, 1});  // cpu overcommitted
  idx.Set(1, 0, {500, 10, 1});
  // A pod asking no cpu still fits node 0 (ResourcesFit skips a zero request).
  EXPECT_EQ(idx.Next(0, 0, FreeCapacityIndex::NeedOf(ResourceList{})), 0);
  ResourceList cpu;
  cpu.Set(kCpu, 1);
  EXPECT_EQ(idx.Next(0, 0, FreeCapacityIndex::NeedOf(cpu)), 1);
}

TEST(FreeCapacityIndex, AgreesWithALinearScan) {
  std::mt19937 rng(7);
  const int32_t n = 37;  // not a power of two: padding leaves must stay absent
  const int32_t buckets = 3;
  FreeCapacityIndex idx;
  idx.Reset(n, buckets);
  std::vector<int32_t> bucket(n);
  std::vector<Amounts> free(n);
  for (int32_t r = 0; r < n; ++r) {
    bucket[r] = static_cast<int32_t>(rng() % buckets);
    free[r] = {static_cast<int64_t>(rng() % 10), static_cast<int64_t>(rng() % 10),
               static_cast<int64_t>(rng() % 3)};
    idx.Set(r, bucket[r], free[r]);
  }
  for (int step = 0; step < 2000; ++step) {
    int32_t r = static_cast<int32_t>(rng() % n);
    bucket[r] = static_cast<int32_t>(rng() % buckets);
    free[r] = {static_cast<int64_t>(rng() % 10), static_cast<int64_t>(rng() % 10),
               static_cast<int64_t>(rng() % 3)};
    idx.Set(r, bucket[r], free[r]);
    Amounts need{static_cast<int64_t>(rng() % 10), static_cast<int64_t>(rng() % 10),
                 static_cast<int64_t>(rng() % 3)};
    int32_t b = static_cast<int32_t>(rng() % buckets);
    int32_t from = static_cast<int32_t>(rng() % (n + 2));
    ASSERT_EQ(idx.Next(b, from, need), Scan(bucket, free, b, from, need)) << "step " << step;
    int32_t short_of = -1;
    for (int32_t q = from; q < n && short_of < 0; ++q) {
      if (bucket[q] == b &&
          (free[q][0] < need[0] || free[q][1] < need[1] || free[q][2] < need[2])) {
        short_of = q;
      }
    }
    ASSERT_EQ(idx.NextShort(b, from, need), short_of) << "step " << step;
    // MayFit: one node, in bucket b or any above it (a narrowed search's test).
    int32_t q = static_cast<int32_t>(rng() % n);
    bool fits =
        bucket[q] >= b && free[q][0] >= need[0] && free[q][1] >= need[1] && free[q][2] >= need[2];
    ASSERT_EQ(idx.MayFit(q, b, need), fits) << "step " << step;
    // NextMayFit: the first rank from `from` that MayFit, over every bucket >= b.
    int32_t may_fit = -1;
    for (int32_t k = from; k < n && may_fit < 0; ++k) {
      if (idx.MayFit(k, b, need)) may_fit = k;
    }
    ASSERT_EQ(idx.NextMayFit(b, from, need), may_fit) << "step " << step;
  }
}

}  // namespace
}  // namespace muster::placement
