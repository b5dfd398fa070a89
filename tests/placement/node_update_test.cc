// ClusterState::UpdateNode: a node edited in place (cordoned, labelled, tainted)
// changes what the next plan sees, keeps its bound pods, and refuses the edits the
// cluster was built around.
#include <gtest/gtest.h>

#include <variant>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

std::variant<GangPlan, PlacementFailure> PlanIt(const ClusterState& s, const model::Workload& w) {
  return MakeGangPlanner(model::SchedulerConfiguration{})->Plan(s, Request(w));
}

std::vector<NodeIndex> NodesOf(const std::variant<GangPlan, PlacementFailure>& p) {
  std::vector<NodeIndex> out;
  if (const auto* plan = std::get_if<GangPlan>(&p)) {
    for (const auto& pod : plan->pods) out.push_back(pod.node);
  }
  return out;
}

TEST(NodeUpdate, CordonKeepsBoundPodsAndTurnsNewOnesAway) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8)});
  auto first = MakeWorkload("ns/first", {MakePodSet("worker", 1, 4)});
  auto p = PlanIt(*s, first);
  ASSERT_EQ(NodesOf(p), std::vector<NodeIndex>{0});
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), first).ok());

  model::Node a = s->GetNode(0);
  a.unschedulable = true;
  ASSERT_TRUE(s->UpdateNode(0, a).ok());
  EXPECT_TRUE(s->GetNode(0).unschedulable);
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/first"});
  EXPECT_TRUE(s->CheckInvariants().empty());
  // Node a still has 4 free GPUs, but takes no new pod.
  EXPECT_EQ(NodesOf(PlanIt(*s, MakeWorkload("ns/next", {MakePodSet("worker", 1, 4)}))),
            std::vector<NodeIndex>{1});

  a.unschedulable = false;
  ASSERT_TRUE(s->UpdateNode(0, a).ok());
  EXPECT_EQ(NodesOf(PlanIt(*s, MakeWorkload("ns/next", {MakePodSet("worker", 1, 4)}))),
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
  ASSERT_TRUE(s->UpdateNode(0, a).ok());
  EXPECT_EQ(*indexed->NodesWithLabel("pool", "x"), (std::vector<int32_t>{1}));
  EXPECT_EQ(*indexed->NodesWithLabel("pool", "y"), (std::vector<int32_t>{0}));
  EXPECT_EQ(*indexed->NodesWithLabel("gpu", "h100"), (std::vector<int32_t>{0}));
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 1, 1)});
  w.pod_sets[0].node_selector = {{"pool", "y"}};
  EXPECT_EQ(NodesOf(PlanIt(*s, w)), std::vector<NodeIndex>{0});

  // A NoSchedule taint: a pod without the toleration goes elsewhere.
  model::Node b = s->GetNode(1);
  b.taints.push_back(model::Taint{"dedicated", "infer", model::TaintEffect::kNoSchedule});
  ASSERT_TRUE(s->UpdateNode(1, b).ok());
  EXPECT_EQ(indexed->MaybeFilteredRanks().count(1), 1u);
  auto plain = MakeWorkload("ns/plain", {MakePodSet("worker", 2, 4)});
  EXPECT_EQ(NodesOf(PlanIt(*s, plain)), (std::vector<NodeIndex>{0, 0}));
  // The label index and ranks are as a cluster built with these nodes has them.
  auto rebuilt = Build({a, b});
  auto* fresh = dynamic_cast<IndexedClusterState*>(rebuilt.get());
  for (const char* value : {"x", "y"}) {
    EXPECT_EQ(*indexed->NodesWithLabel("pool", value), *fresh->NodesWithLabel("pool", value));
  }
  EXPECT_EQ(indexed->MaybeFilteredRanks(), fresh->MaybeFilteredRanks());
  b.taints.clear();
  ASSERT_TRUE(s->UpdateNode(1, b).ok());
  EXPECT_TRUE(indexed->MaybeFilteredRanks().empty());
}

TEST(NodeUpdate, RefusesWhatTheClusterWasBuiltAround) {
  model::Topology topology;
  topology.meta.name = "default";
  topology.levels = {"example.com/rack", "kubernetes.io/hostname"};
  auto s =
      Build({MakeNode("a", 8, {{"example.com/rack", "r1"}}), MakeNode("b", 8)}, {}, {topology});
  model::Node a = s->GetNode(0);

  model::Node bigger = a;
  bigger.allocatable.Set(kNvidiaGpu, 16);
  EXPECT_FALSE(s->UpdateNode(0, bigger).ok());
  model::Node moved = a;
  moved.meta.labels["example.com/rack"] = "r2";
  EXPECT_FALSE(s->UpdateNode(0, moved).ok());
  model::Node joined = s->GetNode(1);
  joined.meta.labels["example.com/rack"] = "r1";
  EXPECT_FALSE(s->UpdateNode(1, joined).ok());
  model::Node renamed = a;
  renamed.meta.name = "c";
  EXPECT_FALSE(s->UpdateNode(0, renamed).ok());
  // Refused edits change nothing.
  EXPECT_EQ(s->GetNode(0).meta.labels.at("example.com/rack"), "r1");
  EXPECT_EQ(s->GetNode(0).allocatable.Get(kNvidiaGpu), 8);

  // A label no topology level reads is taken in place.
  model::Node other = a;
  other.meta.labels["team"] = "ml";
  EXPECT_TRUE(s->UpdateNode(0, other).ok());
}

}  // namespace
}  // namespace muster::placement
