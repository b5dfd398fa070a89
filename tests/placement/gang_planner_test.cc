#include <gtest/gtest.h>

#include <set>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

std::variant<GangPlan, PlacementFailure> PlanIt(
    const ClusterState& s, const model::Workload& w,
    model::ScoringPolicy policy = model::ScoringPolicy::kBinpack) {
  model::SchedulerConfiguration cfg;
  cfg.scoring = policy;
  return MakeGangPlanner(cfg)->Plan(s, Request(w));
}

// A request that asks for no explanation plans the same and fails without the
// diagnosis (the victim search's trial plans read only whether a plan fits).
TEST(GangPlanner, UnexplainedRequestPlansTheSameAndSkipsTheDiagnosis) {
  auto s = Build({MakeNode("node-1", 2), MakeNode("node-2", 2)});
  auto small = MakeWorkload("ml/small", {MakePodSet("worker", 2, 1)});
  auto big = MakeWorkload("ml/big", {MakePodSet("worker", 3, 2)});
  auto planner = MakeGangPlanner(model::SchedulerConfiguration{});
  PlacementRequest explained = Request(small), quiet = Request(small);
  quiet.explain = false;
  auto a = planner->Plan(*s, explained);
  auto b = planner->Plan(*s, quiet);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(a));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(b));
  ASSERT_EQ(std::get<GangPlan>(a).pods.size(), std::get<GangPlan>(b).pods.size());
  for (size_t i = 0; i < std::get<GangPlan>(a).pods.size(); ++i) {
    EXPECT_EQ(std::get<GangPlan>(a).pods[i].node, std::get<GangPlan>(b).pods[i].node);
  }
  PlacementRequest big_quiet = Request(big);
  big_quiet.explain = false;
  auto f = planner->Plan(*s, Request(big));
  auto g = planner->Plan(*s, big_quiet);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(f));
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(g));
  EXPECT_EQ(std::get<PlacementFailure>(f).reason, "InsufficientResources");
  EXPECT_EQ(std::get<PlacementFailure>(g).message, "does not fit");
}

// Seed 000 section 1.2 / conformance 01: two 4-GPU gangs on 3 nodes x 2 GPUs.
TEST(GangPlanner, SecondGangFailsWithNothingCommitted) {
  auto s = Build({MakeNode("node-1", 2), MakeNode("node-2", 2), MakeNode("node-3", 2)});
  auto a = MakeWorkload("ml/job-a", {MakePodSet("master", 1, 1), MakePodSet("worker", 3, 1)});
  auto b = MakeWorkload("ml/job-b", {MakePodSet("master", 1, 1), MakePodSet("worker", 3, 1)});
  auto pa = PlanIt(*s, a);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(pa));
  EXPECT_EQ(std::get<GangPlan>(pa).pods.size(), 4u);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pa), a).ok());
  auto pb = PlanIt(*s, b);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(pb));
  EXPECT_EQ(std::get<PlacementFailure>(pb).reason, "InsufficientResources");
  // Planning b changed nothing: exactly 2 GPUs are still free.
  int64_t free = 0;
  for (NodeIndex i = 0; i < s->NodeCount(); ++i) free += s->Free(i).Get(kNvidiaGpu);
  EXPECT_EQ(free, 2);
  EXPECT_TRUE(s->CheckInvariants().empty());
  s->Release("ml/job-a");
  auto pb2 = PlanIt(*s, b);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(pb2));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(pb2), b).ok());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(GangPlanner, PlanDoesNotMutateAndGivesDistinctDevices) {
  auto s = Build({MakeNode("a", 8)});
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 4, 2)});
  auto p = PlanIt(*s, w);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu), 8);
  std::set<int32_t> devices;
  for (const auto& pod : std::get<GangPlan>(p).pods) {
    EXPECT_EQ(pod.gpus.size(), 2u);
    devices.insert(pod.gpus.begin(), pod.gpus.end());
  }
  EXPECT_EQ(devices.size(), 8u);
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), w).ok());
  EXPECT_EQ(s->Free(0).Get(kNvidiaGpu), 0);
  // Committing the same plan again no longer fits and changes nothing.
  EXPECT_FALSE(s->Commit(std::get<GangPlan>(p), w).ok());
  EXPECT_TRUE(s->CheckInvariants().empty());
  EXPECT_EQ(s->WorkloadsOnNode(0), std::vector<std::string>{"ns/w"});
}

