// Elastic workloads (which jobs, their minimums and steps), Volcano's task-topology
// and sla annotations as the workloads layer reads them.
#include "workloads/elastic.h"

#include <gtest/gtest.h>

#include "workloads/sla.h"
#include "workloads/task_topology.h"
#include "workloads/test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using namespace testing;  // NOLINT: test builders

model::KubeflowJob ElasticPyTorch(int32_t workers, int32_t min) {
  model::KubeflowJob j = Kubeflow("PyTorchJob", "el", {Replica("Worker", workers)});
  model::ElasticPolicy p;
  p.min_replicas = min;
  p.max_replicas = workers;
  j.elastic_policy = p;
  return j;
}

TEST(Elastic, PyTorchElasticPolicyIsElasticEverywhere) {
  auto w = BuildWorkload(ElasticPyTorch(8, 2), {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->elastic, model::ElasticSource::kPyTorchElasticPolicy);
  EXPECT_TRUE(IsElastic(*w, /*kueue_queued=*/true));
  EXPECT_TRUE(IsElastic(*w, false));
  EXPECT_EQ(MinCounts(*w), std::vector<int32_t>{2});
  EXPECT_EQ(MaxCounts(*w), std::vector<int32_t>{8});
  // minReplicas equal to the workers leaves nothing to grow.
  auto fixed = BuildWorkload(ElasticPyTorch(4, 4), {});
  EXPECT_FALSE(IsElastic(*fixed, false));
}

TEST(Elastic, VolcanoMinimumsAreElasticOutsideKueue) {
  model::VolcanoJob j = VolcanoJob("v", {Task("worker", 6)});
  j.min_available = 2;
  auto w = BuildWorkload(j, {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->elastic, model::ElasticSource::kVolcanoMinAvailable);
  EXPECT_TRUE(IsElastic(*w, false));
  EXPECT_FALSE(IsElastic(*w, true));  // Kueue admits a queued job whole
  auto whole = BuildWorkload(VolcanoJob("v", {Task("worker", 6)}), {});
  EXPECT_FALSE(IsElastic(*whole, false));
}

// Volcano's webhook sets every task's minAvailable (to its replicas when unset); a
// job minAvailable below their sum makes the scheduler check only the job's.
TEST(Elastic, JobMinimumBelowTheTasksReplacesThem) {
  model::VolcanoJob j = VolcanoJob("v", {Task("ps", 2, 2), Task("worker", 4, 4)});
  j.min_available = 3;
  auto w = BuildWorkload(j, {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pod_sets[0].min_count, 2);
  EXPECT_EQ(w->pod_sets[1].min_count, 1);
  EXPECT_EQ(w->min_available, 3);
  EXPECT_TRUE(IsElastic(*w, false));
}

TEST(Elastic, KueueElasticJobIsResizedByItsOwnerOnly) {
  model::BatchJob j = BatchJob("b", 4);
  j.meta.annotations[std::string(kElasticJobAnnotation)] = "true";
  auto w = BuildWorkload(j, {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->elastic, model::ElasticSource::kKueueElasticJob);
  EXPECT_FALSE(IsElastic(*w, true));
}

TEST(Elastic, MinCountsReachTheJobMinimumAndOnePod) {
  model::Workload w;
  w.pod_sets.resize(2);
  w.pod_sets[0].count = 1;
  w.pod_sets[0].min_count = 0;
  w.pod_sets[1].count = 4;
  w.pod_sets[1].min_count = 0;
  EXPECT_EQ(MinCounts(w), (std::vector<int32_t>{1, 0}));  // a gang has a pod at least
  w.min_available = 3;
  EXPECT_EQ(MinCounts(w), (std::vector<int32_t>{1, 2}));
}

TEST(Elastic, InterpolateMovesEachPodSetByItsShare) {
  std::vector<int32_t> lo = {1, 2}, hi = {1, 8};
  int64_t steps = StepsBetween(lo, hi);
  EXPECT_EQ(steps, 6);
  EXPECT_EQ(Interpolate(lo, hi, 0, steps), lo);
  EXPECT_EQ(Interpolate(lo, hi, 3, steps), (std::vector<int32_t>{1, 5}));
  EXPECT_EQ(Interpolate(lo, hi, steps, steps), hi);
  // Two pod sets: floor of the share, so each reaches its end only at the last step.
  EXPECT_EQ(Interpolate({0, 0}, {2, 4}, 3, 6), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(Interpolate({4, 8}, {2, 2}, 4, 8), (std::vector<int32_t>{3, 5}));
}

TEST(Elastic, LargestFittingStep) {
  int probes = 0;
  auto upto = [&](int64_t limit) {
    return [&probes, limit](int64_t s) {
      ++probes;
      return s <= limit;
    };
  };
  EXPECT_EQ(LargestFittingStep(0, 100, upto(37)), 37);
  EXPECT_LE(probes, 9);  // halves, not a scan
  EXPECT_EQ(LargestFittingStep(0, 100, upto(100)), 100);
  EXPECT_EQ(LargestFittingStep(5, 100, upto(4)), -1);
  EXPECT_EQ(LargestFittingStep(3, 2, upto(9)), -1);
}

TEST(TaskTopologyAnnotations, ParsedAsVolcanoReadsThem) {
  model::StringMap a = {{std::string(kTaskTopologyAffinityAnnotation), "ps,worker;chief"},
                        {std::string(kTaskTopologyAntiAffinityAnnotation), "worker"},
                        {std::string(kTaskTopologyTaskOrderAnnotation), "ps, worker"}};
  std::string why;
  auto t = ParseTaskTopology(a, {"chief", "ps", "worker"}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->affinity, (std::vector<std::vector<std::string>>{{"ps", "worker"}, {"chief"}}));
  EXPECT_EQ(t->anti_affinity, (std::vector<std::vector<std::string>>{{"worker"}}));
  EXPECT_EQ(t->task_order, (std::vector<std::string>{"ps", "worker"}));
  EXPECT_FALSE(ParseTaskTopology({}, {"ps"}, &why).has_value());
}

TEST(TaskTopologyAnnotations, AnUnknownOrRepeatedTaskVoidsThem) {
  std::string why;
  model::StringMap unknown = {{std::string(kTaskTopologyAffinityAnnotation), "ps,learner"}};
  EXPECT_FALSE(ParseTaskTopology(unknown, {"ps", "worker"}, &why).has_value());
  EXPECT_NE(why.find("task learner does not exist"), std::string::npos) << why;
  model::StringMap twice = {{std::string(kTaskTopologyAntiAffinityAnnotation), "ps,ps"}};
  EXPECT_FALSE(ParseTaskTopology(twice, {"ps"}, &why).has_value());
  EXPECT_NE(why.find("repeated"), std::string::npos) << why;
}

TEST(TaskTopologyAnnotations, FromTheJobOrItsPodGroup) {
  model::VolcanoJob j = VolcanoJob("v", {Task("ps", 1), Task("worker", 2)});
  j.meta.annotations[std::string(kTaskTopologyAntiAffinityAnnotation)] = "worker";
  auto w = BuildWorkload(j, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->task_topology.has_value());
  EXPECT_EQ(w->task_topology->anti_affinity.size(), 1u);
  // A PodGroup's annotations count too (the job's pod group, by name).
  model::ManifestSet m;
  model::PodGroup pg;
  pg.meta = Meta("scheduling.volcano.sh/v1beta1", "PodGroup", "v");
  pg.min_member = 3;
  pg.meta.annotations[std::string(kTaskTopologyAffinityAnnotation)] = "ps,worker";
  pg.meta.annotations[std::string(kSlaWaitingTimeAnnotation)] = "1h";
  m.pod_groups.push_back(pg);
  auto with_group = BuildWorkload(VolcanoJob("v", {Task("ps", 1), Task("worker", 2)}), m);
  ASSERT_TRUE(with_group.ok());
  ASSERT_TRUE(with_group->task_topology.has_value());
  EXPECT_EQ(with_group->task_topology->affinity.size(), 1u);
  EXPECT_EQ(with_group->sla_waiting_seconds, 3600);
}

TEST(SlaAnnotation, GoDurationsAndIgnoredValues) {
  std::string why;
  EXPECT_EQ(ParseSlaWaitingTime({{"sla-waiting-time", "1h2m3s"}}, &why), 3723);
  EXPECT_FALSE(ParseSlaWaitingTime({}, &why).has_value());
  EXPECT_FALSE(ParseSlaWaitingTime({{"sla-waiting-time", "soon"}}, &why).has_value());
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(ParseSlaWaitingTime({{"sla-waiting-time", "0s"}}, &why).has_value());
}

}  // namespace
}  // namespace muster::workloads
