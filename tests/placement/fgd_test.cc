// FGD as the paper's simulator defines it (typical pods with cpu and GPU model,
// cpu-insufficient fragmentation), the task mix derived from a workload, planner
// options (task mix, exhaustive scoring, FGD's device choice), and exact NUMA
// zone charges for pods split across zones.
#include <gtest/gtest.h>

#include "placement/cluster_state.h"
#include "placement/placement.h"
#include "placement/scorers/fgd_scorer.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using P = model::TopologyManagerPolicy;
using S = model::TopologyManagerScope;

FgdTaskDistribution Mix(std::vector<FgdTaskType> tasks, std::string label = "") {
  FgdTaskDistribution d;
  d.tasks = std::move(tasks);
  d.gpu_model_label = std::move(label);
  return d;
}

TEST(FgdFragmentation, CountsGpusAPodCannotUse) {
  // One typical pod: half a GPU and 4 cpus.
  FgdScorer s(Mix({{4000, 500, 1, {}, 1}}));
  // Free: 1000, 300 milli; enough cpu: only the 300 device is fragmented.
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{0, 700}, 8000, nullptr), 300);
  // Too little cpu: every free milli is fragmented (cpu-insufficient).
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{0, 700}, 2000, nullptr), 1300);
  // Nothing free, nothing fragmented.
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{1000, 1000}, 8000, nullptr), 0);
}

TEST(FgdFragmentation, CpuPodsAndForeignModelsSeeAllFreeGpusAsFragments) {
  FgdScorer s(Mix({{1000, 0, 0, {}, 1}, {1000, 1000, 2, {"A100"}, 1}}, "gpu-model"));
  const std::string a100 = "A100", v100 = "V100";
  // 2 whole GPUs free, model A100: the cpu pod fragments 2000, the 2-GPU pod none.
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{0, 0}, 8000, &a100), 0.5 * 2000);
  // On a V100 the 2-GPU pod cannot run at all.
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{0, 0}, 8000, &v100), 2000);
  // One GPU partly used: the 2-GPU pod no longer fits.
  EXPECT_DOUBLE_EQ(s.Fragmentation(std::vector<int32_t>{100, 0}, 8000, &a100), 1900);
}

TEST(FgdScore, SigmoidOfFragmentationReductionInSimulatorSteps) {
  FgdScorer s(Mix({{0, 1000, 1, {}, 1}}));
  ResourceList alloc, used, req;
  alloc.Set(kCpu, 8000);
  alloc.Set(kNvidiaGpu, 2);
  req.Set(kCpu, 1000);
  req.Set(kNvidiaGpu, 1);
  std::vector<int32_t> dev = {500, 0};
  std::vector<int32_t> chosen = {0};
  std::vector<model::Taint> taints;
  std::vector<model::Toleration> tols;
  // Filling the half-used GPU removes 500 fragmented milli: sigmoid(0.5) = 0.622.
  ScoreInput in{alloc, used, req, dev, chosen, 500, taints, tols};
  EXPECT_EQ(s.Score(in), 620);
  // Halving the whole GPU adds 500: sigmoid(-0.5) = 0.378.
  std::vector<int32_t> other = {1};
  ScoreInput in2{alloc, used, req, dev, other, 500, taints, tols};
  EXPECT_EQ(s.Score(in2), 370);
}

model::Workload Pod(const std::string& key, int64_t cpu, int64_t gpus, int64_t milli,
                    std::vector<std::string> models = {}) {
  auto ps = MakePodSet("main", 1, gpus, cpu);
  if (milli > 0) ps.requests.Set(GpuMilliId(), milli);
  if (!models.empty()) {
    model::NodeSelectorRequirement req;
    req.key = "gpu-model";
    req.op = model::SelectorOperator::kIn;
    req.values = std::move(models);
    model::NodeSelectorTerm term;
    term.match_expressions.push_back(req);
    ps.node_affinity.required.push_back(term);
  }
  return MakeWorkload(key, {ps});
}