TEST(GangPlanner, PodCountLimitsNode) {
  auto n = MakeNode("a", 0);
  n.allocatable.Set(kPods, 3);
  auto s = Build({n});
  auto w = MakeWorkload("ns/w", {MakePodSet("main", 4, 0, 100)});
  auto p = PlanIt(*s, w);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(p));
  auto w3 = MakeWorkload("ns/w3", {MakePodSet("main", 3, 0, 100)});
  EXPECT_TRUE(std::holds_alternative<GangPlan>(PlanIt(*s, w3)));
}

TEST(GangPlanner, PartialCountsAndSortedOutput) {
  auto s = Build({MakeNode("a", 4), MakeNode("b", 4)});
  auto w = MakeWorkload("ns/w", {MakePodSet("launcher", 1, 0), MakePodSet("worker", 8, 1)});
  PlacementRequest r = Request(w);
  r.counts = {1, 6};
  auto p = MakeGangPlanner({})->Plan(*s, r);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  const auto& pods = std::get<GangPlan>(p).pods;
  ASSERT_EQ(pods.size(), 7u);
  for (size_t k = 1; k < pods.size(); ++k) {
    EXPECT_LT(std::make_pair(pods[k - 1].pod_set, pods[k - 1].index),
              std::make_pair(pods[k].pod_set, pods[k].index));
  }
  // Binpack fills node "a" first; ranks are consecutive per node.
  EXPECT_EQ(s->GetNode(pods[1].node).meta.name, "a");
  EXPECT_EQ(s->GetNode(pods[4].node).meta.name, "a");
  EXPECT_EQ(s->GetNode(pods[5].node).meta.name, "b");
}

TEST(GangPlanner, Deterministic) {
  std::vector<model::Node> nodes;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back(
        MakeNode("n" + std::to_string(i), 8, {{"example.com/rack", "r" + std::to_string(i % 5)}}));
  }
  for (auto policy : {model::ScoringPolicy::kBinpack, model::ScoringPolicy::kSpread,
                      model::ScoringPolicy::kGpuPacking, model::ScoringPolicy::kBestFit,
                      model::ScoringPolicy::kFgd}) {
    std::vector<std::vector<std::pair<NodeIndex, std::vector<int32_t>>>> runs;
    for (int run = 0; run < 2; ++run) {
      auto s = Build(nodes);
      std::vector<std::pair<NodeIndex, std::vector<int32_t>>> out;
      for (int j = 0; j < 20; ++j) {
        auto w =
            MakeWorkload("ns/w" + std::to_string(j), {MakePodSet("worker", 1 + j % 5, 1 + j % 3)});
        auto p = PlanIt(*s, w, policy);
        ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
        for (const auto& pod : std::get<GangPlan>(p).pods) out.emplace_back(pod.node, pod.gpus);
        ASSERT_TRUE(s->Commit(std::get<GangPlan>(p), w).ok());
      }
      EXPECT_TRUE(s->CheckInvariants().empty());
      runs.push_back(out);
    }
    EXPECT_EQ(runs[0], runs[1]);
  }
}

TEST(GangPlanner, NotReadyNodeTakesNoPods) {
  auto s = Build({MakeNode("a", 8), MakeNode("b", 8)});
  s->SetNodeReady(0, false);
  auto w = MakeWorkload("ns/w", {MakePodSet("worker", 2, 4)});
  auto p = PlanIt(*s, w);
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  for (const auto& pod : std::get<GangPlan>(p).pods) EXPECT_EQ(pod.node, 1);
  auto big = MakeWorkload("ns/big", {MakePodSet("worker", 3, 4)});
  auto f = PlanIt(*s, big);
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(f));
}

}  // namespace
}  // namespace muster::placement
