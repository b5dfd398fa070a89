// Admitter::Adopt: taking over workloads that already run (server restart,
// configuration change). Adopted quota must count exactly like admitted quota, and
// a refused adoption must leave the admitter as it was.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

W OrderedGpus(const std::string& key, const std::string& lq, const std::string& n, int64_t order) {
  W w(key, lq);
  w.PodSet("main", 1, {{"nvidia.com/gpu", n}}).Order(order);
  return w;
}

// Every pod set with its full count on the given flavors (resource -> flavor).
Assignment Asg(const model::Workload& wl, const FlatMap<std::string, std::string>& flavors) {
  Assignment a;
  for (const auto& ps : wl.pod_sets) a.pod_sets.push_back({ps.name, ps.count, flavors});
  return a;
}

const FlatMap<std::string, std::string> kOnGpu = {{"nvidia.com/gpu", "gpu"}};

// ClusterQueue a (4 GPUs, may borrow 4 more) and b (4 GPUs) share cohort "co".
model::ManifestSet Cohort() {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  m.cluster_queues = {GpuCQ("a", "co", "4", "4"), GpuCQ("b", "co", "4")};
  m.local_queues = {LQ("ns", "a", "a"), LQ("ns", "b", "b")};
  return m;
}

void ExpectInvariants(const Harness& h) {
  auto broken = h.admitter->CheckInvariants();
  EXPECT_TRUE(broken.empty()) << broken.front();
}

TEST(AdoptTest, KueueBorrowedQuotaCountsLikeAdmitted) {
  Harness h(Cohort());
  model::Workload x = OrderedGpus("ns/x", "a", "6", 1);  // 4 own + 2 borrowed from b
  ASSERT_TRUE(h.admitter->Adopt(x, Asg(x, kOnGpu), 0).ok());
  ExpectInvariants(h);
  EXPECT_EQ(h.admitter->QueueOf("ns/x").cluster_queue, "a");
  EXPECT_FALSE(h.admitter->PendingReason("ns/x").has_value()) << "adopted = admitted";

  // The cohort has 8 GPUs, 6 adopted: b's 4-GPU job waits, its 2-GPU job fits exactly.
  h.Submit(OrderedGpus("ns/y", "b", "4", 2));
  h.Submit(OrderedGpus("ns/z", "b", "2", 3));
  h.Run();
  EXPECT_FALSE(h.Running("ns/y"));
  EXPECT_EQ(h.Reason("ns/y").rfind("QuotaExceeded", 0), 0u) << h.Reason("ns/y");
  EXPECT_TRUE(h.Running("ns/z"));
  EXPECT_EQ(h.LastAdmit("ns/x"), nullptr) << "an adopted workload is never admitted again";

  // Nothing is left in the cohort: one more GPU is refused and nothing changes.
  model::Workload w = OrderedGpus("ns/w", "a", "1", 4);
  Status st = h.admitter->Adopt(w, Asg(w, kOnGpu), 0);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("exceeds what ClusterQueue a may use now (0)"), std::string::npos)
      << st.message();
  EXPECT_EQ(h.admitter->QueueOf("ns/w").cluster_queue, "") << "a refused workload is not kept";
  ExpectInvariants(h);

  // Removing the adopted workload frees its quota for b's waiting job.
  h.Finish("ns/x");
  h.Run();
  EXPECT_TRUE(h.Running("ns/y"));
  ExpectInvariants(h);
}

TEST(AdoptTest, KueueBorrowingLimitIsHonored) {
  Harness h(Cohort());
  // a may use 4 nominal + 4 borrowed = 8, even though the cohort has 8 free.
  model::Workload big = OrderedGpus("ns/big", "a", "9", 1);
  EXPECT_EQ(h.admitter->Adopt(big, Asg(big, kOnGpu), 0).code(), StatusCode::kFailedPrecondition);
  model::Workload fits = OrderedGpus("ns/fits", "a", "8", 2);
  EXPECT_TRUE(h.admitter->Adopt(fits, Asg(fits, kOnGpu), 0).ok());
  ExpectInvariants(h);
  h.Submit(OrderedGpus("ns/b1", "b", "1", 3));
  h.Run();
  EXPECT_FALSE(h.Running("ns/b1")) << "b lent all of its 4 GPUs to a";
}

TEST(AdoptTest, PendingWorkloadLeavesItsQueue) {
  Harness h(Cohort());
  model::Workload p = OrderedGpus("ns/p", "a", "4", 1);
  h.Submit(p, 5);
  ASSERT_TRUE(h.admitter->Adopt(p, Asg(p, kOnGpu), 10).ok());
  h.Run();
  EXPECT_EQ(h.LastAdmit("ns/p"), nullptr) << "not admitted a second time from its queue";
  EXPECT_FALSE(h.admitter->PendingReason("ns/p").has_value());
  ExpectInvariants(h);

  Status again = h.admitter->Adopt(p, Asg(p, kOnGpu), 10);
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(again.message(), "cannot adopt ns/p: it is admitted already");

  // a's own 4 GPUs are used; 4 more may be borrowed from b, 5 may not.
  h.Submit(OrderedGpus("ns/q", "a", "5", 2));
  h.Run();
  EXPECT_FALSE(h.Running("ns/q"));
  h.Finish("ns/p");
  h.Run();
  EXPECT_TRUE(h.Running("ns/q"));
  ExpectInvariants(h);
}

