// ClusterState::AddNode: a node that joins a running cluster takes the next index,
// keeps every bound pod where it is, and leaves the indexes (ranks, free-GPU buckets,
// labels, topology domains and their free aggregates) as a cluster built with it and
// charged with the same pods has them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <variant>
#include <vector>

#include "placement/cluster_state.h"
#include "placement/placement.h"
#include "placement_test_util.h"
#include "same_indexes.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

TEST(NodeAdd, JoinsBetweenByNameAndKeepsBoundPods) {
  model::Node a = MakeNode("a", 8, {{kZone, "z1"}, {kRack, "r1"}});
  model::Node c = MakeNode("c", 8, {{kZone, "z1"}, {kRack, "r2"}});
  auto s = Build({a, c}, {}, {ZoneRackTopology()});
  auto running = MakeWorkload("ns/running", {MakePodSet("worker", 2, 8)});
  auto plan = PlanOn(*s, running);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(plan));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), running).ok());

  // Both nodes are full: a 4-GPU pod waits until a node joins.
  auto next = MakeWorkload("ns/next", {MakePodSet("worker", 1, 4)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(PlanOn(*s, next)));

  model::Node b = MakeNode("b", 8, {{kZone, "z1"}, {kRack, "r1"}});
  auto added = s->AddNode(b, nullptr);
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(added.value(), 2);
  EXPECT_EQ(s->FindNode("b"), std::optional<NodeIndex>(2));
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/running"});
  EXPECT_EQ(s->WorkloadsOnNode(1), std::vector<std::string>{"ns/running"});
  auto placed = PlanOn(*s, next);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(placed));
  EXPECT_EQ(std::get<GangPlan>(placed).pods[0].node, 2);

  // Indexes as a cluster built with b (at the same index) and the same pods.
  auto built = Build({a, c, b}, {}, {ZoneRackTopology()});
  ASSERT_TRUE(built->Commit(std::get<GangPlan>(plan), running).ok());
  ExpectSameIndexes(*s, *built, {kZone, kRack}, "b joined");
}

TEST(NodeAdd, ALargerNodeRaisesTheLargestNode) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)});
  auto big = MakeWorkload("ns/big", {MakePodSet("worker", 1, 8)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(PlanOn(*s, big)));
  ASSERT_TRUE(s->AddNode(MakeNode("c", 8), nullptr).ok());
  EXPECT_EQ(dynamic_cast<IndexedClusterState&>(*s).MaxGpusPerNode(), 8);
  auto placed = PlanOn(*s, big);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(placed));
  EXPECT_EQ(std::get<GangPlan>(placed).pods[0].node, 2);
}

TEST(NodeAdd, TakesItsNumaZones) {
  auto s = Build({MakeNode("a", 8)});
  auto numa = MakeNuma("b", model::TopologyManagerPolicy::kSingleNumaNode,
                       model::TopologyManagerScope::kPod, 2, 4);
  ASSERT_TRUE(s->AddNode(MakeNode("b", 8), &numa).ok());
  EXPECT_EQ(dynamic_cast<IndexedClusterState&>(*s).Info(1).zones.size(), 2u);
}

TEST(NodeAdd, RefusesADuplicate) {
  auto s = Build({MakeNode("a", 8)});
  auto dup = s->AddNode(MakeNode("a", 8), nullptr);
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s->NodeCount(), 1);
}

// Member node names of each HyperNode domain, "name: a b".
std::vector<std::string> HyperNodeMembers(const IndexedClusterState& s) {
  std::vector<std::string> out;
  for (int32_t d : s.HyperNodeDomains()) {
    const Domain& domain = s.Domains().Get(d);
    std::string line = domain.key + ":";
    for (int32_t r : domain.ranks) line += " " + s.GetNode(s.NodeAtRank(r)).meta.name;
    out.push_back(line);
  }
  return out;
}

