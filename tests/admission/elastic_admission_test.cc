// Elastic workloads in admission (admitted with what fits, resized in place, shrunk
// for a preemptor), Volcano's sla job order, and Kueue's "no preemption candidates"
// flavor fungibility.
#include <gtest/gtest.h>

#include "admission/admission_fixtures.h"

namespace muster::admission {
namespace {

using namespace testing;  // NOLINT: fixtures

model::ManifestSet OneGpuQueue(
    const std::string& gpus,
    model::QueueingStrategy strategy = model::QueueingStrategy::kBestEffortFIFO) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto cq = CQ("cq", "", {Group({"nvidia.com/gpu"}, {Flavor("gpu", {{"nvidia.com/gpu", gpus}})})});
  cq.queueing_strategy = strategy;
  cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ml", "lq", "cq")};
  return m;
}

// `count` one-GPU pods that may run with as few as `min` (PyTorch elasticPolicy).
model::Workload Elastic(const std::string& key, const std::string& lq, int32_t count, int32_t min) {
  model::Workload w = W(key, lq).PodSet("worker", count, {{"nvidia.com/gpu", "1"}});
  w.pod_sets[0].min_count = min;
  w.min_available = min;
  w.elastic = model::ElasticSource::kPyTorchElasticPolicy;
  return w;
}

int32_t AdmittedCount(const Harness& h, const std::string& key) {
  const Decision* d = h.LastAdmit(key);
  return d == nullptr ? -1 : d->assignment.pod_sets[0].count;
}

TEST(ElasticAdmission, KueueAdmitsTheMostThatFitsQuota) {
  Harness h(OneGpuQueue("8"));
  h.Submit(W("ml/other", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "5"}}).Order(0));
  h.Submit(W(Elastic("ml/el", "lq", 8, 2)).Order(1));
  h.Run();
  EXPECT_TRUE(h.Running("ml/el"));
  EXPECT_EQ(AdmittedCount(h, "ml/el"), 3);  // 8 - 5 quota GPUs left
  EXPECT_TRUE(h.evictions.empty());         // no preemption for the pods beyond its minimum
}

TEST(ElasticAdmission, VolcanoAdmitsTheMostThatFitsNodes) {
  model::ManifestSet m;
  m.volcano_queues = {VQ("q", 1)};
  m.nodes = {GpuNode("n", "4")};
  ResourceList cap;
  cap.Set(kNvidiaGpu, 4);
  Harness h(m, FakeOracle(cap));
  model::Workload w = W("ml/el", "").Volcano("q").PodSet("worker", 6, {{"nvidia.com/gpu", "1"}});
  w.pod_sets[0].min_count = 2;
  w.min_available = 2;
  w.elastic = model::ElasticSource::kVolcanoMinAvailable;
  h.Submit(w);
  h.Run();
  EXPECT_EQ(AdmittedCount(h, "ml/el"), 4);
  // A Volcano minimum does not make a Kueue-queued job elastic: Kueue admits it whole.
  Harness k(OneGpuQueue("8"), FakeOracle(cap));
  model::Workload kw = Elastic("ml/k", "lq", 6, 2);
  kw.elastic = model::ElasticSource::kVolcanoMinAvailable;
  k.Submit(kw);
  k.Run();
  EXPECT_FALSE(k.Running("ml/k"));
}

