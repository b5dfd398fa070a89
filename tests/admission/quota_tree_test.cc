// Quota recursion of kueue resource_node.go, worked by hand.
#include "admission/quota_tree.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace muster::admission
