// ClusterState::UpdateNode: a node edited in place (cordoned, labelled, tainted,
// resized, moved between topology domains, NUMA zones added) changes what the next
// plan sees and keeps its bound pods; an edit its pods no longer fit is refused.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "placement/placement.h"
#include "placement_test_util.h"
#include "same_indexes.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

constexpr const char* kHost = "kubernetes.io/hostname";

std::vector<NodeIndex> PlannedNodes(const std::variant<GangPlan, PlacementFailure>& p) {
  std::vector<NodeIndex> out;
  if (const auto* plan = std::get_if<GangPlan>(&p)) {
    for (const auto& pod : plan->pods) out.push_back(pod.node);
  }
  return out;
}

TEST(NodeUpdate, CordonKeepsBoundPodsAndTurnsNewOnesAway) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8)});
  auto first = MakeWorkload("ns/first", {MakePodSet("worker", 1, 4)});
  auto p = PlanOn(*s, first);
  ASSERT_EQ(PlannedNodes(p), std::vector<NodeIndex>{0});
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), first).ok());

  model::Node a = s->GetNode(0);
  a.unschedulable = true;
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  EXPECT_TRUE(s->GetNode(0).unschedulable);
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/first"});
  EXPECT_TRUE(s->CheckInvariants().empty());
  // Node a still has 4 free GPUs, but takes no new pod.
  EXPECT_EQ(PlannedNodes(PlanOn(*s, MakeWorkload("ns/next", {MakePodSet("worker", 1, 4)}))),
            std::vector<NodeIndex>{1});

  a.unschedulable = false;
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  EXPECT_EQ(PlannedNodes(PlanOn(*s, MakeWorkload("ns/next", {MakePodSet("worker", 1, 4)}))),
            std::vector<NodeIndex>{0});
}

TEST(NodeUpdate, LabelsAndTaintsReachTheLabelIndexAndTheFilter) {
  auto s = Build({MakeNode("a", 8, {{"pool", "x"}}), MakeNode("b", 8, {{"pool", "x"}})});
  auto* indexed = dynamic_cast<IndexedClusterState*>(s.get());
  ASSERT_NE(indexed, nullptr);
  EXPECT_EQ(*indexed->NodesWithLabel("pool", "x"), (std::vector<int32_t>{0, 1}));

  model::Node a = s->GetNode(0);
  a.meta.labels["pool"] = "y";
  a.meta.labels["gpu"] = "h100";
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  EXPECT_EQ(*indexed->NodesWithLabel("pool", "x"), (std::vector<int32_t>{1}));
  EXPECT_EQ(*indexed->NodesWithLabel("pool", "y"), (std::vector<int32_t>{0}));
  EXPECT_EQ(*indexed->NodesWithLabel("gpu", "h100"), (std::vector<int32_t>{0}));
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 1, 1)});
  w.pod_sets[0].node_selector = {{"pool", "y"}};
  EXPECT_EQ(PlannedNodes(PlanOn(*s, w)), std::vector<NodeIndex>{0});

  // A NoSchedule taint: a pod without the toleration goes elsewhere.
  model::Node b = s->GetNode(1);
  b.taints.push_back(model::Taint{"dedicated", "infer", model::TaintEffect::kNoSchedule});
  ASSERT_TRUE(s->UpdateNode(1, b, nullptr).ok());
  EXPECT_EQ(indexed->MaybeFilteredRanks().count(1), 1u);
  auto plain = MakeWorkload("ns/plain", {MakePodSet("worker", 2, 4)});
  EXPECT_EQ(PlannedNodes(PlanOn(*s, plain)), (std::vector<NodeIndex>{0, 0}));
  // The label index and ranks are as a cluster built with these nodes has them.
  auto rebuilt = Build({a, b});
  auto* fresh = dynamic_cast<IndexedClusterState*>(rebuilt.get());
  for (const char* value : {"x", "y"}) {
    EXPECT_EQ(*indexed->NodesWithLabel("pool", value), *fresh->NodesWithLabel("pool", value));
  }
  EXPECT_EQ(indexed->MaybeFilteredRanks(), fresh->MaybeFilteredRanks());
  b.taints.clear();
  ASSERT_TRUE(s->UpdateNode(1, b, nullptr).ok());
  EXPECT_TRUE(indexed->MaybeFilteredRanks().empty());
}

model::Topology RackHostTopology() {
  model::Topology topology;
  topology.meta.name = "default";
  topology.levels = {kRack, kHost};
  return topology;
}

