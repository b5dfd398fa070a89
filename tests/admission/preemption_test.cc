// Classical preemption, Volcano reclaim and fair sharing: who is evicted and why.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

using model::PreemptionPolicy;

model::ManifestSet Cohort2(model::ClusterQueuePreemption a_policy) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto a = GpuCQ("a", "co", "4");
  a.preemption = a_policy;
  m.cluster_queues = {a, GpuCQ("b", "co", "4")};
  m.local_queues = {LQ("ns", "a", "a"), LQ("ns", "b", "b")};
  return m;
}

// One ClusterQueue "a" of `gpus` GPUs, no cohort, preempting lower priorities within
// it; LocalQueue ns/a.
model::ManifestSet OneQueuePreemptingLower(const char* gpus) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto cq = GpuCQ("a", "", gpus);
  cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ns", "a", "a")};
  return m;
}

TEST(PreemptionTest, LowerOrNewerEqualPriorityTakesNewestEqual) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto cq = GpuCQ("a", "", "4");
  cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerOrNewerEqualPriority;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ns", "a", "a")};
  Harness h(m);
  h.Submit(Gpus("ns/newer", "a", "4", 5, 2), 10);
  h.Run(10);
  h.Submit(Gpus("ns/older", "a", "4", 5, 1), 0);  // created earlier, arrives late
  h.Run(10);
  EXPECT_EQ(h.evictions["ns/newer"], std::vector<std::string>{"InClusterQueue by ns/older"});
}

// A pending workload's reason follows it through a preemption: waiting in its
// queue, preempting (its victims named), the victim requeued after its eviction and
// then short of quota; each change is reported once, by the cycle that made it.
TEST(PreemptionTest, PendingReasonsThroughAPreemption) {
  Harness h(OneQueuePreemptingLower("4"));
  h.Submit(Gpus("ns/low", "a", "4", 0, 1));
  h.Run();
  h.Submit(Gpus("ns/high", "a", "4", 10, 2));
  auto reason = h.admitter->PendingReason("ns/high");
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->reason, "Pending");
  EXPECT_EQ(reason->message, "waiting for admission in ClusterQueue a");

  std::vector<Decision> ds = h.admitter->RunCycle(0, h.oracle);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].kind, Decision::Kind::kPreempt);
  EXPECT_EQ(ds[0].message, "Pending the preemption of 1 workload: ns/low");
  reason = h.admitter->PendingReason("ns/high");
  EXPECT_EQ(reason->reason, "Preempting");
  EXPECT_EQ(reason->message, ds[0].message);

  h.oracle.Release("ns/low");
  h.admitter->Requeue("ns/low", 0);
  reason = h.admitter->PendingReason("ns/low");
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->reason, "Evicted");
  EXPECT_EQ(reason->message, "requeued after eviction; waiting for admission in ClusterQueue a");

  ds = h.admitter->RunCycle(0, h.oracle);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].kind, Decision::Kind::kAdmit);
  EXPECT_EQ(ds[0].workload_key, "ns/high");
  EXPECT_FALSE(h.admitter->PendingReason("ns/high").has_value());
  EXPECT_EQ(ds[1].kind, Decision::Kind::kPending);
  EXPECT_EQ(ds[1].workload_key, "ns/low");
  EXPECT_EQ(ds[1].reason, "QuotaExceeded");
  reason = h.admitter->PendingReason("ns/low");
  EXPECT_EQ(reason->reason, ds[1].reason);
  EXPECT_EQ(reason->message, ds[1].message);
  EXPECT_TRUE(h.admitter->RunCycle(0, h.oracle).empty()) << "unchanged: not reported again";
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(PreemptionTest, EqualPriorityNotPreemptedUnderLowerPriority) {
  Harness h(OneQueuePreemptingLower("4"));
  h.Submit(Gpus("ns/x", "a", "4", 5, 1));
  h.Run();
  h.Submit(Gpus("ns/y", "a", "4", 5, 2));
  h.Run();
  EXPECT_TRUE(h.evictions.empty());
  EXPECT_FALSE(h.Running("ns/y"));
}

