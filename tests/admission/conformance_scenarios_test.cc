// The admission half of conformance cases 02-06, 09 and 10, played with a fake
// engine (Harness) so they pass here before the engine lands.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

using model::PreemptionPolicy;

TEST(ConformanceTest, Case02QuotaGate) {
  model::ManifestSet m;
  m.resource_flavors = {RF("default-flavor")};
  m.cluster_queues = {
      CQ("cluster-queue", "", {Group({"cpu"}, {Flavor("default-flavor", {{"cpu", "4"}})})})};
  m.local_queues = {LQ("default", "user-queue", "cluster-queue")};
  Harness h(m);
  h.Submit(W("default/pytorch-ddp", "user-queue").PodSet("main", 2, {{"cpu", "1"}}).Order(1));
  h.Submit(
      W("default/pytorch-ddp-too-large", "user-queue").PodSet("main", 6, {{"cpu", "1"}}).Order(2));
  h.Run(0);
  EXPECT_TRUE(h.Running("default/pytorch-ddp"));
  EXPECT_FALSE(h.Running("default/pytorch-ddp-too-large"));
  EXPECT_EQ(h.Reason("default/pytorch-ddp-too-large"),
            "QuotaExceeded: couldn't assign flavors to pod set main: insufficient quota for cpu in "
            "flavor default-flavor, request 6 > available 4 in ClusterQueue cluster-queue");
  EXPECT_EQ(h.admitter->QueueOf("default/pytorch-ddp").cluster_queue, "cluster-queue");
  // Finishing the first never makes the second fit: it stays pending with the reason.
  h.Finish("default/pytorch-ddp");
  h.Run(60);
  EXPECT_FALSE(h.Running("default/pytorch-ddp-too-large"));
}

model::ManifestSet Case03() {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  for (const char* team : {"team-a", "team-b"}) {
    auto cq = CQ(team, "ml",
                 {Group({"cpu", "nvidia.com/gpu"},
                        {Flavor("gpu", {{"cpu", "64"}, {"nvidia.com/gpu", "8", "8"}})})});
    cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
    m.cluster_queues.push_back(cq);
    m.local_queues.push_back(LQ(team, team, team));
  }
  return m;
}

TEST(ConformanceTest, Case03CohortBorrowAndReclaim) {
  FakeOracle oracle(ResourceList::FromQuantities({{"cpu", Q("128")}, {"nvidia.com/gpu", Q("16")}}));
  Harness h(Case03(), oracle);
  h.Submit(W("team-b/b-big", "team-b")
               .PodSet("main", 2, {{"cpu", "1"}, {"nvidia.com/gpu", "8"}})
               .Order(1),
           0);
  h.Run(0);
  ASSERT_TRUE(h.Running("team-b/b-big"));
  EXPECT_TRUE(h.LastAdmit("team-b/b-big")->assignment.borrows);
  h.Submit(W("team-a/a-job", "team-a")
               .PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "8"}})
               .Order(2),
           100);
  h.Run(100);
  EXPECT_TRUE(h.Running("team-a/a-job"));
  EXPECT_FALSE(h.Running("team-b/b-big"));
  ASSERT_EQ(h.evictions["team-b/b-big"].size(), 1u);
  EXPECT_EQ(h.evictions["team-b/b-big"][0], "InCohortReclamation by team-a/a-job");
  // b-big needs 16 but only 8 are free (borrowing limit 8 would allow it): pending.
  EXPECT_NE(h.Reason("team-b/b-big").find("insufficient unused quota for nvidia.com/gpu"),
            std::string::npos);
  h.Finish("team-a/a-job");
  h.Run(1100);
  EXPECT_TRUE(h.Running("team-b/b-big"));
}

TEST(ConformanceTest, Case04LendingLimit) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  m.cluster_queues = {
      CQ("lender", "pool",
         {Group({"cpu", "nvidia.com/gpu"},
                {Flavor("gpu", {{"cpu", "64"}, {"nvidia.com/gpu", "8", std::nullopt, "2"}})})}),
      CQ("borrower", "pool",
         {Group({"cpu", "nvidia.com/gpu"},
                {Flavor("gpu", {{"cpu", "64"}, {"nvidia.com/gpu", "2", "10"}})})})};
  m.local_queues = {LQ("research", "borrower", "borrower")};
  Harness h(m);
  h.Submit(
      W("research/first", "borrower").PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "4"}}),
      0);
  h.Run(0);
  h.Submit(
      W("research/second", "borrower").PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}),
      10);
  h.Run(10);
  EXPECT_TRUE(h.Running("research/first"));
  EXPECT_FALSE(h.Running("research/second"));
  EXPECT_EQ(h.Reason("research/second"),
            "QuotaExceeded: couldn't assign flavors to pod set main: insufficient unused quota for "
            "nvidia.com/gpu in flavor gpu, request 2 > available 0 in ClusterQueue borrower");
}

TEST(ConformanceTest, Case05PreemptWithinClusterQueue) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto cq = CQ("training", "",
               {Group({"cpu", "nvidia.com/gpu"},
                      {Flavor("gpu", {{"cpu", "64"}, {"nvidia.com/gpu", "8"}})})});
  cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ml", "training", "training")};
  FakeOracle oracle(ResourceList::FromQuantities({{"cpu", Q("64")}, {"nvidia.com/gpu", Q("8")}}));
  Harness h(m, oracle);
  h.Submit(W("ml/notebook", "training")
               .PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "8"}})
               .Priority(100),
           0);
  h.Run(0);
  h.Submit(W("ml/gpt-finetune", "training")
               .PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "4"}})
               .Priority(1000),
           50);
  h.Run(50);
  EXPECT_TRUE(h.Running("ml/gpt-finetune"));
  EXPECT_FALSE(h.Running("ml/notebook"));
  ASSERT_EQ(h.evictions["ml/notebook"].size(), 1u);
  EXPECT_EQ(h.evictions["ml/notebook"][0], "InClusterQueue by ml/gpt-finetune");
  h.Finish("ml/gpt-finetune");
  h.Run(650);
  EXPECT_TRUE(h.Running("ml/notebook"));
}

