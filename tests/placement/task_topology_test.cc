// Volcano's task-topology plugin in the gang planner: buckets, the order pods are
// placed in, and the node score it adds (pkg/scheduler/plugins/task-topology).
#include "placement/task_topology.h"

#include <gtest/gtest.h>

#include <map>

#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

// ps (cpu only) and 3 workers of 2 GPUs, as Volcano Job tasks.
model::Workload PsWorkers(std::optional<model::TaskTopology> topo) {
  model::Workload w = MakeWorkload("ml/job", {MakePodSet("ps", 1, 0), MakePodSet("worker", 3, 2)});
  w.task_topology = std::move(topo);
  return w;
}

model::TaskTopology PackPsSpreadWorkers() {
  model::TaskTopology t;
  t.affinity = {{"ps", "worker"}};
  t.anti_affinity = {{"worker"}};
  return t;
}

std::map<std::string, std::string> Where(const GangPlan& plan, const model::Workload& w,
                                         const ClusterState& s) {
  std::map<std::string, std::string> out;
  for (const auto& p : plan.pods) {
    out[w.pod_sets[p.pod_set].name + "-" + std::to_string(p.index)] = s.GetNode(p.node).meta.name;
  }
  return out;
}

std::vector<model::Node> FourNodes() {
  std::vector<model::Node> nodes;
  for (int i = 1; i <= 4; ++i) nodes.push_back(MakeNode("n" + std::to_string(i), 4, {}, 16000));
  return nodes;
}

TEST(TaskTopologyPlan, BucketsAndOrder) {
  model::Workload w = PsWorkers(PackPsSpreadWorkers());
  std::vector<ResourceList> req = {Res(1000, kGi, 0, 1), Res(1000, kGi, 2, 1)};
  auto plan = TaskTopologyPlan::Make(w, {1, 3}, req, 1);
  ASSERT_TRUE(plan.has_value());
  // Workers first (self anti-affinity outranks affinity), each repelled into a bucket
  // of its own; the ps joins the first worker's. Biggest bucket first.
  const auto& pods = plan->pods();
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_EQ(pods[0].pod_set, 1);
  EXPECT_EQ(pods[0].bucket, 0);
  EXPECT_EQ(pods[1].pod_set, 0);
  EXPECT_EQ(pods[1].bucket, 0);
  EXPECT_EQ(pods[2].bucket, 1);
  EXPECT_EQ(pods[3].bucket, 2);
}

TEST(TaskTopologyPlan, BonusFollowsBucketsAndAntiAffinity) {
  model::Workload w = PsWorkers(PackPsSpreadWorkers());
  std::vector<ResourceList> req = {Res(1000, kGi, 0, 1), Res(1000, kGi, 2, 1)};
  auto plan = TaskTopologyPlan::Make(w, {1, 3}, req, 1);
  ASSERT_TRUE(plan.has_value());
  ResourceList free = Res(16000, 512 * kGi, 4, 110);
  // Largest bucket 2: a unit of the plugin's score is worth 1000 / 2.
  EXPECT_EQ(plan->Bonus(0, 0, free), 2 * 500);  // both pods of bucket 0 still to place
  plan->Bound(0, /*node=*/0);
  EXPECT_EQ(plan->Bonus(1, 0, free), 2 * 500);  // its bucket-mate is on node 0
  EXPECT_EQ(plan->Bonus(1, 1, free), 1 * 500);
  plan->Bound(1, 0);
  // A second worker: a worker is on node 0 already (anti-affinity).
  EXPECT_EQ(plan->Bonus(2, 0, free), 0);
  EXPECT_EQ(plan->Bonus(2, 1, free), 500);
  // A node that cannot hold the rest of the bucket scores one less per pod given up.
  EXPECT_EQ(plan->Bonus(2, 1, Res(0, 0, 0, 0)), 500);  // the pod itself is kept
}

TEST(TaskTopologyPlan, NothingWithoutTopologyOrWeight) {
  model::Workload w = PsWorkers(std::nullopt);
  std::vector<ResourceList> req(2);
  EXPECT_FALSE(TaskTopologyPlan::Make(w, {1, 3}, req, 1).has_value());
  w.task_topology = PackPsSpreadWorkers();
  EXPECT_FALSE(TaskTopologyPlan::Make(w, {1, 3}, req, 0).has_value());
}

TEST(TaskTopologyPlanner, PacksPsWithAWorkerAndSpreadsWorkers) {
  auto state = Build(FourNodes());
  model::Workload w = PsWorkers(PackPsSpreadWorkers());
  auto planner = MakeGangPlanner(model::SchedulerConfiguration{});
  auto p = planner->Plan(*state, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  EXPECT_EQ(Where(std::get<GangPlan>(p), w, *state),
            (std::map<std::string, std::string>{
                {"ps-0", "n1"}, {"worker-0", "n1"}, {"worker-1", "n2"}, {"worker-2", "n3"}}));

  // Binpack alone packs two workers per node and the ps beside them.
  model::Workload plain = PsWorkers(std::nullopt);
  auto q = planner->Plan(*state, Request(plain));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(q));
  auto where = Where(std::get<GangPlan>(q), plain, *state);
  EXPECT_EQ(where["worker-0"], where["worker-1"]);

  // The plugin turned off by configuration (Volcano's conf without task-topology).
  model::SchedulerConfiguration off;
  off.volcano.task_topology = false;
  auto r = MakeGangPlanner(off)->Plan(*state, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  auto off_where = Where(std::get<GangPlan>(r), w, *state);
  EXPECT_EQ(off_where["worker-0"], off_where["worker-1"]);
}

TEST(TaskTopologyPlanner, AffinityPacksTasksTogether) {
  // Self-affinity of the workers: all four on one node where binpack spreading
  // (Spread scoring) would scatter them.
  auto state = Build(FourNodes());
  model::Workload w = MakeWorkload("ml/job", {MakePodSet("worker", 4, 1)});
  model::TaskTopology t;
  t.affinity = {{"worker"}};
  w.task_topology = t;
  model::SchedulerConfiguration spread;
  spread.scoring = model::ScoringPolicy::kSpread;
  spread.volcano.task_topology_weight = 10;
  auto p = MakeGangPlanner(spread)->Plan(*state, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
  for (const auto& pod : std::get<GangPlan>(p).pods)
    EXPECT_EQ(pod.node, std::get<GangPlan>(p).pods[0].node);
  model::Workload plain = MakeWorkload("ml/job", {MakePodSet("worker", 4, 1)});
  auto q = MakeGangPlanner(spread)->Plan(*state, Request(plain));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(q));
  EXPECT_NE(std::get<GangPlan>(q).pods[0].node, std::get<GangPlan>(q).pods[1].node);
}

}  // namespace
}  // namespace muster::placement