TEST(PreemptionTest, MinimalSetAddsBackWhatIsNotNeeded) {
  Harness h(OneQueuePreemptingLower("8"));
  h.Submit(Gpus("ns/big", "a", "4", 1, 1));
  h.Submit(Gpus("ns/s1", "a", "2", 1, 2));
  h.Submit(Gpus("ns/s2", "a", "2", 1, 3));
  h.Run();
  // Order: priority equal, newest admitted first: s2, s1, big. Removing s2, s1
  // frees 4: enough for 3 -> only those needed; adding back s2 leaves 2 < 3.
  h.Submit(Gpus("ns/hi", "a", "3", 10, 4));
  h.Run();
  EXPECT_TRUE(h.Running("ns/hi"));
  EXPECT_TRUE(h.Running("ns/big"));
  EXPECT_EQ(h.evictions.count("ns/s1") + h.evictions.count("ns/s2"), 2u);
}

TEST(PreemptionTest, ReclaimLowerPriorityOnlyFromBorrowers) {
  model::ClusterQueuePreemption p;
  p.reclaim_within_cohort = PreemptionPolicy::kLowerPriority;
  Harness h(Cohort2(p));
  h.Submit(Gpus("ns/b-hi", "b", "6", 100, 1));  // borrows 2, priority too high
  h.Run();
  h.Submit(Gpus("ns/a1", "a", "4", 10, 2));
  h.Run();
  EXPECT_TRUE(h.evictions.empty());
  EXPECT_NE(h.Reason("ns/a1").find("insufficient unused quota"), std::string::npos);
}

TEST(PreemptionTest, NeverPreemptingPriorityClass) {
  model::ClusterQueuePreemption p;
  p.reclaim_within_cohort = PreemptionPolicy::kAny;
  Harness h(Cohort2(p));
  h.Submit(Gpus("ns/b", "b", "8", 0, 1));
  h.Run();
  h.Submit(Gpus("ns/a", "a", "4", 10, 2).NeverPreempts());
  h.Run();
  EXPECT_TRUE(h.evictions.empty());
  EXPECT_NE(h.Reason("ns/a").find("never preempts"), std::string::npos);
}

TEST(PreemptionTest, BorrowWithinCohortBelowThreshold) {
  model::ClusterQueuePreemption p;
  p.reclaim_within_cohort = PreemptionPolicy::kAny;
  p.borrow_within_cohort.policy = PreemptionPolicy::kLowerPriority;
  p.borrow_within_cohort.max_priority_threshold = 50;
  Harness h(Cohort2(p));
  h.Submit(Gpus("ns/a-own", "a", "2", 100, 1));
  h.Run();
  h.Submit(Gpus("ns/b-low", "b", "6", 10, 2));  // borrows 2 of a's
  h.Run();
  // a needs 6 > its nominal 4: it may preempt b-low (priority 10 < 51) while borrowing.
  h.Submit(Gpus("ns/a-more", "a", "4", 100, 3));
  h.Run();
  EXPECT_EQ(h.evictions["ns/b-low"],
            std::vector<std::string>{"InCohortReclaimWhileBorrowing by ns/a-more"});
  EXPECT_TRUE(h.Running("ns/a-more"));
}

TEST(PreemptionTest, PhysicalShortfallPreemptsLowerPriority) {
  Harness h(OneQueuePreemptingLower("16"),
            FakeOracle(ResourceList::FromQuantities({{"nvidia.com/gpu", Q("8")}})));
  h.Submit(Gpus("ns/low", "a", "6", 0, 1));
  h.Run();
  h.Submit(Gpus("ns/high", "a", "4", 10, 2));
  h.Run();
  EXPECT_EQ(h.evictions["ns/low"], std::vector<std::string>{"InClusterQueue by ns/high"});
  EXPECT_TRUE(h.Running("ns/high"));
}

TEST(PreemptionTest, NoOverlappingPreemptionsInOneCycle) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  for (const char* n : {"a", "c"}) {
    auto cq = GpuCQ(n, "co", "4");
    cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
    m.cluster_queues.push_back(cq);
    m.local_queues.push_back(LQ("ns", n, n));
  }
  m.cluster_queues.push_back(GpuCQ("b", "co", "0"));
  m.local_queues.push_back(LQ("ns", "b", "b"));
  Harness h(m);
  h.Submit(Gpus("ns/b", "b", "8", 0, 1));
  h.Run();
  h.Submit(Gpus("ns/a", "a", "4", 0, 2));
  h.Submit(Gpus("ns/c", "c", "4", 0, 3));
  auto ds = h.admitter->RunCycle(0, h.oracle);
  int preempts = 0;
  for (const auto& d : ds) preempts += d.kind == Decision::Kind::kPreempt;
  EXPECT_EQ(preempts, 1);
  EXPECT_EQ(h.admitter->PendingReason("ns/c")->message,
            "Workload has overlapping preemption targets with another workload");
}

