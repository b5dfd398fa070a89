// Domain-at-a-time search: per-domain aggregates stay exact through commits and
// releases, and a required-rack gang picks its rack from them (best fit), falling
// back to the next rack when the aggregates over-estimate what a rack can take.
#include <gtest/gtest.h>

#include "placement/cluster_state.h"
#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using Mode = model::TopologyRequest::Mode;

model::Topology RackTopology() {
  model::Topology t;
  t.meta.name = "default";
  t.levels = {"example.com/rack", "kubernetes.io/hostname"};
  return t;
}

// `racks` racks of `per_rack` 8-GPU nodes.
std::vector<model::Node> Racks(int racks, int per_rack) {
  std::vector<model::Node> nodes;
  for (int r = 0; r < racks; ++r) {
    for (int n = 0; n < per_rack; ++n) {
      nodes.push_back(MakeNode("r" + std::to_string(r) + "-n" + std::to_string(n), 8,
                               {{"example.com/rack", "rack-" + std::to_string(r)}}));
    }
  }
  return nodes;
}

model::Workload Gang(const std::string& key, int32_t count, int64_t gpus) {
  auto ps = MakePodSet("w", count, gpus, 1000);
  ps.topology.mode = Mode::kRequired;
  ps.topology.level = "example.com/rack";
  return MakeWorkload(key, {ps});
}

model::Workload Single(const std::string& key, int64_t gpus) {
  return MakeWorkload(key, {MakePodSet("w", 1, gpus, 1000)});
}

const IndexedClusterState& Indexed(const ClusterState& s) {
  return dynamic_cast<const IndexedClusterState&>(s);
}

int32_t RackDomain(const ClusterState& s, int rack) {
  return *Indexed(s).Domains().Find(
      DomainIndex::LabelKey("example.com/rack", "rack-" + std::to_string(rack)));
}

std::string RackOfPlan(const ClusterState& s, const GangPlan& plan) {
  std::string rack = s.GetNode(plan.pods.front().node).meta.labels.at("example.com/rack");
  for (const auto& p : plan.pods) {
    EXPECT_EQ(s.GetNode(p.node).meta.labels.at("example.com/rack"), rack);
  }
  return rack;
}

TEST(DomainAggregates, FollowCommitAndRelease) {
  auto s = Build(Racks(2, 2), {}, {RackTopology()});
  const IndexedClusterState& idx = Indexed(*s);
  const int32_t d0 = RackDomain(*s, 0);
  EXPECT_EQ(idx.DomainNodesWithFreeGpus(d0, 8), 2);
  EXPECT_EQ(idx.DomainFreeCpu(d0), 2 * 64000);
  auto planner = MakeGangPlanner({});
  auto w = Single("ns/a", 3);
  auto r = planner->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r), w).ok());
  const int32_t d = idx.Info(std::get<GangPlan>(r).pods[0].node).domains.front();
  EXPECT_EQ(idx.DomainNodesWithFreeGpus(d, 8), 1);
  EXPECT_EQ(idx.DomainNodesWithFreeGpus(d, 5), 2);
  EXPECT_EQ(idx.DomainNodesWithFreeGpus(d, 6), 1);
  EXPECT_EQ(idx.DomainFreeGpus(d), 13);
  EXPECT_TRUE(s->CheckInvariants().empty());
  s->Release("ns/a");
  EXPECT_EQ(idx.DomainNodesWithFreeGpus(d, 8), 2);
  EXPECT_EQ(idx.DomainFreeCpu(d), 2 * 64000);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(DomainSearch, RequiredGangTakesTheFullestRackThatFits) {
  auto s = Build(Racks(3, 4), {}, {RackTopology()});
  auto planner = MakeGangPlanner({});
  // rack-0 loses 12 GPUs (too full for the gang), rack-2 loses 4 (fullest that fits).
  std::vector<model::Workload> fill;
  for (const auto& [node, gpus] :
       std::vector<std::pair<std::string, int>>{{"r0-n0", 8}, {"r0-n1", 4}, {"r2-n3", 4}}) {
    auto w = Single("ns/fill-" + node, gpus);
    GangPlan plan{w.key, {PodPlacement{0, 0, *s->FindNode(node), {}, -1, {}}}};
    for (int g = 0; g < gpus; ++g) plan.pods[0].gpus.push_back(g);
    ASSERT_TRUE(s->Commit(plan, w).ok());
  }
  auto g = Gang("ns/gang", 7, 4);  // 28 GPUs: rack-1 has 32, rack-2 28, rack-0 20
  auto r = planner->Plan(*s, Request(g));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r)) << std::get<PlacementFailure>(r).message;
  EXPECT_EQ(RackOfPlan(*s, std::get<GangPlan>(r)), "rack-2");
}