TEST(ElasticAdmission, ResizeKeepsQuotaEqualToWhatRuns) {
  Harness h(OneGpuQueue("8"));
  h.Submit(W("ml/other", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(0));
  h.Submit(W(Elastic("ml/el", "lq", 8, 2)).Order(1));
  h.Run();
  ASSERT_EQ(AdmittedCount(h, "ml/el"), 4);
  Assignment grown = h.LastAdmit("ml/el")->assignment;
  grown.pod_sets[0].count = 6;
  // The queue is full: growing would exceed its 8 GPUs.
  Status st = h.admitter->CheckResize("ml/el", grown);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.message();
  h.Finish("ml/other");
  EXPECT_TRUE(h.admitter->CheckResize("ml/el", grown).ok());
  ASSERT_TRUE(h.admitter->Resize("ml/el", grown).ok());
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
  // 6 of 8 held now: a 3-GPU workload does not fit, a 2-GPU one does.
  h.Submit(W("ml/three", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "3"}}).Order(5));
  h.Submit(W("ml/two", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "2"}}).Order(6));
  h.Run();
  EXPECT_FALSE(h.Running("ml/three"));
  EXPECT_TRUE(h.Running("ml/two"));
  // Flavors may not change in a resize (Kueue's workload slices keep them).
  Assignment other = grown;
  other.pod_sets[0].flavors["nvidia.com/gpu"] = "elsewhere";
  EXPECT_EQ(h.admitter->CheckResize("ml/el", other).code(), StatusCode::kInvalidArgument);
}

TEST(ElasticAdmission, StrictFifoGrowsOnlyWhenNothingWaitsAhead) {
  Harness h(OneGpuQueue("8", model::QueueingStrategy::kStrictFIFO));
  h.Submit(W("ml/other", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(0));
  h.Submit(W(Elastic("ml/el", "lq", 8, 2)).Order(1));
  h.Run();
  h.Submit(W("ml/big", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "6"}}).Order(9), 1);
  h.Run(1);
  h.Finish("ml/other");
  Assignment grown = h.LastAdmit("ml/el")->assignment;
  grown.pod_sets[0].count = 5;
  Status st = h.admitter->CheckResize("ml/el", grown);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("ml/big waits ahead"), std::string::npos) << st.message();
}

TEST(ElasticAdmission, VictimAboveItsMinimumShrinksInstead) {
  model::ManifestSet m = OneGpuQueue("8");
  Harness h(m);
  h.Submit(Elastic("ml/el", "lq", 8, 2));
  h.Run();
  ASSERT_EQ(AdmittedCount(h, "ml/el"), 8);
  h.Submit(W("ml/urgent", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "3"}}).Priority(10), 1);
  h.Run(1);
  EXPECT_TRUE(h.Running("ml/urgent"));
  EXPECT_TRUE(h.evictions.empty());
  ASSERT_EQ(h.shrinks["ml/el"].size(), 1u);
  EXPECT_EQ(h.shrinks["ml/el"][0], "InClusterQueue by ml/urgent");
  // It gave up exactly 3: growing back by one more does not fit the queue.
  Assignment five = h.LastAdmit("ml/el")->assignment;
  five.pod_sets[0].count = 6;
  EXPECT_FALSE(h.admitter->CheckResize("ml/el", five).ok());
}

TEST(ElasticAdmission, VictimAtItsMinimumIsEvictedWhole) {
  Harness h(OneGpuQueue("8"));
  h.Submit(Elastic("ml/el", "lq", 8, 7));
  h.Run();
  h.Submit(W("ml/urgent", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "3"}}).Priority(10), 1);
  h.Run(1);
  EXPECT_TRUE(h.shrinks.empty());
  ASSERT_EQ(h.evictions["ml/el"].size(), 1u);
}

// Volcano's sla plugin: a job with sla-waiting-time goes ahead of older ones.
TEST(SlaOrder, DeadlineFirstInAVolcanoQueue) {
  for (bool enabled : {true, false}) {
    model::ManifestSet m;
    m.volcano_queues = {VQ("q", 1)};
    m.nodes = {GpuNode("n", "4")};
    m.scheduler_config = model::SchedulerConfiguration{};
    m.scheduler_config->volcano.sla = enabled;
    ResourceList cap;
    cap.Set(kNvidiaGpu, 4);
    Harness h(m, FakeOracle(cap));
    h.Submit(W("ml/older", "").Volcano("q").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(0),
             1);
    model::Workload urgent =
        W("ml/urgent", "").Volcano("q").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(1);
    urgent.sla_waiting_seconds = 30;
    h.Submit(urgent, 2);
    h.Run(100);
    EXPECT_EQ(h.Running("ml/urgent"), enabled);
    EXPECT_EQ(h.Running("ml/older"), !enabled);
  }
}