TEST(NodeAdd, ANodeJoinsTheHyperNodesThatSelectIt) {
  // s0 takes node "a" by name and every node labelled rack=r1; s1 (tier 2) takes s0.
  model::HyperNode s0;
  s0.meta.name = "s0";
  model::HyperNodeMember by_name;
  by_name.exact_name = "a";
  model::HyperNodeMember by_label;
  by_label.labels = {{kRack, "r1"}};
  s0.members = {by_name, by_label};
  model::HyperNode s1;
  s1.meta.name = "s1";
  s1.tier = 2;
  model::HyperNodeMember child;
  child.type = model::HyperNodeMember::Type::kHyperNode;
  child.exact_name = "s0";
  s1.members = {child};
  auto s = Build({MakeNode("a", 8), MakeNode("c", 8)}, {}, {}, {s0, s1});
  ASSERT_TRUE(s->AddNode(MakeNode("b", 8, {{kRack, "r1"}}), nullptr).ok());
  ASSERT_TRUE(s->AddNode(MakeNode("d", 8, {{kRack, "r2"}}), nullptr).ok());
  auto fresh = Build({MakeNode("a", 8), MakeNode("b", 8, {{kRack, "r1"}}), MakeNode("c", 8),
                      MakeNode("d", 8, {{kRack, "r2"}})},
                     {}, {}, {s0, s1});
  const auto& indexed = dynamic_cast<const IndexedClusterState&>(*s);
  EXPECT_EQ(HyperNodeMembers(indexed),
            (std::vector<std::string>{DomainIndex::HyperNodeKey("s0") + ": a b",
                                      DomainIndex::HyperNodeKey("s1") + ": a b"}));
  EXPECT_EQ(HyperNodeMembers(indexed),
            HyperNodeMembers(dynamic_cast<const IndexedClusterState&>(*fresh)));
  EXPECT_EQ(indexed.DomainFreeGpus(indexed.HyperNodeDomains()[0]), 16);

  // The HyperNodes themselves change: s0 now takes rack r2 as well.
  model::HyperNodeMember r2;
  r2.labels = {{kRack, "r2"}};
  s0.members.push_back(r2);
  ASSERT_TRUE(s->SetHyperNodes({s0, s1}).ok());
  EXPECT_EQ(HyperNodeMembers(indexed),
            (std::vector<std::string>{DomainIndex::HyperNodeKey("s0") + ": a b d",
                                      DomainIndex::HyperNodeKey("s1") + ": a b d"}));
  ASSERT_TRUE(s->SetHyperNodes({}).ok());
  EXPECT_TRUE(indexed.HyperNodeDomains().empty());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

// Random clusters with pods bound: a node added in place against the same cluster
// built with it and charged with the same plans.
TEST(NodeAdd, RandomClustersMatchFreshlyBuiltOnes) {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 150; ++round) {
    const int n = 1 + static_cast<int>(rng() % 10);
    std::vector<int> ids(40);
    for (int i = 0; i < 40; ++i) ids[i] = i;
    std::shuffle(ids.begin(), ids.end(), rng);
    auto make = [&](int id) {
      std::string name = "n" + std::to_string(100 + id);
      model::StringMap labels;
      if (rng() % 4 != 0) labels[kZone] = "z" + std::to_string(rng() % 2);
      if (rng() % 4 != 0) labels[kRack] = "r" + std::to_string(rng() % 3);
      if (rng() % 3 == 0) labels["team"] = "t" + std::to_string(rng() % 2);
      model::Node node = MakeNode(name, rng() % 3 == 0 ? 4 : 8, labels);
      node.unschedulable = rng() % 8 == 0;
      return node;
    };
    std::vector<model::Node> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back(make(ids[i]));
    auto s = Build(nodes, {}, {ZoneRackTopology()});
    std::vector<std::pair<model::Workload, GangPlan>> bound;
    for (int w = 0; w < 6; ++w) {
      auto wl = MakeWorkload("ns/w" + std::to_string(w),
                             {MakePodSet("worker", 1 + static_cast<int32_t>(rng() % 2),
                                         1 + static_cast<int64_t>(rng() % 4))});
      auto plan = PlanOn(*s, wl);
      if (!std::holds_alternative<GangPlan>(plan)) continue;
      ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), wl).ok());
      bound.emplace_back(wl, std::get<GangPlan>(plan));
    }
    model::Node joined = make(ids[n]);
    ASSERT_TRUE(s->AddNode(joined, nullptr).ok());
    nodes.push_back(joined);
    auto built = Build(nodes, {}, {ZoneRackTopology()});
    for (const auto& [wl, plan] : bound) ASSERT_TRUE(built->Commit(plan, wl).ok());
    ExpectSameIndexes(*s, *built, {kZone, kRack}, "round " + std::to_string(round));
    // And plans made now agree.
    auto probe = MakeWorkload("ns/probe", {MakePodSet("worker", 2, 2)});
    auto pa = PlanOn(*s, probe);
    auto pb = PlanOn(*built, probe);
    ASSERT_EQ(pa.index(), pb.index());
    if (const auto* plan = std::get_if<GangPlan>(&pa)) {
      for (size_t p = 0; p < plan->pods.size(); ++p) {
        EXPECT_EQ(plan->pods[p].node, std::get<GangPlan>(pb).pods[p].node);
      }
    }
  }
}

}  // namespace
}  // namespace muster::placement
