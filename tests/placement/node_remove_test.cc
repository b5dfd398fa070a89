// ClusterState::RemoveNode: a node that leaves a running cluster keeps its index (no
// other node moves, so bound pods and plans stay valid) and is out of every index,
// domain and count: what a plan or a diagnosis sees is what a cluster built without
// it, charged with the same pods, shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "placement/cluster_state.h"
#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

model::HyperNode HyperNodeOf(const std::string& name, const std::vector<std::string>& nodes) {
  model::HyperNode hn;
  hn.meta.name = name;
  hn.tier = 1;
  for (const auto& n : nodes) {
    model::HyperNodeMember m;
    m.type = model::HyperNodeMember::Type::kNode;
    m.exact_name = n;
    hn.members.push_back(m);
  }
  return hn;
}

// Node names in rank order, removed nodes left out.
std::vector<std::string> NamesByRank(const IndexedClusterState& s) {
  std::vector<std::string> out;
  for (int32_t r = 0; r < s.NodeCount(); ++r) {
    NodeIndex i = s.NodeAtRank(r);
    if (!s.NodeRemoved(i)) out.push_back(s.GetNode(i).meta.name);
  }
  return out;
}

// The nodes of ranks, by name.
std::vector<std::string> Names(const IndexedClusterState& s, const std::vector<int32_t>& ranks) {
  std::vector<std::string> out;
  for (int32_t r : ranks) out.push_back(s.GetNode(s.NodeAtRank(r)).meta.name);
  return out;
}

// Every index a plan reads, compared by node name between a cluster with nodes
// removed in place and one built without them (its indexes and ranks differ).
void ExpectSameLiveIndexes(const ClusterState& removed, const ClusterState& built,
                           const std::vector<std::string>& level_keys, const std::string& where) {
  SCOPED_TRACE(where);
  const auto& a = dynamic_cast<const IndexedClusterState&>(removed);
  const auto& b = dynamic_cast<const IndexedClusterState&>(built);
  ASSERT_EQ(a.NodeCount() - a.RemovedNodeCount(), b.NodeCount());
  EXPECT_EQ(a.MaxGpusPerNode(), b.MaxGpusPerNode());
  EXPECT_EQ(NamesByRank(a), NamesByRank(b));
  const std::vector<int32_t> fa(a.MaybeFilteredRanks().begin(), a.MaybeFilteredRanks().end());
  const std::vector<int32_t> fb(b.MaybeFilteredRanks().begin(), b.MaybeFilteredRanks().end());
  EXPECT_EQ(Names(a, fa), Names(b, fb));
  for (int32_t k = 0; k <= a.MaxGpusPerNode(); ++k) {
    EXPECT_EQ(a.FreeIndex().BucketSize(k), b.FreeIndex().BucketSize(k)) << "bucket " << k;
  }
  for (NodeIndex i = 0; i < a.NodeCount(); ++i) {
    const std::string& name = a.GetNode(i).meta.name;
    if (a.NodeRemoved(i)) {
      EXPECT_NE(a.FindNode(name), std::optional<NodeIndex>(i)) << name;
      EXPECT_EQ(a.FreeIndex().BucketOf(a.Info(i).name_rank), -1) << name;
      continue;
    }
    auto j = b.FindNode(name);
    ASSERT_TRUE(j.has_value()) << name;
    EXPECT_EQ(a.FindNode(name), std::optional<NodeIndex>(i));
    EXPECT_EQ(a.Free(i), b.Free(*j)) << name;
    EXPECT_EQ(a.WorkloadsOnNode(i), b.WorkloadsOnNode(*j)) << name;
    EXPECT_EQ(a.FreeIndex().BucketOf(a.Info(i).name_rank),
              b.FreeIndex().BucketOf(b.Info(*j).name_rank))
        << name;
  }
  for (const std::string& key : level_keys) {
    const std::vector<int32_t>& da = a.LevelDomains(key);
    const std::vector<int32_t>& db = b.LevelDomains(key);
    ASSERT_EQ(da.size(), db.size()) << key;
    for (size_t k = 0; k < da.size(); ++k) {
      EXPECT_EQ(a.Domains().Get(da[k]).key, b.Domains().Get(db[k]).key);
      EXPECT_EQ(Names(a, a.Domains().Get(da[k]).ranks), Names(b, b.Domains().Get(db[k]).ranks));
      EXPECT_EQ(a.DomainFreeGpus(da[k]), b.DomainFreeGpus(db[k]));
      EXPECT_EQ(a.DomainFreeCpu(da[k]), b.DomainFreeCpu(db[k]));
      EXPECT_EQ(a.DomainFreeMemory(da[k]), b.DomainFreeMemory(db[k]));
      for (int32_t g = 0; g <= a.MaxGpusPerNode(); ++g) {
        EXPECT_EQ(a.DomainNodesWithFreeGpus(da[k], g), b.DomainNodesWithFreeGpus(db[k], g));
      }
    }
  }
  ASSERT_EQ(a.HyperNodeDomains().size(), b.HyperNodeDomains().size());
  for (size_t k = 0; k < a.HyperNodeDomains().size(); ++k) {
    const Domain& x = a.Domains().Get(a.HyperNodeDomains()[k]);
    const Domain& y = b.Domains().Get(b.HyperNodeDomains()[k]);
    EXPECT_EQ(x.key, y.key);
    EXPECT_EQ(Names(a, x.ranks), Names(b, y.ranks)) << x.key;
  }
  EXPECT_TRUE(a.CheckInvariants().empty());
}