TEST(AdoptTest, RefusalsChangeNothing) {
  Harness h(Cohort());
  model::Workload p = OrderedGpus("ns/p", "a", "2", 1);
  h.Submit(p);

  struct Case {
    std::string name;
    model::Workload wl;
    Assignment assignment;
    StatusCode code;
    std::string message;
  };
  model::Workload unknown_lq = OrderedGpus("ns/u", "nope", "1", 2);
  Assignment too_many = Asg(p, kOnGpu);
  too_many.pod_sets[0].count = 2;
  std::vector<Case> cases = {
      {"unknown LocalQueue", unknown_lq, Asg(unknown_lq, kOnGpu), StatusCode::kFailedPrecondition,
       "cannot adopt ns/u: LocalQueue nope doesn't exist"},
      {"flavor not in the queue", p, Asg(p, {{"nvidia.com/gpu", "other"}}),
       StatusCode::kFailedPrecondition,
       "cannot adopt ns/p: flavor other of nvidia.com/gpu is not in the quota of ClusterQueue a"},
      {"no flavor for a resource", p, Asg(p, {}), StatusCode::kFailedPrecondition,
       "cannot adopt ns/p: pod set main has no flavor for nvidia.com/gpu"},
      {"more pods than the pod set", p, too_many, StatusCode::kInvalidArgument,
       "cannot adopt ns/p: 2 pods of pod set main, which has 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status st = h.admitter->Adopt(c.wl, c.assignment, 0);
    EXPECT_EQ(st.code(), c.code);
    EXPECT_EQ(st.message(), c.message);
    ExpectInvariants(h);
  }
  EXPECT_EQ(h.admitter->QueueOf("ns/u").cluster_queue, "");
  ASSERT_TRUE(h.admitter->PendingReason("ns/p").has_value()) << "still pending";
  h.Run();
  EXPECT_TRUE(h.Running("ns/p")) << "admitted normally after the refusals";
}

TEST(AdoptTest, VolcanoChargesAllocatedWithinCapability) {
  model::ManifestSet m;
  auto q = VQ("q", 1);
  q.capability["nvidia.com/gpu"] = Q("4");
  m.volcano_queues = {q};
  m.nodes = {GpuNode("n", "8")};
  Harness h(m);
  auto job = [](const std::string& key, const std::string& gpus, int64_t order) {
    return model::Workload(
        W(key, "").PodSet("w", 1, {{"nvidia.com/gpu", gpus}}).Volcano("q").Order(order));
  };
  model::Workload a = job("ns/a", "3", 1);
  ASSERT_TRUE(h.admitter->Adopt(a, Asg(a, {}), 0).ok());
  EXPECT_EQ(h.admitter->QueueOf("ns/a").cluster_queue, "q");
  ExpectInvariants(h);

  model::Workload b = job("ns/b", "2", 2);
  Status st = h.admitter->Adopt(b, Asg(b, {}), 0);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(),
            "cannot adopt ns/b: 2 nvidia.com/gpu exceeds the capability of Volcano queue q (4, "
            "allocated 3)");

  // Exactly 3 GPUs are allocated: one more fits, the next does not.
  h.Submit(job("ns/c", "1", 3));
  h.Submit(job("ns/d", "1", 4));
  h.Run();
  EXPECT_TRUE(h.Running("ns/c"));
  EXPECT_FALSE(h.Running("ns/d"));
  EXPECT_EQ(h.Reason("ns/d"),
            "QueueQuotaExceeded: insufficient nvidia.com/gpu in Volcano queue q: capability 4, "
            "allocated 4, request 1");
  h.Finish("ns/a");
  h.Run();
  EXPECT_TRUE(h.Running("ns/d"));
  ExpectInvariants(h);
}

TEST(AdoptTest, NoQueueWorkloadIsRecordedAdmitted) {
  model::ManifestSet m;
  m.nodes = {GpuNode("n", "8")};
  Harness h(m);
  model::Workload free = W("ns/free", "").PodSet("w", 2, {{"nvidia.com/gpu", "1"}});
  ASSERT_TRUE(h.admitter->Adopt(free, Asg(free, {}), 0).ok());
  EXPECT_FALSE(h.admitter->PendingReason("ns/free").has_value());
  h.Run();
  EXPECT_EQ(h.LastAdmit("ns/free"), nullptr);
  ExpectInvariants(h);
}

}  // namespace
}  // namespace muster::admission::testing