// The plugin argument is the default for jobs without the annotation.
TEST(SlaOrder, PluginArgumentIsTheDefault) {
  model::ManifestSet m;
  m.volcano_queues = {VQ("q", 1)};
  m.nodes = {GpuNode("n", "4")};
  m.scheduler_config = model::SchedulerConfiguration{};
  m.scheduler_config->volcano.sla_waiting_seconds = 100;
  ResourceList cap;
  cap.Set(kNvidiaGpu, 4);
  Harness h(m, FakeOracle(cap));
  // Default deadline 0 + 100 = 100; the annotated one: 50 + 10 = 60 comes first.
  h.Submit(W("ml/a", "").Volcano("q").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(0), 0);
  model::Workload b =
      W("ml/b", "").Volcano("q").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(1);
  b.sla_waiting_seconds = 10;
  h.Submit(b, 50);
  h.Run(200);
  EXPECT_TRUE(h.Running("ml/b"));
  EXPECT_FALSE(h.Running("ml/a"));
}

// One ClusterQueue with two GPU flavors of 4 each (a100 preferred); a head may
// preempt lower priorities in it. Then "ml/top" (priority 1000) fills a100 and
// "ml/low" (priority 1), with nobody it may preempt in a100, gets t4.
Harness TopOnA100LowOnT4(model::FungibilityPolicy when_can_preempt) {
  model::ManifestSet m;
  m.resource_flavors = {RF("a100"), RF("t4")};
  auto cq = CQ("cq", "",
               {Group({"nvidia.com/gpu"}, {Flavor("a100", {{"nvidia.com/gpu", "4"}}),
                                           Flavor("t4", {{"nvidia.com/gpu", "4"}})})});
  cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
  cq.flavor_fungibility.when_can_preempt = when_can_preempt;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ml", "lq", "cq")};
  Harness h(m);
  h.Submit(W("ml/top", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Priority(1000).Order(0));
  h.Run();
  h.Submit(W("ml/low", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Priority(1).Order(1), 1);
  h.Run(1);
  return h;
}

std::string GpuFlavorOf(Harness& h, const std::string& key) {
  return h.LastAdmit(key)->assignment.pod_sets[0].flavors.at("nvidia.com/gpu");
}

// Kueue's flavor assigner ranks a flavor that needs preemption with nobody to
// preempt below every viable one and tries the next (whenCanPreempt Preempt too).
TEST(FlavorFungibility, NoPreemptionCandidatesTriesTheNextFlavor) {
  Harness h = TopOnA100LowOnT4(model::FungibilityPolicy::kMayStopSearch);
  ASSERT_TRUE(h.Running("ml/low"));
  EXPECT_EQ(GpuFlavorOf(h, "ml/low"), "t4");
  EXPECT_TRUE(h.evictions.empty());
}

// Two flavors both short of quota: the first has nobody the head may preempt, the
// second has. Kueue ranks the first below the second (noPreemptionCandidates) and
// preempts in the second; a tie on score must not keep the first.
TEST(FlavorFungibility, FlavorWithCandidatesBeatsAnEarlierOneWithout) {
  Harness h = TopOnA100LowOnT4(model::FungibilityPolicy::kTryNextFlavor);
  ASSERT_EQ(GpuFlavorOf(h, "ml/top"), "a100");
  ASSERT_EQ(GpuFlavorOf(h, "ml/low"), "t4");
  h.Submit(W("ml/mid", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Priority(100).Order(2),
           2);
  h.Run(3);
  EXPECT_TRUE(h.Running("ml/top"));
  ASSERT_TRUE(h.Running("ml/mid"));
  EXPECT_EQ(GpuFlavorOf(h, "ml/mid"), "t4");
  EXPECT_FALSE(h.Running("ml/low"));
}

}  // namespace
}  // namespace muster::admission
