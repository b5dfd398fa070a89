// Fair sharing in a cohort tree of depth 2 (Kueue's hierarchical cohorts): Cohort
// fairSharing.weight scales its subtree's share, and the two preemption strategies
// decide whether a borrowing preemptor may take from another team.
#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

using model::FairSharingPreemptionStrategy;
using model::PreemptionPolicy;
constexpr auto kFinal = FairSharingPreemptionStrategy::kLessThanOrEqualToFinalShare;
constexpr auto kInitial = FairSharingPreemptionStrategy::kLessThanInitialShare;

model::Cohort CohortNode(const std::string& name, const std::string& parent, int64_t weight_milli) {
  model::Cohort c;
  c.meta.name = name;
  c.parent = parent;
  c.fair_sharing.weight_milli = weight_milli;
  return c;
}

model::ClusterQueue ReclaimingCQ(const std::string& name, const std::string& cohort) {
  auto cq =
      CQ(name, cohort, {Group({"nvidia.com/gpu"}, {Flavor("gpu", {R("nvidia.com/gpu", "3")})})});
  cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
  return cq;
}

// org -> {team-a -> a, team-b -> b, c}: 9 GPUs, 3 nominal each, all lent.
model::ManifestSet Org(std::vector<FairSharingPreemptionStrategy> strategies, int64_t weight_a,
                       int64_t weight_b) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  m.cohorts = {CohortNode("org", "", 1000), CohortNode("team-a", "org", weight_a),
               CohortNode("team-b", "org", weight_b)};
  m.cluster_queues = {ReclaimingCQ("a", "team-a"), ReclaimingCQ("b", "team-b"),
                      ReclaimingCQ("c", "org")};
  m.local_queues = {LQ("ns", "a", "a"), LQ("ns", "b", "b"), LQ("ns", "c", "c")};
  m.kueue_config = model::KueueConfiguration{};
  m.kueue_config->fair_sharing.enable = true;
  m.kueue_config->fair_sharing.preemption_strategies = std::move(strategies);
  return m;
}

struct Case {
  std::string name;
  std::vector<FairSharingPreemptionStrategy> strategies;
  int64_t weight_a;  // milli
  int64_t weight_b;
  bool admitted;
  size_t victims;
};

// team-b runs 4 x 2 GPUs (borrows 5 of 9); a asks for 5 (would borrow 2).
// Shares (per mille of 9, over weight): a after admission 222; b 555, 333 after
// one eviction, 111 after two. LessThanOrEqualToFinalShare takes one (222 <= 333)
// but not the second (222 > 111); LessThanInitialShare then takes it (222 < 333).
TEST(FairSharingHierarchyTest, StrategiesAndCohortWeights) {
  std::vector<Case> cases = {
      {"both strategies", {kFinal, kInitial}, 1000, 1000, true, 2},
      {"final share only", {kFinal}, 1000, 1000, false, 0},
      {"initial share only", {kInitial}, 1000, 1000, true, 2},
      // Weight 2 halves team-b's share (277, 166): a's 222 passes neither rule twice.
      {"team-b weight 2", {kFinal, kInitial}, 1000, 2000, false, 0},
      // Weight 0: a borrowing team-b has an infinite share and always yields.
      {"team-b weight 0", {kFinal, kInitial}, 1000, 0, true, 2},
      // Weight 0 on the preemptor's team: its share is infinite, it never reclaims.
      {"team-a weight 0", {kFinal, kInitial}, 0, 1000, false, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(Org(c.strategies, c.weight_a, c.weight_b));
    for (int i = 0; i < 4; ++i) {
      W w("ns/b" + std::to_string(i), "b");
      w.PodSet("main", 1, {{"nvidia.com/gpu", "2"}}).Order(i);
      h.Submit(w);
    }
    h.Run();
    ASSERT_TRUE(h.Running("ns/b3"));
    W a("ns/a", "a");
    a.PodSet("main", 1, {{"nvidia.com/gpu", "5"}}).Order(10);
    h.Submit(a);
    h.Run();
    EXPECT_EQ(h.Running("ns/a"), c.admitted);
    size_t victims = 0;
    for (const auto& [key, evs] : h.evictions) {
      for (const auto& e : evs) {
        EXPECT_EQ(e, "InCohortFairSharing by ns/a");
        ++victims;
      }
    }
    EXPECT_EQ(victims, c.victims);
  }
}

// Admission order at the root compares the teams, not the queues: with team-a's
// weight 2 its share after admission is half of team-b's, so a goes first even
// though b's workload is older.
TEST(FairSharingHierarchyTest, CohortWeightOrdersAdmission) {
  for (int64_t weight_a : {1000, 2000}) {
    SCOPED_TRACE(weight_a);
    auto m = Org({kFinal, kInitial}, weight_a, 1000);
    Harness h(m);
    h.Submit(W("ns/c", "c").PodSet("main", 1, {{"nvidia.com/gpu", "3"}}).Order(0));
    h.Submit(W("ns/b", "b").PodSet("main", 1, {{"nvidia.com/gpu", "5"}}).Order(1));
    h.Submit(W("ns/a", "a").PodSet("main", 1, {{"nvidia.com/gpu", "5"}}).Order(2));
    std::vector<Decision> ds = h.admitter->RunCycle(0, h.oracle);
    std::vector<std::string> admitted;
    for (const auto& d : ds) {
      if (d.kind == Decision::Kind::kAdmit) admitted.push_back(d.workload_key);
    }
    // c fits its nominal (share 0) and goes first; 6 GPUs remain for one of a, b.
    std::vector<std::string> want = {"ns/c", weight_a == 2000 ? "ns/a" : "ns/b"};
    EXPECT_EQ(admitted, want);
  }
}

}  // namespace
}  // namespace muster::admission::testing
