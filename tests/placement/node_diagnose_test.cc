// NodeSearch::Diagnose over the whole cluster counts from the free-capacity index;
// given every rank as `allowed` it classifies node by node. Both must write the
// same failure, byte for byte, on any cluster state.
#include <gtest/gtest.h>

#include <random>

#include "placement/node_fit.h"
#include "placement/node_search.h"
#include "placement/scorer_factory.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders
using Policy = model::TopologyManagerPolicy;
using Scope = model::TopologyManagerScope;

struct Cluster {
  std::vector<model::Node> nodes;
  std::vector<model::NodeTopology> numa;
};

// Nodes of 0, 4 or 8 GPUs, some tainted, unschedulable or single-NUMA-node.
Cluster RandomCluster(std::mt19937& rng, int32_t n) {
  Cluster c;
  for (int32_t k = 0; k < n; ++k) {
    const std::string name = "n" + std::to_string(100 + k);
    const int64_t gpus = std::array<int64_t, 3>{0, 4, 8}[rng() % 3];
    model::Node node = MakeNode(name, gpus, {}, 16000 + 16000 * static_cast<int64_t>(rng() % 3),
                                (64 + 64 * static_cast<int64_t>(rng() % 3)) * kGi);
    if (rng() % 10 == 0) node.taints.push_back({"dedicated", "x", model::TaintEffect::kNoSchedule});
    if (rng() % 10 == 0) {
      node.taints.push_back({"soft", "x", model::TaintEffect::kPreferNoSchedule});
    }
    if (rng() % 15 == 0) node.unschedulable = true;
    if (rng() % 3 != 0) node.allocatable.Set(kEphemeralStorage, 100 * kGi);
    if (gpus > 0 && rng() % 4 == 0) {
      c.numa.push_back(MakeNuma(name, Policy::kSingleNumaNode, Scope::kPod, 2, gpus / 2,
                                node.allocatable.Get(kCpu) / 2, node.allocatable.Get(kMemory) / 2));
    }
    c.nodes.push_back(std::move(node));
  }
  return c;
}

TEST(NodeDiagnose, IndexTallyMatchesANodeByNodeWalk) {
  std::mt19937 rng(11);
  auto scorer = MakeScorer(model::SchedulerConfiguration{});
  int32_t compared = 0;
  for (int round = 0; round < 40; ++round) {
    Cluster c = RandomCluster(rng, 30 + static_cast<int32_t>(rng() % 40));
    auto s = Build(c.nodes, c.numa);
    auto& state = dynamic_cast<IndexedClusterState&>(*s);
    for (NodeIndex i = 0; i < state.NodeCount(); ++i) {
      if (rng() % 12 == 0) state.SetNodeReady(i, false);
    }
    // Fill the cluster with committed gangs of mixed shapes.
    auto planner = MakeGangPlanner({});
    std::vector<model::Workload> gangs;
    gangs.reserve(200);
    for (int g = 0; g < 200; ++g) {
      gangs.push_back(MakeWorkload(
          "ns/g" + std::to_string(g),
          {MakePodSet("main", 1 + static_cast<int32_t>(rng() % 3), static_cast<int64_t>(rng() % 5),
                      1000 * (1 + static_cast<int64_t>(rng() % 8)),
                      kGi * (1 + static_cast<int64_t>(rng() % 32)))}));
      auto p = planner->Plan(state, Request(gangs.back()));
      if (auto* plan = std::get_if<GangPlan>(&p)) {
        ASSERT_TRUE(state.Commit(*plan, gangs.back()).ok());
      }
    }
    std::vector<int32_t> every(static_cast<size_t>(state.NodeCount()));
    for (int32_t r = 0; r < state.NodeCount(); ++r) every[static_cast<size_t>(r)] = r;
    for (int probe = 0; probe < 12; ++probe) {
      model::PodSet ps = MakePodSet("main", 1, static_cast<int64_t>(rng() % 9),
                                    1000 * (1 + static_cast<int64_t>(rng() % 40)),
                                    kGi * (1 + static_cast<int64_t>(rng() % 200)));
      if (rng() % 4 == 0) ps.requests.Set(kNvidiaGpu, 0);
      if (rng() % 5 == 0) ps.requests.Set(kEphemeralStorage, kGi);  // beyond the index
      if (rng() % 4 == 0)
        ps.tolerations.push_back({"dedicated", model::TolerationOperator::kEqual, "x", {}, {}});
      PlacementRequest req;
      for (NodeIndex i = 0; i < state.NodeCount(); ++i) {
        if (rng() % 20 == 0) req.excluded_nodes.push_back(i);
      }
      if (rng() % 2 == 0) req.excluded_why = "reserved for ns/big";
      // A plan in progress: some pods charged to the overlay only.
      Overlay ov(state);
      PodShape shape = MakePodShape(ps);
      for (int k = 0; k < 5; ++k) {
        NodeIndex i = static_cast<NodeIndex>(rng() % static_cast<uint32_t>(state.NodeCount()));
        if (auto a = TryAllocate(state.Info(i), ov.Usage(i), shape)) {
          Charge(state.Info(i), ov.Mutable(i), shape, *a);
        }
      }
      NodeSearch search(ov, *scorer);
      PodSetContext fast = MakePodSetContext(ps, 0, nullptr, state.NodeCount());
      ExcludeNodes(fast, req);
      PodSetContext walk = MakePodSetContext(ps, 0, nullptr, state.NodeCount());
      ExcludeNodes(walk, req);
      PlacementFailure a = search.Diagnose(fast, nullptr, 3, 7);
      PlacementFailure b = search.Diagnose(walk, &every, 3, 7);
      ASSERT_EQ(a.reason, b.reason) << "round " << round << " probe " << probe;
      ASSERT_EQ(a.message, b.message) << "round " << round << " probe " << probe;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 40 * 12);
}

}  // namespace
}  // namespace muster::placement
