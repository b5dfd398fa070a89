// Quota recursion of kueue resource_node.go, worked by hand.
#include "admission/quota_tree.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace muster::admission {
namespace {

struct Tree {
  QuotaTree t;
  FrId gpu;
  Tree() { gpu = t.InternFr(0, kNvidiaGpu); }
};

TEST(QuotaTreeTest, NoParentIsNominalMinusUsage) {
  Tree x;
  NodeId cq = x.t.AddNode("cq", true);
  x.t.SetQuota(cq, x.gpu, {8, std::nullopt, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.Available(cq, x.gpu), 8);
  x.t.AddUsage(cq, x.gpu, 3);
  EXPECT_EQ(x.t.Available(cq, x.gpu), 5);
  EXPECT_EQ(x.t.PotentialAvailable(cq, x.gpu), 8);
}

TEST(QuotaTreeTest, RootFollowsEdgesAddedInAnyOrder) {
  // A queue joins its cohort before that cohort joins its parent, and an edge that
  // would close a cycle is ignored: roots are kept per node, not walked for.
  Tree x;
  NodeId top = x.t.AddNode("top", false);
  NodeId mid = x.t.AddNode("mid", false);
  NodeId cq = x.t.AddNode("cq", true);
  NodeId alone = x.t.AddNode("alone", true);
  x.t.SetParent(cq, mid);
  EXPECT_EQ(x.t.Root(cq), mid);
  x.t.SetParent(mid, top);
  x.t.SetParent(top, cq);  // a cycle: ignored
  x.t.SetQuota(cq, x.gpu, {4, std::nullopt, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.Root(cq), top);
  EXPECT_EQ(x.t.Root(mid), top);
  EXPECT_EQ(x.t.Root(top), top);
  EXPECT_EQ(x.t.Root(alone), alone);
  EXPECT_FALSE(x.t.HasParent(top));
  EXPECT_EQ(x.t.Parent(cq), mid);
  EXPECT_EQ(x.t.SubtreeQuota(top, x.gpu), 4);
}

TEST(QuotaTreeTest, BorrowingLimitCapsWhatTheParentGives) {
  // a: 8 nominal, borrowingLimit 2; b: 8 nominal. Cohort holds 16.
  Tree x;
  NodeId cohort = x.t.AddNode("ml", false);
  NodeId a = x.t.AddNode("a", true), b = x.t.AddNode("b", true);
  x.t.SetParent(a, cohort);
  x.t.SetParent(b, cohort);
  x.t.SetQuota(a, x.gpu, {8, 2, std::nullopt});
  x.t.SetQuota(b, x.gpu, {8, std::nullopt, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.SubtreeQuota(cohort, x.gpu), 16);
  EXPECT_EQ(x.t.Available(a, x.gpu), 10);  // min(16, 8 - 0 + 2)
  EXPECT_EQ(x.t.PotentialAvailable(a, x.gpu), 10);
  EXPECT_EQ(x.t.Available(b, x.gpu), 16);
  x.t.AddUsage(b, x.gpu, 12);  // b borrows 4
  EXPECT_EQ(x.t.Available(a, x.gpu), 4);
  EXPECT_TRUE(x.t.BorrowingWith(b, x.gpu, 0));
  x.t.RemoveUsage(b, x.gpu, 12);
  EXPECT_EQ(x.t.Usage(cohort, x.gpu), 0);
}

TEST(QuotaTreeTest, LendingLimitKeepsQuotaPrivate) {
  // Conformance 04: lender 8 nominal lendingLimit 2 (6 guaranteed); borrower 2.
  Tree x;
  NodeId pool = x.t.AddNode("pool", false);
  NodeId lender = x.t.AddNode("lender", true), borrower = x.t.AddNode("borrower", true);
  x.t.SetParent(lender, pool);
  x.t.SetParent(borrower, pool);
  x.t.SetQuota(lender, x.gpu, {8, std::nullopt, 2});
  x.t.SetQuota(borrower, x.gpu, {2, 10, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.GuaranteedQuota(lender, x.gpu), 6);
  EXPECT_EQ(x.t.SubtreeQuota(pool, x.gpu), 4);  // 2 lent + 2
  EXPECT_EQ(x.t.Available(borrower, x.gpu), 4);
  EXPECT_EQ(x.t.Available(lender, x.gpu), 10);  // 6 private + 4 in the pool
  x.t.AddUsage(borrower, x.gpu, 4);
  EXPECT_EQ(x.t.Available(borrower, x.gpu), 0);
  EXPECT_EQ(x.t.Available(lender, x.gpu), 6);
  // Lender usage within its guaranteed part is not stored in the pool.
  x.t.AddUsage(lender, x.gpu, 5);
  EXPECT_EQ(x.t.Usage(pool, x.gpu), 4);
  x.t.AddUsage(lender, x.gpu, 1);
  EXPECT_EQ(x.t.Usage(pool, x.gpu), 4);
  EXPECT_TRUE(x.t.CheckInvariants().empty());
}

TEST(QuotaTreeTest, LendingLimitInsideHierarchicalCohorts) {
  // root(0) <- mid (own 4, lendingLimit 2) <- {a: 4, b: 0}; root <- c: 0.
  Tree x;
  NodeId root = x.t.AddNode("root", false), mid = x.t.AddNode("mid", false);
  NodeId a = x.t.AddNode("a", true), b = x.t.AddNode("b", true), c = x.t.AddNode("c", true);
  x.t.SetParent(mid, root);
  x.t.SetParent(a, mid);
  x.t.SetParent(b, mid);
  x.t.SetParent(c, root);
  x.t.SetQuota(mid, x.gpu, {4, std::nullopt, 2});
  x.t.SetQuota(a, x.gpu, {4, std::nullopt, std::nullopt});
  x.t.SetQuota(b, x.gpu, {0, std::nullopt, std::nullopt});
  x.t.SetQuota(c, x.gpu, {0, std::nullopt, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.SubtreeQuota(mid, x.gpu), 8);
  EXPECT_EQ(x.t.GuaranteedQuota(mid, x.gpu), 6);
  EXPECT_EQ(x.t.SubtreeQuota(root, x.gpu), 2);
  EXPECT_EQ(x.t.Available(c, x.gpu), 2);  // only what mid lends
  EXPECT_EQ(x.t.Available(b, x.gpu), 8);  // mid's 6 private + root's 2
  x.t.AddUsage(c, x.gpu, 2);
  EXPECT_EQ(x.t.Available(b, x.gpu), 6);
  x.t.AddUsage(b, x.gpu, 6);
  EXPECT_EQ(x.t.Available(a, x.gpu), 0);
  EXPECT_EQ(x.t.Usage(root, x.gpu), 2);
  EXPECT_TRUE(x.t.CheckInvariants().empty());
}

TEST(QuotaTreeTest, CohortWithOwnQuota) {
  // A Cohort with 4 of its own and one ClusterQueue with 0: the queue borrows all 4.
  Tree x;
  NodeId cohort = x.t.AddNode("c", false), cq = x.t.AddNode("q", true);
  x.t.SetParent(cq, cohort);
  x.t.SetQuota(cohort, x.gpu, {4, std::nullopt, std::nullopt});
  x.t.SetQuota(cq, x.gpu, {0, std::nullopt, std::nullopt});
  x.t.Finalize();
  EXPECT_EQ(x.t.Available(cq, x.gpu), 4);
  EXPECT_TRUE(x.t.BorrowingWith(cq, x.gpu, 1));
}

TEST(QuotaTreeTest, DeepChainChargesUpOnlyBeyondGuaranteed) {
  Tree x;
  NodeId parent = -1, leaf = -1;
  for (int i = 0; i < 20; ++i) {
    NodeId n = x.t.AddNode("n" + std::to_string(i), i == 19);
    if (parent >= 0) x.t.SetParent(n, parent);
    x.t.SetQuota(n, x.gpu, {1, std::nullopt, std::nullopt});
    parent = n;
    leaf = n;
  }
  x.t.Finalize();
  EXPECT_EQ(x.t.Available(leaf, x.gpu), 20);
  x.t.AddUsage(leaf, x.gpu, 20);
  EXPECT_EQ(x.t.Available(leaf, x.gpu), 0);
  EXPECT_TRUE(x.t.CheckInvariants().empty());
}

TEST(QuotaTreeTest, InvariantsReportOverUse) {
  Tree x;
  NodeId cq = x.t.AddNode("cq", true);
  x.t.SetQuota(cq, x.gpu, {1, std::nullopt, std::nullopt});
  x.t.Finalize();
  x.t.AddUsage(cq, x.gpu, 2);
  auto inv = x.t.CheckInvariants();
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_NE(inv[0].find("ClusterQueue cq"), std::string::npos);
}

TEST(QuotaTreeTest, ReplacedQuotasRecomputeSubtreesAndWhatCohortsHold) {
  // Cohort ml (node 0) <- {a (1): 8 with `a_lending`, b (2): 4}; a uses 6.
  auto build = [](Tree& x, std::optional<int64_t> a_lending) {
    NodeId ml = x.t.AddNode("ml", false);
    NodeId a = x.t.AddNode("a", true), b = x.t.AddNode("b", true);
    x.t.SetParent(a, ml);
    x.t.SetParent(b, ml);
    x.t.SetQuota(a, x.gpu, {8, std::nullopt, a_lending});
    x.t.SetQuota(b, x.gpu, {4, std::nullopt, std::nullopt});
    x.t.Finalize();
    x.t.AddUsage(a, x.gpu, 6);
  };
  const NodeId ml = 0, a = 1, b = 2;
  Tree x;
  build(x, 8);
  EXPECT_EQ(x.t.Usage(ml, x.gpu), 6);  // nothing guaranteed: all of it in the cohort
  EXPECT_EQ(x.t.Available(b, x.gpu), 6);

  // a now keeps 6 to itself (lendingLimit 2): its usage leaves the cohort.
  ASSERT_TRUE(x.t.ReplaceQuotas(a, {{x.gpu, {8, std::nullopt, 2}}}).ok());
  EXPECT_EQ(x.t.SubtreeQuota(ml, x.gpu), 6);
  EXPECT_EQ(x.t.Usage(ml, x.gpu), 0);
  EXPECT_EQ(x.t.Available(b, x.gpu), 6);
  EXPECT_EQ(x.t.Available(a, x.gpu), 6);
  // The same as a tree built with these quotas and charged the same.
  Tree y;
  build(y, 2);
  for (NodeId n : {ml, a, b}) {
    EXPECT_EQ(x.t.SubtreeQuota(n, x.gpu), y.t.SubtreeQuota(n, y.gpu)) << n;
    EXPECT_EQ(x.t.Usage(n, x.gpu), y.t.Usage(n, y.gpu)) << n;
    EXPECT_EQ(x.t.Available(n, x.gpu), y.t.Available(n, y.gpu)) << n;
  }

  // Quota below what is in use is refused and changes nothing; an omitted pair
  // has no quota.
  Status refused = x.t.ReplaceQuotas(a, {});
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("exceeds"), std::string::npos) << refused.message();
  EXPECT_EQ(x.t.QuotaOf(a, x.gpu).nominal, 8);
  EXPECT_EQ(x.t.SubtreeQuota(ml, x.gpu), 6);
  EXPECT_TRUE(x.t.CheckInvariants().empty());
}

// Random cohort trees: quotas replaced in place read exactly as a tree built with
// the new quotas and charged the same, or, when refused, as before.
TEST(QuotaTreeTest, ReplacedQuotasMatchAFreshTreeOnRandomTrees) {
  std::mt19937_64 rng(7);
  auto random_quota = [&rng]() {
    Quota q;
    q.nominal = static_cast<int64_t>(rng() % 21);
    if (rng() % 3 == 0) q.borrowing_limit = static_cast<int64_t>(rng() % 11);
    if (rng() % 3 == 0) q.lending_limit = static_cast<int64_t>(rng() % (q.nominal + 1));
    return q;
  };
  int taken_count = 0, refused_count = 0;
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Nodes 0-2 cohorts (1 and 2 under 0), 3-8 ClusterQueues under a random cohort.
    std::vector<NodeId> parent = {-1, 0, 0};
    for (int c = 0; c < 6; ++c) parent.push_back(static_cast<NodeId>(rng() % 3));
    std::vector<std::vector<Quota>> quotas(parent.size(), std::vector<Quota>(2));
    for (auto& per_node : quotas) {
      for (auto& q : per_node) q = random_quota();
    }
    auto build = [&](QuotaTree& t, const std::vector<std::vector<Quota>>& qs) {
      std::vector<FrId> frs = {t.InternFr(0, kNvidiaGpu), t.InternFr(0, kCpu)};
      for (size_t n = 0; n < parent.size(); ++n) {
        t.AddNode("n" + std::to_string(n), n >= 3);
        if (parent[n] >= 0) t.SetParent(static_cast<NodeId>(n), parent[n]);
        for (size_t f = 0; f < frs.size(); ++f)
          t.SetQuota(static_cast<NodeId>(n), frs[f], qs[n][f]);
      }
      t.Finalize();
    };
    QuotaTree tree;
    build(tree, quotas);
    // Charges that fit, in order: (ClusterQueue, fr, amount).
    std::vector<std::tuple<NodeId, FrId, int64_t>> charges;
    for (int k = 0; k < 12; ++k) {
      const auto cq = static_cast<NodeId>(3 + rng() % 6);
      const auto fr = static_cast<FrId>(rng() % 2);
      const int64_t available = tree.Available(cq, fr);
      if (available <= 0) continue;
      const auto amount = static_cast<int64_t>(1 + rng() % available);
      tree.AddUsage(cq, fr, amount);
      charges.emplace_back(cq, fr, amount);
    }
    ASSERT_TRUE(tree.CheckInvariants().empty());
    const auto node = static_cast<NodeId>(rng() % parent.size());
    std::vector<std::vector<Quota>> edited = quotas;
    edited[node] = {random_quota(), random_quota()};
    const bool taken = tree.ReplaceQuotas(node, {{0, edited[node][0]}, {1, edited[node][1]}}).ok();
    ++(taken ? taken_count : refused_count);
    QuotaTree fresh;
    build(fresh, taken ? edited : quotas);
    for (const auto& [cq, fr, amount] : charges) fresh.AddUsage(cq, fr, amount);
    if (taken) {
      EXPECT_TRUE(fresh.CheckInvariants().empty());
    } else {
      QuotaTree refused;
      build(refused, edited);
      for (const auto& [cq, fr, amount] : charges) refused.AddUsage(cq, fr, amount);
      EXPECT_FALSE(refused.CheckInvariants().empty()) << "refused an edit that fits";
    }
    for (NodeId n = 0; n < tree.NodeCount(); ++n) {
      for (FrId fr = 0; fr < 2; ++fr) {
        EXPECT_EQ(tree.QuotaOf(n, fr).nominal, fresh.QuotaOf(n, fr).nominal) << n;
        EXPECT_EQ(tree.SubtreeQuota(n, fr), fresh.SubtreeQuota(n, fr)) << n;
        EXPECT_EQ(tree.Usage(n, fr), fresh.Usage(n, fr)) << n;
        EXPECT_EQ(tree.Available(n, fr), fresh.Available(n, fr)) << n;
        EXPECT_EQ(tree.PotentialAvailable(n, fr), fresh.PotentialAvailable(n, fr)) << n;
      }
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(taken_count, 50);
  EXPECT_GT(refused_count, 10);
}

}  // namespace
}  // namespace muster::admission