TEST(ConformanceTest, Case06VolcanoProportionWeights) {
  model::ManifestSet m;
  m.volcano_queues = {VQ("research", 1), VQ("production", 3)};
  m.nodes = {GpuNode("gpu-1", "8")};
  FakeOracle oracle(ResourceList::FromQuantities({{"nvidia.com/gpu", Q("8")}}));
  Harness h(m, oracle);
  int order = 0;
  for (const char* team : {"research", "production"}) {
    for (int i = 0; i < 10; ++i) {
      std::string key = std::string(team) + "/" + team + "-" + std::to_string(i);
      h.Submit(
          W(key, "").PodSet("worker", 1, {{"nvidia.com/gpu", "1"}}).Volcano(team).Order(++order),
          0);
    }
  }
  h.Run(0);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(h.Running("research/research-" + std::to_string(i)), i < 2) << i;
    EXPECT_EQ(h.Running("production/production-" + std::to_string(i)), i < 6) << i;
  }
  EXPECT_EQ(
      h.Reason("research/research-2"),
      "QueueQuotaExceeded: insufficient nvidia.com/gpu in Volcano queue research: deserved 2, "
      "allocated 2, request 1");
  QueueInfo qi = h.admitter->QueueOf("research/research-0");
  EXPECT_TRUE(qi.volcano);
  EXPECT_EQ(qi.cluster_queue, "research");
}

TEST(ConformanceTest, Case09StrictVsBestEffortFifo) {
  model::ManifestSet m;
  m.resource_flavors = {RF("default-flavor")};
  auto strict =
      CQ("cq-strictfifo", "", {Group({"cpu"}, {Flavor("default-flavor", {{"cpu", "10"}})})});
  strict.queueing_strategy = model::QueueingStrategy::kStrictFIFO;
  auto best =
      CQ("cq-besteffortfifo", "", {Group({"cpu"}, {Flavor("default-flavor", {{"cpu", "10"}})})});
  m.cluster_queues = {strict, best};
  m.local_queues = {LQ("default", "lq-strictfifo", "cq-strictfifo"),
                    LQ("default", "lq-besteffortfifo", "cq-besteffortfifo")};
  Harness h(m);
  for (const char* s : {"strictfifo", "besteffortfifo"}) {
    std::string lq = std::string("lq-") + s;
    std::string p = std::string("default/") + s;
    h.Submit(W(p + "-running", lq).PodSet("main", 1, {{"cpu", "6"}}), 0);
    h.Run(0);
    h.Submit(W(p + "-big", lq).PodSet("main", 1, {{"cpu", "8"}}), 1);
    h.Run(1);
    h.Submit(W(p + "-small", lq).PodSet("main", 1, {{"cpu", "2"}}), 2);
    h.Run(2);
  }
  EXPECT_TRUE(h.Running("default/strictfifo-running"));
  EXPECT_FALSE(h.Running("default/strictfifo-big"));
  EXPECT_FALSE(h.Running("default/strictfifo-small"));
  EXPECT_TRUE(h.Running("default/besteffortfifo-running"));
  EXPECT_FALSE(h.Running("default/besteffortfifo-big"));
  EXPECT_TRUE(h.Running("default/besteffortfifo-small"));
  EXPECT_EQ(h.admitter->PendingReason("default/strictfifo-small")->reason, "StrictFIFOBlocked");
  EXPECT_NE(h.Reason("default/strictfifo-small").find("waiting behind default/strictfifo-big"),
            std::string::npos);
}

TEST(ConformanceTest, Case10FlavorFallback) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu-a100", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}),
                        RF("gpu-t4-spot", {{"nvidia.com/gpu.product", "NVIDIA-T4"}})};
  m.cluster_queues = {
      CQ("ml-cluster-queue", "",
         {Group({"cpu", "memory", "nvidia.com/gpu"},
                {Flavor("gpu-a100", {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}}),
                 Flavor("gpu-t4-spot",
                        {{"cpu", "128"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "16"}})})})};
  m.local_queues = {LQ("ml-training", "ml-research-queue", "ml-cluster-queue")};
  Harness h(m);
  h.Submit(W("ml-training/first", "ml-research-queue")
               .PodSet("main", 1, {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "8"}}),
           0);
  h.Run(0);
  h.Submit(W("ml-training/second", "ml-research-queue")
               .PodSet("main", 1, {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "4"}}),
           5);
  h.Run(5);
  ASSERT_TRUE(h.Running("ml-training/first"));
  ASSERT_TRUE(h.Running("ml-training/second"));
  EXPECT_EQ(h.LastAdmit("ml-training/first")->assignment.pod_sets[0].flavors.at("nvidia.com/gpu"),
            "gpu-a100");
  const auto& f = h.LastAdmit("ml-training/second")->assignment.pod_sets[0].flavors;
  EXPECT_EQ(f.at("nvidia.com/gpu"), "gpu-t4-spot");
  EXPECT_EQ(f.at("cpu"), "gpu-t4-spot");
}

}  // namespace
}  // namespace muster::admission::testing
