// Kueue partial admission (kueue.x-k8s.io/job-min-parallelism): when the full
// count fits neither quota nor nodes, the largest count down to minCount that does
// is admitted, and only that much quota is charged.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

struct PartialCase {
  std::string name;
  const char* quota;
  std::optional<std::string> node_cpu;  // nullopt: nodes always fit
  int32_t count;
  int32_t min_count;
  bool annotated;
  int32_t want_count;  // 0: stays pending
  std::string want_reason;
};

TEST(PartialAdmissionTest, Table) {
  std::vector<PartialCase> cases = {
      {"quota allows 4 of 6", "4", std::nullopt, 6, 2, true, 4, ""},
      {"full count fits: no reduction", "8", std::nullopt, 6, 2, true, 6, ""},
      {"nodes allow 3 of 6", "10", "3", 6, 2, true, 3, ""},
      {"minCount above what fits", "4", std::nullopt, 6, 5, true, 0,
       "QuotaExceeded: couldn't assign flavors to pod set main: insufficient quota for cpu in "
       "flavor default, request 6 > available 4 in ClusterQueue cq"},
      {"gang minimum without the annotation never shrinks", "4", std::nullopt, 6, 2, false, 0,
       "QuotaExceeded: couldn't assign flavors to pod set main: insufficient quota for cpu in "
       "flavor default, request 6 > available 4 in ClusterQueue cq"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeOracle oracle;
    if (c.node_cpu) oracle = FakeOracle(ResourceList::FromQuantities({{"cpu", Q(*c.node_cpu)}}));
    Harness h(CpuQueue(c.quota), oracle);
    W w("ns/job", "lq");
    w.PodSet("main", c.count, {{"cpu", "1"}});
    if (c.annotated) {
      w.MinParallelism(c.min_count);
    } else {
      w.wl.pod_sets.back().min_count = c.min_count;
    }
    h.Submit(w);
    h.Run();
    if (c.want_count == 0) {
      EXPECT_FALSE(h.Running("ns/job"));
      EXPECT_EQ(h.Reason("ns/job"), c.want_reason);
      continue;
    }
    ASSERT_TRUE(h.Running("ns/job"));
    const Decision* d = h.LastAdmit("ns/job");
    ASSERT_EQ(d->assignment.pod_sets.size(), 1u);
    EXPECT_EQ(d->assignment.pod_sets[0].count, c.want_count);
  }
}

TEST(PartialAdmissionTest, ChargesOnlyTheAdmittedCount) {
  Harness h(CpuQueue("4"));
  h.Submit(W("ns/job", "lq").PodSet("main", 6, {{"cpu", "1"}}).MinParallelism(1).Order(1));
  h.Run();
  ASSERT_EQ(h.LastAdmit("ns/job")->assignment.pod_sets[0].count, 4);
  // 4 of 4 used: a 1-cpu job waits; once the partial job finishes it runs.
  h.Submit(W("ns/next", "lq").PodSet("main", 1, {{"cpu", "1"}}).Order(2));
  h.Run();
  EXPECT_FALSE(h.Running("ns/next"));
  h.Finish("ns/job");
  h.Run();
  EXPECT_TRUE(h.Running("ns/next"));
}

TEST(PartialAdmissionTest, PreferredOverPreemptionOnlyWhenNothingCanBePreempted) {
  // Kueue tries smaller counts only when the full count cannot preempt its way in:
  // here a lower-priority workload can be preempted, so the full count wins.
  auto m = CpuQueue("6");
  m.cluster_queues[0].preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
  Harness h(m);
  h.Submit(W("ns/low", "lq").PodSet("main", 1, {{"cpu", "2"}}).Order(1));
  h.Run();
  h.Submit(
      W("ns/job", "lq").PodSet("main", 6, {{"cpu", "1"}}).MinParallelism(2).Priority(10).Order(2));
  h.Run();
  EXPECT_EQ(h.evictions["ns/low"], std::vector<std::string>{"InClusterQueue by ns/job"});
  EXPECT_EQ(h.LastAdmit("ns/job")->assignment.pod_sets[0].count, 6);
}

}  // namespace
}  // namespace muster::admission::testing