TEST(DomainSearch, FallsBackWhenTheBoundOverEstimates) {
  // Two of rack-0's nodes are cordoned: the aggregates still count them, the scan
  // does not. With 4 GPUs taken on r0-n2, rack-0's bound (28 GPUs = 14 pods of 2)
  // is the best fit, but only 12 GPUs there are usable, so rack-1 (16) is next.
  auto nodes = Racks(2, 4);
  nodes[0].unschedulable = true;
  nodes[1].unschedulable = true;
  auto s = Build(nodes, {}, {RackTopology()});
  auto w = Single("ns/fill", 4);
  GangPlan plan{w.key, {PodPlacement{0, 0, *s->FindNode("r0-n2"), {0, 1, 2, 3}, -1, {}}}};
  ASSERT_TRUE(s->Commit(plan, w).ok());
  auto planner = MakeGangPlanner({});
  auto g = Gang("ns/gang", 9, 2);
  auto r = planner->Plan(*s, Request(g));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r)) << std::get<PlacementFailure>(r).message;
  EXPECT_EQ(RackOfPlan(*s, std::get<GangPlan>(r)), "rack-1");
  // 6 pods fit rack-0 but 9 do not; nor does any rack hold 17.
  auto six = Gang("ns/six", 6, 2);
  auto r6 = planner->Plan(*s, Request(six));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r6));
  EXPECT_EQ(RackOfPlan(*s, std::get<GangPlan>(r6)), "rack-0");
  auto big = Gang("ns/big", 17, 2);
  auto rb = planner->Plan(*s, Request(big));
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(rb));
  EXPECT_EQ(std::get<PlacementFailure>(rb).reason, "TopologyUnsatisfiable");
}

TEST(DomainSearch, SecondPodSetSeesTheFirstInTheOverlay) {
  // Both pod sets must each fit one rack; the first fills rack-0 (best fit), so the
  // aggregates corrected by the overlay send the second to rack-1.
  auto s = Build(Racks(2, 2), {}, {RackTopology()});
  auto a = MakePodSet("a", 4, 4, 1000);
  auto b = MakePodSet("b", 4, 4, 1000);
  for (auto* ps : {&a, &b}) {
    ps->topology.mode = Mode::kRequired;
    ps->topology.level = "example.com/rack";
  }
  auto w = MakeWorkload("ns/two", {a, b});
  auto r = MakeGangPlanner({})->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r)) << std::get<PlacementFailure>(r).message;
  const auto& pods = std::get<GangPlan>(r).pods;
  ASSERT_EQ(pods.size(), 8u);
  std::string rack_a = s->GetNode(pods[0].node).meta.labels.at("example.com/rack");
  std::string rack_b = s->GetNode(pods[4].node).meta.labels.at("example.com/rack");
  EXPECT_NE(rack_a, rack_b);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r), w).ok());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(DomainSearch, SamePlanEveryTime) {
  auto s = Build(Racks(4, 8), {}, {RackTopology()});
  auto g = Gang("ns/g", 10, 4);
  auto planner = MakeGangPlanner({});
  auto r1 = planner->Plan(*s, Request(g));
  auto r2 = planner->Plan(*s, Request(g));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r1));
  const auto& p1 = std::get<GangPlan>(r1).pods;
  const auto& p2 = std::get<GangPlan>(r2).pods;
  ASSERT_EQ(p1.size(), p2.size());
  for (size_t k = 0; k < p1.size(); ++k) {
    EXPECT_EQ(p1[k].node, p2[k].node);
    EXPECT_EQ(p1[k].gpus, p2[k].gpus);
  }
}

}  // namespace
}  // namespace muster::placement
