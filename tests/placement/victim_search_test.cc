#include <gtest/gtest.h>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

void Place(ClusterState& s, const model::Workload& w) {
  auto p = MakeGangPlanner({})->Plan(s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p)) << std::get<PlacementFailure>(p).message;
  ASSERT_TRUE(s.Commit(std::get<GangPlan>(p), w).ok());
}

model::Workload Pinned(const std::string& key, const std::string& node, int64_t gpus) {
  auto w = MakeWorkload(key, {MakePodSet("main", 1, gpus)});
  w.pod_sets[0].node_selector = {{"kubernetes.io/hostname", node}};
  return w;
}

TEST(VictimSearch, MinimalSetAfterAddBack) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)});
  auto v1 = Pinned("ns/v1", "a", 2);
  auto v2 = Pinned("ns/v2", "b", 2);
  auto v3 = Pinned("ns/v3", "a", 2);
  Place(*s, v1);
  Place(*s, v2);
  Place(*s, v3);
  // A 4-GPU pod needs one whole node. Order v1, v2, v3: evicting v1 is not enough,
  // v1+v2 frees node b; adding v1 back still fits, so only v2 is needed.
  auto gang = MakeWorkload("ns/gang", {MakePodSet("main", 1, 4)});
  auto victims = MakeGangPlanner({})->FindVictims(*s, Request(gang), {"ns/v1", "ns/v2", "ns/v3"});
  ASSERT_TRUE(victims.has_value());
  EXPECT_EQ(*victims, (std::vector<std::string>{"ns/v2"}));
  // Order v1, v3, v2: v1+v3 frees node a and both are needed.
  victims = MakeGangPlanner({})->FindVictims(*s, Request(gang), {"ns/v1", "ns/v3", "ns/v2"});
  ASSERT_TRUE(victims.has_value());
  EXPECT_EQ(*victims, (std::vector<std::string>{"ns/v1", "ns/v3"}));
  // FindVictims changed nothing.
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu) + s->Free(1).Get(kNvidiaGpu), 2);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(VictimSearch, NoneNeededAndImpossible) {
  auto s = Build({MakeNode("a", 4)});
  Place(*s, Pinned("ns/v1", "a", 2));
  auto small = MakeWorkload("ns/small", {MakePodSet("main", 1, 2)});
  auto none = MakeGangPlanner({})->FindVictims(*s, Request(small), {"ns/v1"});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  auto huge = MakeWorkload("ns/huge", {MakePodSet("main", 1, 8)});
  EXPECT_FALSE(MakeGangPlanner({})->FindVictims(*s, Request(huge), {"ns/v1"}).has_value());
}

TEST(VictimSearch, RespectsNuma) {
  using P = model::TopologyManagerPolicy;
  auto s = Build({MakeNode("n", 8)},
                 {MakeNuma("n", P::kSingleNumaNode, model::TopologyManagerScope::kPod, 2, 4)});
  auto z0 = Pinned("ns/z0", "n", 2);  // zone 0
  Place(*s, z0);
  auto z1 = Pinned("ns/z1", "n", 3);  // zone 1 (zone 0 has only 2 free)
  Place(*s, z1);
  auto z1b = Pinned("ns/z1b", "n", 1);  // best fit: zone 1 (1 free), which it fills
  Place(*s, z1b);
  // 4 GPUs in one zone. Evicting z1 frees 5 GPUs on the node but only 3 in zone 1:
  // not enough under single-numa-node, so z1b must go too.
  auto four = MakeWorkload("ns/four", {MakePodSet("main", 1, 4)});
  auto v = MakeGangPlanner({})->FindVictims(*s, Request(four), {"ns/z1", "ns/z1b", "ns/z0"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (std::vector<std::string>{"ns/z1", "ns/z1b"}));
  v = MakeGangPlanner({})->FindVictims(*s, Request(four), {"ns/z0", "ns/z1", "ns/z1b"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (std::vector<std::string>{"ns/z0"}));
}

}  // namespace
}  // namespace muster::placement