TEST(VolcanoTest, CapabilityIsHard) {
  model::ManifestSet m;
  auto q = VQ("q", 1);
  q.capability["nvidia.com/gpu"] = Q("2");
  m.volcano_queues = {q};
  m.nodes = {GpuNode("n", "8")};
  Harness h(m);
  for (int i = 0; i < 3; ++i)
    h.Submit(W("ns/j" + std::to_string(i), "")
                 .PodSet("w", 1, {{"nvidia.com/gpu", "1"}})
                 .Volcano("q")
                 .Order(i));
  h.Run();
  EXPECT_FALSE(h.Running("ns/j2"));
  EXPECT_EQ(h.Reason("ns/j2"),
            "QueueQuotaExceeded: insufficient nvidia.com/gpu in Volcano queue q: "
            "capability 2, allocated 2, request 1");
}

TEST(VolcanoTest, ReclaimFromOverusedReclaimableQueueOnly) {
  for (bool reclaimable : {true, false}) {
    model::ManifestSet m;
    m.volcano_queues = {VQ("idle", 1), VQ("greedy", 1, reclaimable)};
    m.nodes = {GpuNode("n", "4")};
    Harness h(m, FakeOracle(ResourceList::FromQuantities({{"nvidia.com/gpu", Q("4")}})));
    for (int i = 0; i < 4; ++i)
      h.Submit(W("g/j" + std::to_string(i), "")
                   .PodSet("w", 1, {{"nvidia.com/gpu", "1"}})
                   .Volcano("greedy")
                   .Order(i));
    h.Run();
    ASSERT_TRUE(h.Running("g/j3"));  // alone, greedy deserves everything
    h.Submit(W("i/x", "").PodSet("w", 1, {{"nvidia.com/gpu", "1"}}).Volcano("idle").Order(10));
    h.Run();
    EXPECT_EQ(h.Running("i/x"), reclaimable);
    if (reclaimable) {
      EXPECT_EQ(h.evictions["g/j3"], std::vector<std::string>{"VolcanoReclaim by i/x"});
    }
  }
}

TEST(VolcanoTest, GuaranteeRaisesDeserved) {
  model::ManifestSet m;
  auto small = VQ("small", 1);
  small.guarantee["nvidia.com/gpu"] = Q("6");
  m.volcano_queues = {small, VQ("big", 3)};
  m.nodes = {GpuNode("n", "8")};
  Harness h(m);
  for (int i = 0; i < 8; ++i) {
    h.Submit(W("s/j" + std::to_string(i), "")
                 .PodSet("w", 1, {{"nvidia.com/gpu", "1"}})
                 .Volcano("small")
                 .Order(i));
    h.Submit(W("b/j" + std::to_string(i), "")
                 .PodSet("w", 1, {{"nvidia.com/gpu", "1"}})
                 .Volcano("big")
                 .Order(100 + i));
  }
  h.Run();
  int small_running = 0;
  for (int i = 0; i < 8; ++i) small_running += h.Running("s/j" + std::to_string(i));
  EXPECT_EQ(small_running, 6);
}

TEST(FairSharingTest, LowerShareGoesFirstAndReclaimsFromHighestShare) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  for (const char* n : {"a", "b", "c"}) {
    auto cq = GpuCQ(n, "co", "2");
    cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
    m.cluster_queues.push_back(cq);
    m.local_queues.push_back(LQ("ns", n, n));
  }
  m.kueue_config = model::KueueConfiguration{};
  m.kueue_config->fair_sharing.enable = true;
  Harness h(m);
  for (int i = 0; i < 3; ++i) h.Submit(Gpus("ns/a" + std::to_string(i), "a", "1", 0, i));
  for (int i = 0; i < 3; ++i) h.Submit(Gpus("ns/b" + std::to_string(i), "b", "1", 0, 10 + i));
  h.Run();
  // 6 GPUs in the cohort: a and b each borrow 1 of c's 2.
  EXPECT_TRUE(h.Running("ns/a2"));
  EXPECT_TRUE(h.Running("ns/b2"));
  h.Submit(Gpus("ns/c0", "c", "2", 0, 20));
  h.Run();
  EXPECT_TRUE(h.Running("ns/c0"));
  int fair = 0;
  for (const auto& [k, v] : h.evictions) fair += v[0].rfind("InCohortFairSharing", 0) == 0;
  EXPECT_EQ(fair, 2);
}

}  // namespace
}  // namespace muster::admission::testing