TEST(FgdTasks, DerivedFromWorkloadByPopularity) {
  std::vector<model::Workload> ws;
  for (int i = 0; i < 6; ++i) ws.push_back(Pod("ns/a" + std::to_string(i), 4000, 0, 500));
  for (int i = 0; i < 3; ++i)
    ws.push_back(Pod("ns/b" + std::to_string(i), 8000, 2, 0, {"V100", "A100"}));
  ws.push_back(Pod("ns/c", 2000, 0, 0));  // cpu-only, 10% of pods
  FgdTaskDistribution all = TaskDistributionFromWorkloads(ws, "gpu-model", 100);
  ASSERT_EQ(all.tasks.size(), 3u);
  EXPECT_EQ(all.gpu_model_label, "gpu-model");
  EXPECT_EQ(all.tasks[0].gpu_milli, 500);
  EXPECT_EQ(all.tasks[0].num_gpus, 1);
  EXPECT_EQ(all.tasks[0].cpu_milli, 4000);
  EXPECT_DOUBLE_EQ(all.tasks[0].weight, 0.6);
  EXPECT_EQ(all.tasks[1].gpu_milli, 1000);
  EXPECT_EQ(all.tasks[1].num_gpus, 2);
  EXPECT_EQ(all.tasks[1].gpu_models, (std::vector<std::string>{"A100", "V100"}));
  EXPECT_EQ(all.tasks[2].num_gpus, 0);
  // 85% keeps the two most popular shapes, renormalized.
  FgdTaskDistribution top = TaskDistributionFromWorkloads(ws, "gpu-model", 85);
  ASSERT_EQ(top.tasks.size(), 2u);
  EXPECT_DOUBLE_EQ(top.tasks[0].weight, 6.0 / 9.0);
}

TEST(FgdPlanner, ScoresEveryNodeWhenAskedAndUsesTheTaskMix) {
  // 40 two-GPU nodes in one free-GPU bucket; only the last by name has model B,
  // which no typical pod can use, so FGD puts the shared pod there (it wastes
  // nothing anyone could use) -- but only if that node is scored at all.
  std::vector<model::Node> nodes;
  for (int i = 0; i < 40; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "n-%02d", i);
    nodes.push_back(MakeNode(name, 2, {{"gpu-model", i == 39 ? "B" : "A"}}));
  }
  auto s = Build(nodes);
  model::SchedulerConfiguration cfg;
  cfg.scoring = model::ScoringPolicy::kFgd;
  PlannerOptions opts;
  opts.fgd = Mix({{0, 1000, 1, {"A"}, 1}}, "gpu-model");
  auto w = Pod("ns/p", 1000, 0, 500);
  opts.max_scored_nodes = 32;
  auto sampled = MakeGangPlanner(cfg, opts)->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(sampled));
  EXPECT_NE(s->GetNode(std::get<GangPlan>(sampled).pods[0].node).meta.name, "n-39");
  opts.max_scored_nodes = 0;
  auto all = MakeGangPlanner(cfg, opts)->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(all));
  EXPECT_EQ(s->GetNode(std::get<GangPlan>(all).pods[0].node).meta.name, "n-39");
}

TEST(FgdPlanner, ChoosesTheSharedDeviceByScore) {
  // Device 0 has 600 milli free, device 1 is whole; typical pods take 500. A
  // 200-milli pod on device 0 (the fullest, where the fit check puts it) leaves
  // 400 no typical pod can use; on device 1 nothing is lost, so FGD takes it.
  auto s = Build({MakeNode("n", 2)});
  auto fill = Pod("ns/fill", 1000, 0, 400);
  GangPlan plan{fill.key, {PodPlacement{0, 0, 0, {0}, -1, {}}}};
  ASSERT_TRUE(s->Commit(plan, fill).ok());
  model::SchedulerConfiguration cfg;
  cfg.scoring = model::ScoringPolicy::kFgd;
  PlannerOptions opts;
  opts.fgd = Mix({{0, 500, 1, {}, 1}});
  auto w = Pod("ns/p", 1000, 0, 200);
  auto r = MakeGangPlanner(cfg, opts)->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  EXPECT_EQ(std::get<GangPlan>(r).pods[0].gpus, (std::vector<int32_t>{1}));
  cfg.scoring = model::ScoringPolicy::kBestFit;
  auto rb = MakeGangPlanner(cfg, opts)->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(rb));
  EXPECT_EQ(std::get<GangPlan>(rb).pods[0].gpus, (std::vector<int32_t>{0}));
}

