// AdmittedIndex::AnyCandidate against the reference: FindCandidates' scan of every
// admitted workload (preemptor.cc's AnyCandidate), over random trees, policies and
// admitted sets, before and after removals.
#include "admission/admitted_index.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>

namespace muster::admission {
namespace {

using model::PreemptionPolicy;

struct Admitted {
  std::string key;
  int32_t cq;
  CandidateRank rank;
  FrAmounts usage;
};

TEST(AdmittedIndexTest, AgreesWithTheScanOfEveryAdmittedWorkload) {
  const PreemptionPolicy policies[] = {PreemptionPolicy::kNever, PreemptionPolicy::kLowerPriority,
                                       PreemptionPolicy::kLowerOrNewerEqualPriority,
                                       PreemptionPolicy::kAny};
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  int disagreements = 0, checks = 0, found = 0;
  for (int trial = 0; trial < 200; ++trial) {
    QuotaTree tree;
    const FrId frs[] = {tree.InternFr(0, kNvidiaGpu), tree.InternFr(1, kNvidiaGpu),
                        tree.InternFr(0, kCpu)};
    NodeId cohort = tree.AddNode("cohort", false);
    std::vector<ClusterQueueSpec> cqs(4);
    for (int c = 0; c < 4; ++c) {
      cqs[c].name = "cq" + std::to_string(c);
      cqs[c].node = tree.AddNode(cqs[c].name, true);
      if (c < 3) tree.SetParent(cqs[c].node, cohort);  // cq3 stands alone
      for (FrId fr : frs) tree.SetQuota(cqs[c].node, fr, {pick(6), std::nullopt, std::nullopt});
      cqs[c].preemption.within_cluster_queue = policies[pick(4)];
      cqs[c].preemption.reclaim_within_cohort = policies[pick(4)];
    }
    tree.Finalize();
    std::deque<Admitted> admitted;  // stable keys for the views
    AdmittedIndex index;
    int n = pick(12);
    for (int i = 0; i < n; ++i) {
      Admitted a;
      a.key = "w" + std::to_string(i);
      a.cq = pick(4);
      for (FrId fr : frs) {
        if (pick(2)) a.usage.push_back({fr, pick(4)});  // zero amounts are not uses
      }
      admitted.push_back(std::move(a));
      Admitted& b = admitted.back();
      b.rank = CandidateRank{pick(3), static_cast<Time>(pick(3)), pick(3), b.key};
      tree.AddUsage(cqs[b.cq].node, b.usage);
      index.Add(b.cq, b.rank, b.usage);
    }
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {  // remove about half, as releases do
        for (Admitted& a : admitted) {
          if (!pick(2)) continue;
          tree.RemoveUsage(cqs[a.cq].node, a.usage);
          index.Remove(a.cq, a.rank, a.usage);
          a.cq = -1;
        }
      }
      for (int q = 0; q < 20; ++q) {
        IncomingWorkload in;
        in.cq = pick(4);
        in.priority = pick(3);
        in.created = pick(3);
        in.order = pick(3);
        std::vector<FrId> want;
        for (FrId fr : frs) {
          if (pick(2)) want.push_back(fr);
        }
        std::vector<int32_t> root_cqs =
            in.cq == 3 ? std::vector<int32_t>{3} : std::vector<int32_t>{0, 1, 2};
        std::vector<PreemptionCandidate> scan;
        for (const Admitted& a : admitted) {
          if (a.cq < 0 || (a.cq == 3) != (in.cq == 3)) continue;
          PreemptionCandidate pc;
          pc.key = a.key;
          pc.cq = a.cq;
          pc.priority = a.rank.priority;
          pc.created = a.rank.created;
          pc.order = a.rank.order;
          pc.usage = &a.usage;
          scan.push_back(pc);
        }
        bool expected = AnyCandidate(in, want, tree, cqs, scan);
        bool got = index.AnyCandidate(in, want, tree, cqs, root_cqs);
        ++checks;
        found += expected;
        if (expected != got) ++disagreements;
      }
    }
  }
  EXPECT_EQ(disagreements, 0) << "of " << checks;
  // Both answers occur often enough for the comparison to mean something.
  EXPECT_GT(found, checks / 10);
  EXPECT_LT(found, checks - checks / 10);
}

}  // namespace
}  // namespace muster::admission