TEST(NodeRemove, LeavesItsIndexTakenAndTheOthersWhereTheyAre) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)});
  auto running = MakeWorkload("ns/running", {MakePodSet("worker", 1, 8)});
  auto plan = PlanOn(*s, running);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(plan));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), running).ok());
  ASSERT_EQ(std::get<GangPlan>(plan).pods[0].node, 0);

  ASSERT_TRUE(s->RemoveNode(1).ok());
  EXPECT_EQ(s->NodeCount(), 3);
  EXPECT_EQ(s->RemovedNodeCount(), 1);
  EXPECT_TRUE(s->NodeRemoved(1));
  EXPECT_FALSE(s->NodeReady(1));
  EXPECT_FALSE(s->FindNode("b").has_value());
  EXPECT_EQ(s->FindNode("c"), std::optional<NodeIndex>(2));
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/running"});
  // Readiness never brings it back.
  s->SetNodeReady(1, true);
  EXPECT_FALSE(s->NodeReady(1));

  // One node is left with room: a second 8-GPU pod goes there, a third waits.
  auto next = MakeWorkload("ns/next", {MakePodSet("worker", 1, 8)});
  auto placed = PlanOn(*s, next);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(placed));
  EXPECT_EQ(std::get<GangPlan>(placed).pods[0].node, 2);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(placed), next).ok());
  auto third = MakeWorkload("ns/third", {MakePodSet("worker", 1, 8)});
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(PlanOn(*s, third)));
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(NodeRemove, RefusedWhilePodsAreBoundAndTwice) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8)});
  auto running = MakeWorkload("ns/running", {MakePodSet("worker", 1, 8)});
  auto plan = PlanOn(*s, running);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(plan));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), running).ok());
  Status refused = s->RemoveNode(0);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("ns/running"), std::string::npos) << refused.message();
  EXPECT_FALSE(s->NodeRemoved(0));
  EXPECT_EQ(s->FindNode("a"), std::optional<NodeIndex>(0));

  s->Release("ns/running");
  ASSERT_TRUE(s->RemoveNode(0).ok());
  EXPECT_EQ(s->RemoveNode(0).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->UpdateNode(0, MakeNode("a", 8), nullptr).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->RemoveNode(7).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->RemovedNodeCount(), 1);
}

TEST(NodeRemove, ANodeOfTheSameNameJoinsAgainAtANewIndex) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 4)});
  ASSERT_TRUE(s->RemoveNode(1).ok());
  auto back = s->AddNode(MakeNode("b", 8), nullptr);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value(), 2);
  EXPECT_EQ(s->FindNode("b"), std::optional<NodeIndex>(2));
  EXPECT_TRUE(s->NodeRemoved(1));
  ExpectSameLiveIndexes(*s, *Build({MakeNode("a", 8), MakeNode("b", 8)}), {}, "b back");
}

TEST(NodeRemove, DiagnosisCountsOnlyTheNodesLeft) {
  const std::vector<model::Node> nodes = {MakeNode("a", 8, {{"team", "x"}}), MakeNode("b", 8),
                                          MakeNode("c", 8)};
  auto s = Build(nodes);
  ASSERT_TRUE(s->RemoveNode(1).ok());
  auto built = Build({nodes[0], nodes[2]});
  // Through the free-capacity index (no selector), through the label index (a
  // selector) and node by node (a required affinity the index cannot answer): the
  // failures read as on a cluster that never had it.
  auto big = MakeWorkload("ns/big", {MakePodSet("worker", 1, 16)});
  auto selected = MakeWorkload("ns/selected", {MakePodSet("worker", 1, 16)});
  selected.pod_sets[0].node_selector["team"] = "x";
  auto picky = MakeWorkload("ns/picky", {MakePodSet("worker", 1, 1)});
  model::NodeSelectorTerm term;
  term.match_expressions.push_back({"team", model::SelectorOperator::kNotIn, {"x"}});
  term.match_expressions.push_back({"team", model::SelectorOperator::kExists, {}});
  picky.pod_sets[0].node_affinity.required.push_back(term);
  for (const model::Workload* w : {&big, &selected, &picky}) {
    auto failed = PlanOn(*s, *w);
    ASSERT_TRUE(std::holds_alternative<PlacementFailure>(failed)) << w->key;
    auto fresh = PlanOn(*built, *w);
    ASSERT_TRUE(std::holds_alternative<PlacementFailure>(fresh)) << w->key;
    const std::string why = std::get<PlacementFailure>(failed).message;
    EXPECT_EQ(why, std::get<PlacementFailure>(fresh).message) << w->key;
    EXPECT_EQ(why.find("NotReady"), std::string::npos) << why;
  }
  const std::string why = std::get<PlacementFailure>(PlanOn(*s, big)).message;
  EXPECT_NE(why.find("2 short of GPUs"), std::string::npos) << why;
  const std::string none = std::get<PlacementFailure>(PlanOn(*s, picky)).message;
  EXPECT_EQ(none.rfind("0/2 nodes match", 0), 0u) << none;
}