model::PodSet TwoContainerPod(int64_t gpus_each, int64_t cpu_each) {
  auto ps = MakePodSet("main", 1, 2 * gpus_each, 2 * cpu_each);
  for (int c = 0; c < 2; ++c) {
    model::Container ctr;
    ctr.name = "c" + std::to_string(c);
    ctr.requests["nvidia.com/gpu"] = Quantity::FromInt(gpus_each);
    ctr.requests["cpu"] = Quantity::FromMilli(cpu_each);
    ps.tmpl.spec.containers.push_back(ctr);
  }
  return ps;
}

TEST(NumaCharges, ContainerScopeChargesEachContainersZone) {
  // Two containers of 4 GPUs and 20 cpus on two 4-GPU, 32-cpu zones: each zone
  // runs one container, so each is charged 20 cpus (a greedy charge from the
  // first GPU's zone would put 32 in zone 0 and 8 in zone 1).
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kSingleNumaNode, S::kContainer, 2, 4)});
  auto w = MakeWorkload("ns/w", {TwoContainerPod(4, 20000)});
  auto r = MakeGangPlanner({})->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r)) << std::get<PlacementFailure>(r).message;
  const PodPlacement& pod = std::get<GangPlan>(r).pods[0];
  EXPECT_EQ(pod.numa_zone, -1);
  EXPECT_EQ(pod.container_zones, (std::vector<int32_t>{0, 1}));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r), w).ok());
  const auto& idx = dynamic_cast<const IndexedClusterState&>(*s);
  EXPECT_EQ(idx.Usage(0).zone_used[0].Get(kCpu), 20000);
  EXPECT_EQ(idx.Usage(0).zone_used[1].Get(kCpu), 20000);
  EXPECT_TRUE(s->CheckInvariants().empty());
  s->Release("ns/w");
  EXPECT_EQ(idx.Usage(0).zone_used[0].Get(kCpu), 0);
  EXPECT_EQ(idx.Usage(0).zone_used[1].Get(kCpu), 0);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(NumaCharges, CommitRejectsAZoneThatNoLongerHoldsItsContainer) {
  auto s = Build({MakeNode("n", 8)}, {MakeNuma("n", P::kSingleNumaNode, S::kContainer, 2, 4)});
  auto w = MakeWorkload("ns/w", {TwoContainerPod(2, 20000)});
  auto planner = MakeGangPlanner({});
  auto r = planner->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r));
  GangPlan plan = std::get<GangPlan>(r);
  // Force both containers onto zone 0: 40 cpus do not fit its 32.
  plan.pods[0].numa_zone = -1;
  plan.pods[0].container_zones = {0, 0};
  plan.pods[0].gpus = {0, 1, 2, 3};
  EXPECT_FALSE(s->Commit(plan, w).ok());
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(NumaCharges, BestEffortFallbackChargesTheGpusZonesFirst) {
  // Zone 0 has one GPU left; a 2-GPU best-effort pod spills and is charged from
  // its GPUs' zones (0 then 1), never beyond what a zone has.
  auto s = Build({MakeNode("n", 4)}, {MakeNuma("n", P::kBestEffort, S::kPod, 2, 2)});
  auto planner = MakeGangPlanner({});
  auto one = MakeWorkload("ns/one", {MakePodSet("main", 1, 1, 1000)});
  auto r1 = planner->Plan(*s, Request(one));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r1));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r1), one).ok());
  auto big = MakeWorkload("ns/big", {MakePodSet("main", 1, 3, 40000)});
  auto r = planner->Plan(*s, Request(big));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(r)) << std::get<PlacementFailure>(r).message;
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(r), big).ok());
  const auto& idx = dynamic_cast<const IndexedClusterState&>(*s);
  int64_t z0 = idx.Usage(0).zone_used[0].Get(kCpu), z1 = idx.Usage(0).zone_used[1].Get(kCpu);
  EXPECT_EQ(z0 + z1, 41000);
  EXPECT_LE(z0, 32000);
  EXPECT_LE(z1, 32000);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

}  // namespace
}  // namespace muster::placement
