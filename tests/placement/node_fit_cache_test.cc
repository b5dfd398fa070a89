// NodeFitCache: plans made with the cache are the plans made without it, whatever
// happened to the nodes in between (pods bound and released, taints and labels
// edited, cordons, readiness, nodes resized) and whatever the request excludes, and
// the cache answers most of a run of like pods.
#include "placement/node_fit_cache.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "placement/cluster_state.h"
#include "placement/scorer_factory.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

std::string Describe(const std::variant<GangPlan, PlacementFailure>& p) {
  if (const auto* f = std::get_if<PlacementFailure>(&p)) return "failure " + f->reason;
  std::string out;
  for (const PodPlacement& pod : std::get<GangPlan>(p).pods) {
    out += std::to_string(pod.node) + "[";
    for (int32_t d : pod.gpus) out += std::to_string(d) + ",";
    out += "] ";
  }
  return out;
}

// Nodes of three kinds: plain, two best-effort NUMA zones, two single-numa-node
// zones; every fifth with a PreferNoSchedule taint the scorer counts.
std::vector<model::Node> Nodes() {
  std::vector<model::Node> nodes;
  for (int i = 0; i < 30; ++i) {
    model::Node n = MakeNode("n" + std::to_string(100 + i), 8, {{"pool", i % 2 ? "a" : "b"}});
    if (i % 5 == 0) n.taints.push_back({"soft", "x", model::TaintEffect::kPreferNoSchedule});
    nodes.push_back(n);
  }
  return nodes;
}

std::vector<model::NodeTopology> Numa() {
  std::vector<model::NodeTopology> numa;
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) continue;
    auto policy = i % 3 == 1 ? model::TopologyManagerPolicy::kBestEffort
                             : model::TopologyManagerPolicy::kSingleNumaNode;
    numa.push_back(
        MakeNuma("n" + std::to_string(100 + i), policy, model::TopologyManagerScope::kPod, 2, 4));
  }
  return numa;
}

model::Toleration Tolerate(const std::string& key) {
  model::Toleration t;
  t.key = key;
  t.op = model::TolerationOperator::kExists;
  return t;
}

model::Workload Random(std::mt19937& rng, int n) {
  const int kind = static_cast<int>(rng() % 4);
  const int64_t gpus = kind == 3 ? 3 : kind + 1;
  model::PodSet ps =
      MakePodSet("w", 1 + static_cast<int32_t>(rng() % 3), gpus, 2000 * gpus, 8 * kGi * gpus);
  if (rng() % 4 == 0) ps.tolerations.push_back(Tolerate("soft"));
  if (rng() % 3 == 0) ps.tolerations.push_back(Tolerate("hard"));
  if (rng() % 5 == 0) ps.node_selector["pool"] = "a";
  if (rng() % 5 == 0) {
    // Required affinity the filters check (the selector above may be narrowed by the
    // label index instead).
    model::NodeSelectorTerm term;
    term.match_expressions.push_back({"pool", model::SelectorOperator::kIn, {"b"}});
    ps.node_affinity.required.push_back(term);
  }
  return MakeWorkload("ns/w" + std::to_string(n), {ps});
}