// A device plugin registering GPUs: the node joined with none (a CPU pod runs there)
// and now offers eight. Its pod stays; the next plan sees the GPUs.
TEST(NodeUpdate, NodeThatGainsGpusKeepsItsPodsAndOffersThem) {
  model::Node a = MakeNode("a", 0, {{kRack, "r1"}, {kHost, "a"}});
  model::Node b = MakeNode("b", 4, {{kRack, "r1"}, {kHost, "b"}});
  auto s = Build({a, b}, {}, {RackHostTopology()});
  auto cpu = MakeWorkload("ns/cpu", {MakePodSet("worker", 1, 0)});
  auto placed = PlanOn(*s, cpu);
  ASSERT_EQ(PlannedNodes(placed), std::vector<NodeIndex>{0});
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(placed), cpu).ok());
  auto big = MakeWorkload("ns/big", {MakePodSet("worker", 1, 8)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(PlanOn(*s, big)));

  a.allocatable.Set(kNvidiaGpu, 8);
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/cpu"});
  EXPECT_EQ(dynamic_cast<IndexedClusterState&>(*s).MaxGpusPerNode(), 8);
  EXPECT_EQ(PlannedNodes(PlanOn(*s, big)), std::vector<NodeIndex>{0});
  auto built = Build({a, b}, {}, {RackHostTopology()});
  ASSERT_TRUE(built->Commit(std::get<GangPlan>(placed), cpu).ok());
  ExpectSameIndexes(*s, *built, {kRack, kHost}, "a has 8 GPUs");
}

TEST(NodeUpdate, ShrinkUnderItsPodsAndRenameAreRefusedChangingNothing) {
  auto s = Build({MakeNode("a", 8, {{kRack, "r1"}}), MakeNode("b", 8)}, {}, {RackHostTopology()});
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 1, 6)});
  auto placed = PlanOn(*s, w);
  ASSERT_EQ(PlannedNodes(placed), std::vector<NodeIndex>{0});
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(placed), w).ok());
  model::Node a = s->GetNode(0);

  model::Node smaller = a;
  smaller.allocatable.Set(kNvidiaGpu, 4);
  smaller.meta.labels[kRack] = "r2";
  Status refused = s->UpdateNode(0, smaller, nullptr);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("ns/w"), std::string::npos) << refused.message();
  model::Node renamed = a;
  renamed.meta.name = "c";
  EXPECT_FALSE(s->UpdateNode(0, renamed, nullptr).ok());
  EXPECT_EQ(s->GetNode(0).meta.labels.at(kRack), "r1");
  EXPECT_EQ(s->GetNode(0).allocatable.Get(kNvidiaGpu), 8);
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu), 2);
  EXPECT_TRUE(s->CheckInvariants().empty());

  // Shrunk to what its pod holds: taken, and full.
  model::Node fits = a;
  fits.allocatable.Set(kNvidiaGpu, 6);
  ASSERT_TRUE(s->UpdateNode(0, fits, nullptr).ok());
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu), 0);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(NodeUpdate, TopologyLabelsMoveTheNodeBetweenDomains) {
  model::Node a = MakeNode("a", 8, {{kRack, "r1"}, {kHost, "a"}});
  model::Node b = MakeNode("b", 8, {{kRack, "r2"}, {kHost, "b"}});
  model::Node c = MakeNode("c", 8, {{kRack, "r2"}, {kHost, "c"}});
  auto s = Build({a, b, c}, {}, {RackHostTopology()});
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 1, 3)});
  auto placed = PlanOn(*s, w);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(placed));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(placed), w).ok());

  a.meta.labels[kRack] = "r2";
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  auto* indexed = dynamic_cast<IndexedClusterState*>(s.get());
  EXPECT_EQ(indexed->LevelDomains(kRack).size(), 1u);
  auto built = Build({a, b, c}, {}, {RackHostTopology()});
  ASSERT_TRUE(built->Commit(std::get<GangPlan>(placed), w).ok());
  ExpectSameIndexes(*s, *built, {kRack, kHost}, "a moved to r2");
}

