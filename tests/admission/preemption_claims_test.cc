// What a preemption holds until it has done its work: the quota its victims free
// (its claim). That its victims preempt nobody at the same instant is shown by
// tests/sim/cohort_churn_test.cc, which loops in several seeds without it.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

using model::PreemptionPolicy;

model::ClusterQueue ClaimsCQ(const std::string& name, const char* nominal) {
  return CQ(name, "co",
            {Group({"nvidia.com/gpu"}, {Flavor("gpu", {R("nvidia.com/gpu", nominal)})})});
}

// A borrows 2 from B. A's preemptor (borrowing too) evicts A's own low-priority
// workload; B's pending head does not borrow, so Kueue's order tries it first once
// the victim is gone. Without the claim it took the 2 GPUs, the preemptor gave up
// and its victim came back: the preemptor's claim keeps them.
TEST(PreemptionClaimTest, QuotaAVictimFreesGoesToItsPreemptor) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  auto a = ClaimsCQ("a", "4");
  a.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  m.cluster_queues = {a, ClaimsCQ("b", "4")};
  m.local_queues = {LQ("ns", "a", "a"), LQ("ns", "b", "b")};
  Harness h(m);
  h.Submit(Gpus("ns/a-low", "a", "2", 1, 1));
  h.Submit(Gpus("ns/a-mid", "a", "4", 5, 2));
  h.Submit(Gpus("ns/b-run", "b", "2", 5, 3));
  h.Run();
  ASSERT_TRUE(h.Running("ns/a-low") && h.Running("ns/a-mid") && h.Running("ns/b-run"));

  h.Submit(Gpus("ns/b-wait", "b", "2", 5, 4));
  h.Submit(Gpus("ns/a-hi", "a", "2", 10, 5));
  h.Run();
  EXPECT_TRUE(h.Running("ns/a-hi"));
  EXPECT_FALSE(h.Running("ns/b-wait"));
  EXPECT_EQ(h.evictions["ns/a-low"], std::vector<std::string>{"InClusterQueue by ns/a-hi"});
  EXPECT_EQ(h.evictions.size(), 1u);
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

}  // namespace
}  // namespace muster::admission::testing
