// PlacementRequest::excluded_nodes (another gang's reservation): every search path
// skips them, failure messages count them, and PlanAssumingEvicted plans what-ifs.
#include <gtest/gtest.h>

#include <set>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using Mode = model::TopologyRequest::Mode;

std::set<std::string> NodesOf(const ClusterState& s, const GangPlan& plan) {
  std::set<std::string> names;
  for (const auto& pod : plan.pods) names.insert(s.GetNode(pod.node).meta.name);
  return names;
}

NodeIndex Node(const ClusterState& s, const std::string& name) { return *s.FindNode(name); }

TEST(ExcludedNodes, GreedyPlanSkipsThem) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4), MakeNode("c", 4)});
  auto gang = MakeWorkload("ns/gang", {MakePodSet("main", 2, 4)});
  auto planner = MakeGangPlanner({});
  // Without exclusions binpack takes the first nodes by name.
  auto free_plan = planner->Plan(*s, Request(gang));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(free_plan));
  EXPECT_EQ(NodesOf(*s, std::get<GangPlan>(free_plan)), (std::set<std::string>{"a", "b"}));

  PlacementRequest req = Request(gang);
  req.excluded_nodes = {Node(*s, "a")};
  auto p = planner->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p)) << std::get<PlacementFailure>(p).message;
  EXPECT_EQ(NodesOf(*s, std::get<GangPlan>(p)), (std::set<std::string>{"b", "c"}));
}

TEST(ExcludedNodes, FailureCountsThemUnderTheirName) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4), MakeNode("c", 4)});
  auto gang = MakeWorkload("ns/gang", {MakePodSet("main", 2, 4)});
  PlacementRequest req = Request(gang);
  req.excluded_nodes = {Node(*s, "c"), Node(*s, "a")};  // any order
  req.excluded_why = "reserved for ns/big";
  auto p = MakeGangPlanner({})->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(p));
  const PlacementFailure& f = std::get<PlacementFailure>(p);
  EXPECT_EQ(f.reason, "InsufficientResources");
  EXPECT_NE(f.message.find("2 reserved for ns/big"), std::string::npos) << f.message;

  // Every node excluded: nothing matches.
  req.excluded_nodes.push_back(Node(*s, "b"));
  req.excluded_why.clear();
  p = MakeGangPlanner({})->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(p));
  EXPECT_EQ(std::get<PlacementFailure>(p).reason, "NoMatchingNodes");
  EXPECT_NE(std::get<PlacementFailure>(p).message.find("3 excluded"), std::string::npos)
      << std::get<PlacementFailure>(p).message;
}

// Kueue TAS (domain-at-a-time search): rack-1 is the best fit, but one of its
// nodes is excluded, so the rack gang goes to rack-2.
TEST(ExcludedNodes, TopologySearchSkipsThem) {
  std::vector<model::Node> nodes;
  for (int r = 1; r <= 2; ++r) {
    for (int n = 1; n <= 2; ++n) {
      nodes.push_back(MakeNode("r" + std::to_string(r) + "-n" + std::to_string(n), 4,
                               {{"example.com/rack", "rack-" + std::to_string(r)}}));
    }
  }
  model::Topology topo;
  topo.meta.name = "default";
  topo.levels = {"example.com/rack", "kubernetes.io/hostname"};
  auto s = Build(nodes, {}, {topo});
  auto ps = MakePodSet("main", 2, 4);
  ps.topology.mode = Mode::kRequired;
  ps.topology.level = "example.com/rack";
  auto gang = MakeWorkload("ns/rack-gang", {ps});
  PlacementRequest req = Request(gang);
  req.constraints = {PodSetConstraints{{}, {}, "default"}};
  auto planner = MakeGangPlanner({});
  auto free_plan = planner->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(free_plan));
  EXPECT_EQ(NodesOf(*s, std::get<GangPlan>(free_plan)), (std::set<std::string>{"r1-n1", "r1-n2"}));

  req.excluded_nodes = {Node(*s, "r1-n2")};
  auto p = planner->Plan(*s, req);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p)) << std::get<PlacementFailure>(p).message;
  EXPECT_EQ(NodesOf(*s, std::get<GangPlan>(p)), (std::set<std::string>{"r2-n1", "r2-n2"}));
}

// A victim search for an excluded gang never frees room on the excluded nodes.
TEST(ExcludedNodes, VictimSearchLooksOnlyAtAllowedNodes) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)});
  auto on_a = MakeWorkload("ns/on-a", {MakePodSet("main", 1, 4)});
  on_a.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "a"}};
  auto on_b = MakeWorkload("ns/on-b", {MakePodSet("main", 1, 4)});
  on_b.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "b"}};
  auto planner = MakeGangPlanner({});
  for (const auto* w : {&on_a, &on_b}) {
    auto p = planner->Plan(*s, Request(*w));
    ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
    ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), *w).ok());
  }
  auto small = MakeWorkload("ns/small", {MakePodSet("main", 1, 2)});
  auto victims = planner->FindVictims(*s, Request(small), {"ns/on-a", "ns/on-b"});
  ASSERT_TRUE(victims.has_value());
  EXPECT_EQ(*victims, (std::vector<std::string>{"ns/on-a"}));
  PlacementRequest req = Request(small);
  req.excluded_nodes = {Node(*s, "a")};
  victims = planner->FindVictims(*s, req, {"ns/on-a", "ns/on-b"});
  ASSERT_TRUE(victims.has_value());
  EXPECT_EQ(*victims, (std::vector<std::string>{"ns/on-b"}));
}

TEST(ExcludedNodes, PlanAssumingEvictedChangesNothing) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)});
  auto busy = MakeWorkload("ns/busy", {MakePodSet("main", 1, 4)});
  busy.pod_sets[0].node_selector = {{"kubernetes.io/hostname", "b"}};
  auto planner = MakeGangPlanner({});
  auto pb = planner->Plan(*s, Request(busy));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(pb));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pb), busy).ok());

  auto gang = MakeWorkload("ns/gang", {MakePodSet("main", 2, 4)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(planner->Plan(*s, Request(gang))));
  auto p = planner->PlanAssumingEvicted(*s, Request(gang), {"ns/busy"});
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p)) << std::get<PlacementFailure>(p).message;
  EXPECT_EQ(NodesOf(*s, std::get<GangPlan>(p)), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(s->Free(Node(*s, "b")).Get(kNvidiaGpu), 0) << "a what-if leaves the state alone";
  // Exclusions apply to what-ifs too.
  PlacementRequest req = Request(gang);
  req.excluded_nodes = {Node(*s, "a")};
  EXPECT_TRUE(
      std::holds_alternative<PlacementFailure>(planner->PlanAssumingEvicted(*s, req, {"ns/busy"})));
}

}  // namespace
}  // namespace muster::placement
