#include <gtest/gtest.h>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using P = model::TopologyManagerPolicy;
using S = model::TopologyManagerScope;

std::variant<GangPlan, PlacementFailure> PlanNuma(const ClusterState& s, const model::Workload& w) {
  return MakeGangPlanner({})->Plan(s, Request(w));
}

// Conformance 07: a 6-GPU pod never fits two 4-GPU zones under single-numa-node.
TEST(Numa, SingleNumaNodeRejectsSixGpusAcceptsFour) {
  auto s = Build({MakeNode("dgx-1", 8)}, {MakeNuma("dgx-1", P::kSingleNumaNode, S::kPod, 2, 4)});
  auto six = MakeWorkload("default/six-gpus", {MakePodSet("main", 1, 6, 8000, 64 * kGi)});
  auto r6 = PlanNuma(*s, six);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(r6));
  const auto& f = std::get<PlacementFailure>(r6);
  EXPECT_EQ(f.reason, "NumaUnaligned");
  EXPECT_NE(f.message.find("largest zone free on dgx-1 has 4"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("single-numa-node"), std::string::npos);

  auto four = MakeWorkload("default/four-gpus", {MakePodSet("main", 1, 4, 8000, 64 * kGi)});
  auto r4 = PlanNuma(*s, four);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r4));
  const auto& pod = std::get<GangPlan>(r4).pods.at(0);
  EXPECT_EQ(pod.numa_zone, 0);
  EXPECT_EQ(pod.gpus, (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r4), four).ok());
  // A second 4-GPU pod takes the other zone, a third does not fit.
  auto r4b = PlanNuma(*s, four);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r4b));
  EXPECT_EQ(std::get<GangPlan>(r4b).pods[0].numa_zone, 1);
  EXPECT_EQ(std::get<GangPlan>(r4b).pods[0].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(Numa, SingleNumaNodeNeedsCpusInTheSameZone) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kSingleNumaNode, S::kPod, 2, 4)});
  // 40 cpus exceed one zone's 32 even though the node has 64.
  auto w = MakeWorkload("ns/w", {MakePodSet("main", 1, 2, 40000)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(PlanNuma(*s, w)));
}

TEST(Numa, SplitFreeGpusDoNotAlign) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kSingleNumaNode, S::kPod, 2, 4)});
  // Take 2 GPUs in each zone: 4 are free but never in one zone.
  auto two = MakeWorkload("ns/two", {MakePodSet("main", 1, 2)});
  for (int i = 0; i < 2; ++i) {
    auto p = PlanNuma(*s, two);
    ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
    ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), two).ok());
  }
  auto four = MakeWorkload("ns/four", {MakePodSet("main", 1, 4)});
  auto r = PlanNuma(*s, four);
  // Best fit picked the same zone twice when it could: zone 0 is full, zone 1 empty.
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  EXPECT_EQ(std::get<GangPlan>(r).pods[0].numa_zone, 1);
}

TEST(Numa, RestrictedAllowsSixGpusAcrossTheMinimumZones) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kRestricted, S::kPod, 2, 4)});
  auto six = MakeWorkload("ns/six", {MakePodSet("main", 1, 6)});
  auto r = PlanNuma(*s, six);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  EXPECT_EQ(std::get<GangPlan>(r).pods[0].numa_zone, -1);
  EXPECT_EQ(std::get<GangPlan>(r).pods[0].gpus.size(), 6u);
}

TEST(Numa, RestrictedRejectsAlignablePodWhenZonesAreSplit) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kRestricted, S::kPod, 2, 4)});
  auto three = MakeWorkload("ns/three", {MakePodSet("main", 1, 3)});
  for (int i = 0; i < 2; ++i) {
    auto p = PlanNuma(*s, three);
    ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
    ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), three).ok());
  }
  // One GPU free per zone: a 2-GPU pod could align on an empty node, so restricted
  // refuses to split it.
  auto two = MakeWorkload("ns/two", {MakePodSet("main", 1, 2)});
  auto r = PlanNuma(*s, two);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(r));
  EXPECT_EQ(std::get<PlacementFailure>(r).reason, "NumaUnaligned");
}

TEST(Numa, BestEffortPrefersAlignedElseSplits) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kBestEffort, S::kPod, 2, 4)});
  auto six = MakeWorkload("ns/six", {MakePodSet("main", 1, 6)});
  auto r = PlanNuma(*s, six);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  EXPECT_EQ(std::get<GangPlan>(r).pods[0].numa_zone, -1);
  auto four = MakeWorkload("ns/four", {MakePodSet("main", 1, 4)});
  auto r4 = PlanNuma(*s, four);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r4));
  EXPECT_GE(std::get<GangPlan>(r4).pods[0].numa_zone, 0);
}

TEST(Numa, ContainerScopeAlignsEachContainer) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kSingleNumaNode, S::kContainer, 2, 4)});
  // Two containers of 3 GPUs: each fits a zone, the pod's 6 do not.
  auto ps = MakePodSet("main", 1, 6, 2000);
  for (int c = 0; c < 2; ++c) {
    model::Container ctr;
    ctr.name = "c" + std::to_string(c);
    ctr.requests["nvidia.com/gpu"] = Quantity::FromInt(3);
    ctr.requests["cpu"] = Quantity::FromInt(1);
    ps.tmpl.spec.containers.push_back(ctr);
  }
  auto w = MakeWorkload("ns/w", {ps});
  auto r = PlanNuma(*s, w);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  const auto& pod = std::get<GangPlan>(r).pods[0];
  EXPECT_EQ(pod.gpus, (std::vector<int32_t>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(pod.numa_zone, -1);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r), w).ok());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

}  // namespace
}  // namespace muster::placement
