#include <gtest/gtest.h>

#include <set>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using Mode = model::TopologyRequest::Mode;

std::vector<model::Node> RackNodes() {
  std::vector<model::Node> nodes;
  for (int r = 1; r <= 2; ++r) {
    for (int n = 1; n <= 4; ++n) {
      std::string name = "r" + std::to_string(r) + "-n" + std::to_string(n);
      nodes.push_back(MakeNode(
          name, 2,
          {{"example.com/block", "b1"}, {"example.com/rack", "rack-" + std::to_string(r)}}));
    }
  }
  return nodes;
}

model::Topology DefaultTopology() {
  model::Topology t;
  t.meta.name = "default";
  t.levels = {"example.com/block", "example.com/rack", "kubernetes.io/hostname"};
  return t;
}

model::Workload RackGang(const std::string& key, Mode mode,
                         const std::string& level = "example.com/rack", int32_t count = 4) {
  auto ps = MakePodSet("main", count, 2, 4000);
  ps.topology.mode = mode;
  ps.topology.level = level;
  return MakeWorkload(key, {ps});
}

const std::string& RackLabelOf(const ClusterState& s, NodeIndex i) {
  return s.GetNode(i).meta.labels.at("example.com/rack");
}

// Conformance 08: one GPU of rack-1 is taken, so the 4 x 2-GPU gang goes to rack-2.
TEST(Tas, RequiredRackLandsInRackWithRoom) {
  auto s = Build(RackNodes(), {}, {DefaultTopology()});
  auto blocker = MakeWorkload("default/blocker", {MakePodSet("main", 1, 1)});
  blocker.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "r1-n2"}};
  auto pb = MakeGangPlanner({})->Plan(*s, Request(blocker));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(pb));
  EXPECT_EQ(s->GetNode(std::get<GangPlan>(pb).pods[0].node).meta.name, "r1-n2");
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pb), blocker).ok());

  auto gang = RackGang("default/ddp-rack", Mode::kRequired);
  PlacementRequest req = Request(gang);
  req.constraints = {PodSetConstraints{{}, {}, "default"}};
  auto p = MakeGangPlanner({})->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  std::set<NodeIndex> nodes;
  for (const auto& pod : std::get<GangPlan>(p).pods) {
    EXPECT_EQ(RackLabelOf(*s, pod.node), "rack-2");
    nodes.insert(pod.node);
  }
  EXPECT_EQ(nodes.size(), 4u);
  // Ranks follow node order inside the rack.
  const auto& pods = std::get<GangPlan>(p).pods;
  EXPECT_EQ(s->GetNode(pods[0].node).meta.name, "r2-n1");
  EXPECT_EQ(s->GetNode(pods[3].node).meta.name, "r2-n4");
}

TEST(Tas, RequiredFailsWhenNoRackFits) {
  auto s = Build(RackNodes(), {}, {DefaultTopology()});
  auto gang = RackGang("ns/big", Mode::kRequired, "example.com/rack", 5);
  auto p = MakeGangPlanner({})->Plan(*s, Request(gang));
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(p));
  EXPECT_EQ(std::get<PlacementFailure>(p).reason, "TopologyUnsatisfiable");
}

TEST(Tas, PreferredFallsBackToWiderLevel) {
  auto s = Build(RackNodes(), {}, {DefaultTopology()});
  auto gang = RackGang("ns/big", Mode::kPreferred, "example.com/rack", 6);
  auto p = MakeGangPlanner({})->Plan(*s, Request(gang));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  std::map<std::string, int> per_rack;
  for (const auto& pod : std::get<GangPlan>(p).pods) ++per_rack[RackLabelOf(*s, pod.node)];
  EXPECT_EQ(per_rack.size(), 2u);  // fewest racks: 4 + 2
  // Consecutive ranks within a rack.
  const auto& pods = std::get<GangPlan>(p).pods;
  for (size_t k = 1; k < pods.size(); ++k) {
    EXPECT_LE(RackLabelOf(*s, pods[k - 1].node), RackLabelOf(*s, pods[k].node));
  }
}

TEST(Tas, BestFitPicksTheFullestRackThatFits) {
  auto s = Build(RackNodes(), {}, {DefaultTopology()});
  // Take 2 GPUs in rack-2: rack-2 has 6 free, rack-1 8; a 2-pod gang goes to rack-2.
  auto filler = MakeWorkload("ns/filler", {MakePodSet("main", 1, 2)});
  filler.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "r2-n1"}};
  auto pf = MakeGangPlanner({})->Plan(*s, Request(filler));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pf), filler).ok());
  auto gang = RackGang("ns/small", Mode::kRequired, "example.com/rack", 2);
  auto p = MakeGangPlanner({})->Plan(*s, Request(gang));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  for (const auto& pod : std::get<GangPlan>(p).pods) EXPECT_EQ(RackLabelOf(*s, pod.node), "rack-2");
}

model::HyperNode Hn(const std::string& name, int tier,
                    std::vector<model::HyperNodeMember> members) {
  model::HyperNode h;
  h.meta.name = name;
  h.tier = tier;
  h.members = std::move(members);
  return h;
}

model::HyperNodeMember NodeRegex(const std::string& re) {
  model::HyperNodeMember m;
  m.regex = re;
  return m;
}

model::HyperNodeMember Child(const std::string& name) {
  model::HyperNodeMember m;
  m.type = model::HyperNodeMember::Type::kHyperNode;
  m.exact_name = name;
  return m;
}

TEST(HyperNodes, HardTierKeepsGangInOneHyperNode) {
  model::HyperNodeMember by_label;
  by_label.labels = {{"example.com/rack", "rack-2"}};
  auto s = Build(RackNodes(), {}, {},
                 {Hn("s1", 1, {NodeRegex("r1-.*")}), Hn("s2", 1, {by_label}),
                  Hn("top", 2, {Child("s1"), Child("s2")})});
  auto blocker = MakeWorkload("ns/blocker", {MakePodSet("main", 1, 1)});
  blocker.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "r2-n3"}};
  auto pb = MakeGangPlanner({})->Plan(*s, Request(blocker));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pb), blocker).ok());

  auto gang = MakeWorkload("ns/gang", {MakePodSet("worker", 4, 2)});
  gang.network_topology = model::NetworkTopologySpec{model::NetworkTopologyMode::kHard, 1};
  auto p = MakeGangPlanner({})->Plan(*s, Request(gang));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  for (const auto& pod : std::get<GangPlan>(p).pods) EXPECT_EQ(RackLabelOf(*s, pod.node), "rack-1");

  // 6 pods exceed any tier-1 HyperNode: hard tier 1 fails, tier 2 spans both.
  auto six = MakeWorkload("ns/six", {MakePodSet("worker", 6, 2)});
  six.network_topology = model::NetworkTopologySpec{model::NetworkTopologyMode::kHard, 1};
  auto f = MakeGangPlanner({})->Plan(*s, Request(six));
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(f));
  EXPECT_EQ(std::get<PlacementFailure>(f).reason, "TopologyUnsatisfiable");
  six.network_topology->highest_tier_allowed = 2;
  EXPECT_TRUE(std::holds_alternative<GangPlan>(MakeGangPlanner({})->Plan(*s, Request(six))));
  EXPECT_TRUE(s->CheckInvariants().empty());
}

}  // namespace
}  // namespace muster::placement
