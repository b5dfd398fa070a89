// Amounts no valid object carries (bounded on input, core/quantity_bounds.h) must
// still not crash or exhaust memory when they reach placement another way: a real
// cluster's node mirrored by muster kube, or a store written by an older muster.
#include <gtest/gtest.h>

#include <limits>

#include "core/quantity_bounds.h"
#include "placement/node_info.h"
#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();  // a saturated "1e30"

TEST(HostileAmounts, NodeGpuCountIsClampedToTheDeviceBound) {
  auto s = Build({MakeNode("huge", kHuge), MakeNode("small", 8)});
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu), kMaxDevicesPerNode);
  EXPECT_EQ(s->Free(1).Get(kNvidiaGpu), 8);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(HostileAmounts, PodGpuRequestAboveInt32IsUnschedulableNotAnIndex) {
  auto s = Build({MakeNode("a", 8)});
  for (int64_t gpus : {int64_t{2147483648}, kHuge}) {
    auto w = MakeWorkload("ns/w", {MakePodSet("main", 1, gpus)});
    EXPECT_GT(MakePodShape(w.pod_sets[0]).gpus, 0);
    auto p = MakeGangPlanner({})->Plan(*s, Request(w));
    EXPECT_TRUE(std::holds_alternative<PlacementFailure>(p)) << gpus;
  }
  auto milli = MakePodSet("main", 1, 0);
  milli.requests.Set(GpuMilliId(), kHuge);
  EXPECT_GT(MakePodShape(milli).gpus, 0);
  auto p = MakeGangPlanner({})->Plan(*s, Request(MakeWorkload("ns/m", {milli})));
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(p));
}

}  // namespace
}  // namespace muster::placement