TEST(NodeUpdate, NumaZonesArriveInPlace) {
  auto s = Build({MakeNode("a", 8)});
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 1, 2)});
  auto placed = PlanOn(*s, w);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(placed), w).ok());
  auto numa = MakeNuma("a", model::TopologyManagerPolicy::kSingleNumaNode,
                       model::TopologyManagerScope::kPod, 2, 4);
  ASSERT_TRUE(s->UpdateNode(0, s->GetNode(0), &numa).ok());
  const auto& indexed = dynamic_cast<IndexedClusterState&>(*s);
  EXPECT_EQ(indexed.Info(0).zones.size(), 2u);
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/w"});
  EXPECT_TRUE(s->CheckInvariants().empty());
  // And gone again.
  ASSERT_TRUE(s->UpdateNode(0, s->GetNode(0), nullptr).ok());
  EXPECT_TRUE(indexed.Info(0).zones.empty());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(NodeUpdate, HyperNodesStayThroughAResizeAndFollowLabels) {
  model::HyperNode hn;
  hn.meta.name = "s0";
  hn.tier = 1;
  model::HyperNodeMember m;
  m.type = model::HyperNodeMember::Type::kNode;
  m.exact_name = "a";
  hn.members.push_back(m);
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)}, {}, {}, {hn});
  const auto& indexed = dynamic_cast<IndexedClusterState&>(*s);
  ASSERT_EQ(indexed.HyperNodeDomains().size(), 1u);
  model::Node a = s->GetNode(0);
  a.allocatable.Set(kNvidiaGpu, 8);
  ASSERT_TRUE(s->UpdateNode(0, a, nullptr).ok());
  ASSERT_EQ(indexed.HyperNodeDomains().size(), 1u);
  const Domain& domain = indexed.Domains().Get(indexed.HyperNodeDomains()[0]);
  EXPECT_EQ(domain.key, DomainIndex::HyperNodeKey("s0"));
  EXPECT_EQ(domain.ranks, std::vector<int32_t>{0});
  EXPECT_EQ(indexed.DomainFreeGpus(indexed.HyperNodeDomains()[0]), 8);
  // A HyperNode selecting by label: "b" joins it when labelled, in place.
  model::HyperNodeMember team;
  team.labels = {{"team", "ml"}};
  hn.members.push_back(team);
  ASSERT_TRUE(s->SetHyperNodes({hn}).ok());
  model::Node b = s->GetNode(1);
  b.meta.labels["team"] = "ml";
  ASSERT_TRUE(s->UpdateNode(1, b, nullptr).ok());
  ASSERT_EQ(indexed.HyperNodeDomains().size(), 1u);
  EXPECT_EQ(indexed.Domains().Get(indexed.HyperNodeDomains()[0]).ranks,
            (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(indexed.DomainFreeGpus(indexed.HyperNodeDomains()[0]), 12);
  b.meta.labels.erase("team");
  ASSERT_TRUE(s->UpdateNode(1, b, nullptr).ok());
  EXPECT_EQ(indexed.Domains().Get(indexed.HyperNodeDomains()[0]).ranks, std::vector<int32_t>{0});
  EXPECT_TRUE(s->CheckInvariants().empty());
  // A label no topology level reads is taken in place when no HyperNode exists.
  auto plain = Build({MakeNode("a", 8)});
  model::Node other = plain->GetNode(0);
  other.meta.labels["team"] = "ml";
  EXPECT_TRUE(plain->UpdateNode(0, other, nullptr).ok());
}

// Random clusters with pods bound, one node edited (allocatable up or down, rack or
// host label moved): taken in place exactly when a cluster built with the edit
// still holds every bound pod, and then indexed as that cluster is.
TEST(NodeUpdate, RandomEditsMatchFreshlyBuiltClusters) {
  std::mt19937 rng(20261203);
  int taken = 0;
  int refused = 0;
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 8);
    std::vector<model::Node> nodes;
    for (int i = 0; i < n; ++i) {
      std::string name = "n" + std::to_string(100 + i);
      model::StringMap labels;
      if (rng() % 4 != 0) labels[kRack] = "r" + std::to_string(rng() % 3);
      labels[kHost] = name;
      nodes.push_back(MakeNode(name, rng() % 3 == 0 ? 4 : 8, labels));
    }
    auto s = Build(nodes, {}, {RackHostTopology()});
    std::vector<std::pair<model::Workload, GangPlan>> bound;
    for (int w = 0; w < 6; ++w) {
      auto wl = MakeWorkload("ns/w" + std::to_string(w),
                             {MakePodSet("worker", 1 + static_cast<int32_t>(rng() % 2),
                                         static_cast<int64_t>(rng() % 5))});
      auto plan = PlanOn(*s, wl);
      if (!std::holds_alternative<GangPlan>(plan)) continue;
      ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), wl).ok());
      bound.emplace_back(wl, std::get<GangPlan>(plan));
    }
    const auto edited = static_cast<NodeIndex>(rng() % n);
    model::Node node = nodes[edited];
    switch (rng() % 3) {
      case 0:
        node.allocatable.Set(kNvidiaGpu, static_cast<int64_t>(rng() % 13));
        break;
      case 1:
        node.meta.labels[kRack] = "r" + std::to_string(rng() % 4);
        break;
      default:
        node.allocatable.Set(kNvidiaGpu, static_cast<int64_t>(rng() % 13));
        node.meta.labels.erase(kRack);
        break;
    }
    std::vector<model::Node> after = nodes;
    after[edited] = node;
    auto built = Build(after, {}, {RackHostTopology()});
    bool holds = true;
    for (const auto& [wl, plan] : bound) holds = holds && built->Commit(plan, wl).ok();
    const std::string where = "round " + std::to_string(round);
    Status st = s->UpdateNode(edited, node, nullptr);
    ASSERT_EQ(st.ok(), holds) << where << ": " << st.message();
    if (holds) {
      ++taken;
      ExpectSameIndexes(*s, *built, {kRack, kHost}, where);
      auto probe = MakeWorkload("ns/probe", {MakePodSet("worker", 2, 2)});
      EXPECT_EQ(PlannedNodes(PlanOn(*s, probe)), PlannedNodes(PlanOn(*built, probe))) << where;
    } else {
      ++refused;
      auto unchanged = Build(nodes, {}, {RackHostTopology()});
      for (const auto& [wl, plan] : bound) ASSERT_TRUE(unchanged->Commit(plan, wl).ok());
      ExpectSameIndexes(*s, *unchanged, {kRack, kHost}, where + " (refused)");
    }
  }
  EXPECT_GT(taken, 50);
  EXPECT_GT(refused, 5);
}

}  // namespace
}  // namespace muster::placement