TEST(NodeRemove, LeavesItsHyperNode) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)}, {}, {},
                 {HyperNodeOf("s0", {"a", "b"}), HyperNodeOf("s1", {"c"})});
  ASSERT_TRUE(s->RemoveNode(1).ok());
  auto built = Build({MakeNode("a", 8), MakeNode("c", 8)}, {}, {},
                     {HyperNodeOf("s0", {"a", "b"}), HyperNodeOf("s1", {"c"})});
  ExpectSameLiveIndexes(*s, *built, {}, "b left s0");
}

// Random clusters with pods bound: nodes removed in place (their pods released
// first, as the engine evicts them) against the same cluster built without them and
// charged with the plans that are left.
TEST(NodeRemove, RandomClustersMatchFreshlyBuiltOnes) {
  std::mt19937 rng(20261203);
  for (int round = 0; round < 150; ++round) {
    const int n = 2 + static_cast<int>(rng() % 10);
    std::vector<model::Node> nodes;
    for (int i = 0; i < n; ++i) {
      model::StringMap labels;
      if (rng() % 4 != 0) labels[kZone] = "z" + std::to_string(rng() % 2);
      if (rng() % 4 != 0) labels[kRack] = "r" + std::to_string(rng() % 3);
      if (rng() % 3 == 0) labels["team"] = "t" + std::to_string(rng() % 2);
      model::Node node = MakeNode("n" + std::to_string(100 + (rng() % 1000) * 16 + i),
                                  rng() % 3 == 0 ? 4 : 8, labels);
      node.unschedulable = rng() % 8 == 0;
      nodes.push_back(std::move(node));
    }
    auto s = Build(nodes, {}, {ZoneRackTopology()});
    std::map<std::string, std::pair<model::Workload, GangPlan>> bound;
    for (int w = 0; w < 6; ++w) {
      auto wl = MakeWorkload("ns/w" + std::to_string(w),
                             {MakePodSet("worker", 1 + static_cast<int32_t>(rng() % 2),
                                         1 + static_cast<int64_t>(rng() % 4))});
      auto plan = PlanOn(*s, wl);
      if (!std::holds_alternative<GangPlan>(plan)) continue;
      ASSERT_TRUE(s->Commit(std::get<GangPlan>(plan), wl).ok());
      bound.emplace(wl.key, std::make_pair(wl, std::get<GangPlan>(plan)));
    }
    // Remove one node or a few; the workloads on them go first.
    std::set<std::string> gone;
    const int removals = 1 + static_cast<int>(rng() % std::min(3, n - 1));
    for (int k = 0; k < removals; ++k) {
      const auto i = static_cast<NodeIndex>(rng() % n);
      if (s->NodeRemoved(i)) continue;
      for (const std::string& key : s->WorkloadsOnNode(i)) {
        s->Release(key);
        bound.erase(key);
      }
      ASSERT_TRUE(s->RemoveNode(i).ok());
      gone.insert(nodes[i].meta.name);
    }
    std::vector<model::Node> left;
    for (const auto& node : nodes) {
      if (gone.count(node.meta.name) == 0) left.push_back(node);
    }
    auto built = Build(left, {}, {ZoneRackTopology()});
    auto& b = dynamic_cast<IndexedClusterState&>(*built);
    for (const auto& [key, entry] : bound) {
      GangPlan plan = entry.second;  // node indices of the built cluster
      for (PodPlacement& pod : plan.pods) pod.node = *b.FindNode(s->GetNode(pod.node).meta.name);
      ASSERT_TRUE(built->Commit(plan, entry.first).ok());
    }
    ExpectSameLiveIndexes(*s, *built, {kZone, kRack}, "round " + std::to_string(round));
    // Plans made now agree, node for node, and so do their failures.
    for (auto probe : {MakeWorkload("ns/probe", {MakePodSet("worker", 2, 2)}),
                       MakeWorkload("ns/wide", {MakePodSet("worker", 3, 8)})}) {
      auto pa = PlanOn(*s, probe);
      auto pb = PlanOn(*built, probe);
      ASSERT_EQ(pa.index(), pb.index());
      if (const auto* plan = std::get_if<GangPlan>(&pa)) {
        for (size_t p = 0; p < plan->pods.size(); ++p) {
          EXPECT_EQ(s->GetNode(plan->pods[p].node).meta.name,
                    built->GetNode(std::get<GangPlan>(pb).pods[p].node).meta.name);
        }
      } else {
        EXPECT_EQ(std::get<PlacementFailure>(pa).message, std::get<PlacementFailure>(pb).message);
      }
    }
  }
}

}  // namespace
}  // namespace muster::placement