TEST(NodeFitCacheTest, PlansAreThoseMadeWithoutIt) {
  // Two equal clusters through the same changes: one planned with the cache, one
  // without.
  const std::vector<model::NodeTopology> numa = Numa();
  auto cached = Build(Nodes(), numa);
  auto plain = Build(Nodes(), numa);
  int64_t walks_kept = 0;
  for (model::ScoringPolicy policy :
       {model::ScoringPolicy::kBinpack, model::ScoringPolicy::kSpread,
        model::ScoringPolicy::kGpuPacking, model::ScoringPolicy::kBestFit}) {
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE("scoring policy " + std::to_string(static_cast<int>(policy)) + " variant " +
                   std::to_string(variant));
      model::SchedulerConfiguration cfg;
      cfg.scoring = policy;
      // Fewer nodes scored than the cluster has, so a search stops part of the way
      // (through its kept walk too), with ties broken by name or at random.
      PlannerOptions options;
      if (variant > 0) options.max_scored_nodes = 4;
      options.random_tie_break = variant == 2;
      options.tie_break_seed = 5;
      auto planner = MakeGangPlanner(cfg, options);
      NodeFitCache cache;
      std::mt19937 rng(11);
      std::vector<model::Workload> bound;
      int placed = 0;
      for (int step = 0; step < 600; ++step) {
        const uint32_t what = rng() % 10;
        if (what < 6) {
          model::Workload w = Random(rng, step);
          PlacementRequest with = Request(w);
          PlacementRequest without = Request(w);
          if (rng() % 6 == 0) {
            // Nodes another gang holds: the filters never see them excluded.
            for (NodeIndex i = static_cast<NodeIndex>(rng() % 3); i < 30; i += 3) {
              with.excluded_nodes.push_back(i);
              without.excluded_nodes.push_back(i);
            }
          }
          with.fit_cache = &cache;
          if (!bound.empty() && rng() % 4 == 0) {
            // As if a bound workload were gone: its nodes are the plan's own (touched)
            // and searched as they would be, the state itself unchanged.
            const std::vector<std::string> gone = {bound[rng() % bound.size()].key};
            ASSERT_EQ(Describe(planner->PlanAssumingEvicted(*cached, with, gone)),
                      Describe(planner->PlanAssumingEvicted(*plain, without, gone)))
                << "step " << step;
            continue;
          }
          auto a = planner->Plan(*cached, with);
          auto b = planner->Plan(*plain, without);
          ASSERT_EQ(Describe(a), Describe(b)) << "step " << step;
          if (const auto* plan = std::get_if<GangPlan>(&a)) {
            ASSERT_TRUE(cached->Commit(*plan, w).ok());
            ASSERT_TRUE(plain->Commit(std::get<GangPlan>(b), w).ok());
            bound.push_back(std::move(w));
            ++placed;
          }
        } else if (what < 9 && !bound.empty()) {
          size_t k = rng() % bound.size();
          cached->Release(bound[k].key);
          plain->Release(bound[k].key);
          bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (rng() % 4 == 0) {
          NodeIndex i = static_cast<NodeIndex>(rng() % 30);
          const bool ready = rng() % 3 != 0;
          cached->SetNodeReady(i, ready);
          plain->SetNodeReady(i, ready);
        } else {
          // A node edited: tainted (softly or not) or not, cordoned or not, relabelled.
          NodeIndex i = static_cast<NodeIndex>(rng() % 30);
          model::Node n = cached->GetNode(i);
          if (n.taints.empty()) {
            n.taints.push_back({"soft", "y", model::TaintEffect::kPreferNoSchedule});
            if (rng() % 2 == 0) n.taints.push_back({"hard", "z", model::TaintEffect::kNoSchedule});
          } else {
            n.taints.clear();
          }
          n.unschedulable = rng() % 4 == 0;
          n.meta.labels["pool"] = rng() % 2 ? "a" : "b";
          const model::NodeTopology* topology = nullptr;
          for (const auto& t : numa) topology = t.meta.name == n.meta.name ? &t : topology;
          ASSERT_TRUE(cached->UpdateNode(i, n, topology).ok());
          ASSERT_TRUE(plain->UpdateNode(i, n, topology).ok());
        }
      }
      for (const auto& w : bound) {
        cached->Release(w.key);
        plain->Release(w.key);
      }
      EXPECT_GT(placed, 100);
      // Most nodes a search scores did not change since the previous search.
      EXPECT_GT(cache.hits(), 1000);
      walks_kept += cache.walks_kept();
    }
  }
  // Searches narrowed by the node selector went on from walks kept before them.
  EXPECT_GT(walks_kept, 100);
}

TEST(NodeFitCacheTest, AnotherStateOrScorerFindsNothing) {
  auto first = Build({MakeNode("a", 8), MakeNode("b", 8)});
  auto second = Build({MakeNode("a", 8), MakeNode("b", 8)});
  const auto& a = dynamic_cast<const IndexedClusterState&>(*first);
  const auto& b = dynamic_cast<const IndexedClusterState&>(*second);
  // Versions come from one counter: equal nodes of two states never share one.
  EXPECT_NE(a.NodeVersion(0), b.NodeVersion(0));

  NodeFitCache cache;
  auto scorer = MakeScorer(model::SchedulerConfiguration{});
  cache.Bind(scorer.get(), 2);
  PodShape shape;
  shape.gpus = 1;
  const int64_t key = cache.KeyOf(shape, {}, {}, true);
  EXPECT_EQ(cache.KeyOf(shape, {}, {}, true), key);
  PodConstraints tolerating;
  tolerating.tolerations = {Tolerate("soft")};
  EXPECT_NE(cache.KeyOf(shape, tolerating, {}, true), key);
  PodConstraints selecting;
  selecting.node_selector["pool"] = "a";
  EXPECT_NE(cache.KeyOf(shape, selecting, {}, true), key);
  EXPECT_NE(cache.KeyOf(shape, selecting, {}, false), cache.KeyOf(shape, selecting, {}, true));
  model::NodeSelectorTerm term;
  term.match_expressions.push_back({"pool", model::SelectorOperator::kIn, {"b"}});
  EXPECT_NE(cache.KeyOf(shape, {}, {term}, true), key);
  cache.Fill(0, a.NodeVersion(0), key).fits = true;
  EXPECT_NE(cache.Find(0, a.NodeVersion(0), key), nullptr);
  EXPECT_EQ(cache.Find(0, b.NodeVersion(0), key), nullptr);

  // A node that changes draws a new version.
  const uint64_t before = a.NodeVersion(0);
  first->SetNodeReady(0, false);
  EXPECT_NE(a.NodeVersion(0), before);

  auto other = MakeScorer(model::SchedulerConfiguration{});
  cache.Bind(other.get(), 2);
  EXPECT_EQ(cache.Find(0, before, key), nullptr);
}

}  // namespace
}  // namespace muster::placement
