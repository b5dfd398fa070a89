// The reconciler in serve mode: muster is the job controller and the kubelet. Jobs
// become Workloads, the executor runs admitted gangs, job and queue status follow,
// configuration changes reach the engine in memory, and a step looks only at what
// changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "control/reconciler_harness.h"
#include "placement/cluster_state.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using testing::IndexedJob;
using ::testing::IsEmpty;
using testing::json;
using testing::Node;

class ReconcilerServeTest : public ::testing::Test {
 protected:
  ReconcilerServeTest() : bench_(ReconcilerMode::kServe) {}
  Bench bench_;
};

TEST_F(ReconcilerServeTest, AdmitsRunsAndFinishesAJob) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 2, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  json wl = bench_.Workload("train");
  EXPECT_EQ(Condition(wl, "QuotaReserved"), "True");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  EXPECT_EQ(Condition(wl, "PodsReady"), "True");
  EXPECT_EQ(wl["status"]["placement"]["pods"].size(), 2u);
  EXPECT_EQ(wl["status"]["admission"]["clusterQueue"], "research");
  // serve plays the Job controller: the job's status follows.
  EXPECT_EQ(bench_.Job("train")["status"]["active"], 1);
  json cq = bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research");
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 1);
  EXPECT_EQ(bench_.sink.Count("event events ml/train.", 0), 2);  // Admitted, Started
  EXPECT_EQ(bench_.sink.Count(" Admitted"), 1);
  EXPECT_EQ(bench_.sink.Count(" Started"), 1);
  std::string admitted;
  auto events = bench_.objects.List("events", "ml");
  ASSERT_TRUE(events.ok());
  for (const json& e : events->items) {
    if (e["reason"] == "Admitted") admitted = e.value("message", "");
  }
  EXPECT_EQ(admitted, "Admitted by ClusterQueue research, wait time since queued was 0s");

  bench_.runtime.Finish("ml/train", true);
  bench_.Step();
  wl = bench_.Workload("train");
  EXPECT_EQ(Condition(wl, "Finished"), "True");
  EXPECT_EQ(Condition(bench_.Job("train"), "Complete"), "True");
  EXPECT_EQ(
      bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research")["status"]["admittedWorkloads"], 0);
  EXPECT_THAT(bench_.logs, IsEmpty());
}

TEST_F(ReconcilerServeTest, AStepWithNothingNewWritesNothingAndLooksAtNoJob) {
  bench_.Configure(16, 8, 128);
  bench_.Build();
  for (int i = 0; i < 16; ++i)
    bench_.Create("jobs.batch", "ml", IndexedJob("j" + std::to_string(i), 1, 8));
  bench_.Steps(2);
  ASSERT_EQ(bench_.runtime.running.size(), 16u);
  const size_t writes = bench_.sink.log.size();
  for (int i = 0; i < 5; ++i) {
    bench_.clock.Advance(2);  // past the resync interval: a cycle runs
    auto result = bench_.Step();
    EXPECT_TRUE(result.cycled);
    EXPECT_EQ(result.submitted, 0u);
    EXPECT_EQ(bench_.reconciler->stats().dirty, 0u);
  }
  EXPECT_EQ(bench_.sink.log.size(), writes);
  // The decision log is consumed, not kept for ever.
  EXPECT_TRUE(bench_.reconciler->engine()->log().entries().empty());
}

TEST_F(ReconcilerServeTest, NodeHeartbeatsChangeNothingAndALabelChangeKeepsRunningGangs) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 2, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));

  // A heartbeat: conditions and times in status change, nothing the engine reads.
  json node = bench_.Get("nodes", "", "gpu-0");
  node["status"]["conditions"] = json::array(
      {{{"type", "Ready"}, {"status", "True"}, {"lastHeartbeatTime", "2027-01-15T08:00:10Z"}}});
  bench_.Replace("nodes", "", node);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);

  // A label: the node is updated in place, the engine is not reconfigured; the gang
  // keeps running (no stop, no restart, no Adopted events).
  node = bench_.Get("nodes", "", "gpu-0");
  node["metadata"]["labels"]["rack"] = "r1";
  bench_.Replace("nodes", "", node);
  const size_t writes = bench_.sink.log.size();
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_EQ(bench_.reconciler->config().nodes.at(0).meta.labels.at("rack"), "r1");
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.sink.Count("event", writes), 0);
  EXPECT_EQ(bench_.reconciler->engine()->Find("ml/train")->phase, engine::Phase::kRunning);
  // Still exactly one gang's worth of quota: a second job of 8 GPUs does not fit.
  bench_.Create("jobs.batch", "ml", IndexedJob("more", 2, 4));
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Workload("more"), "QuotaReserved"), "False");
}

TEST_F(ReconcilerServeTest, ANodeJoiningIsAnEngineEventAndAWaitingGangStartsThere) {
  bench_.Configure(1, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 2, 4));
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Workload("next"), "QuotaReserved"), "False");

  // Two nodes join (kubelets register): added in place, not a reconfiguration; the
  // running gang keeps its node, the waiting one starts on the new nodes.
  bench_.Create("nodes", "", Node("gpu-2", 4));
  bench_.Create("nodes", "", Node("gpu-1", 4));
  const size_t writes = bench_.sink.log.size();
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_adds, 2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/next"));
  EXPECT_EQ(bench_.Workload("train")["status"]["placement"]["pods"][0]["node"], "gpu-0");
  std::set<std::string> next_nodes;
  const engine::Engine& engine = *bench_.reconciler->engine();
  for (const auto& pod : engine.Find("ml/next")->plan.pods) {
    next_nodes.insert(engine.cluster().GetNode(pod.node).meta.name);
  }
  EXPECT_EQ(next_nodes, (std::set<std::string>{"gpu-1", "gpu-2"}));
  EXPECT_EQ(bench_.sink.Count("Adopted", writes), 0);
  // The reconciler's configuration lists nodes by name, as a rebuild assembles it.
  const auto& nodes = bench_.reconciler->config().nodes;
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[1].meta.name, "gpu-1");

  // A node removed leaves in place too; both gangs keep running where they were. One
  // deleted and created again under its name in one batch is a new node.
  bench_.Create("nodes", "", Node("gpu-3", 4));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().node_adds, 3);
  bench_.Delete("nodes", "", "gpu-3");
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_removes, 1);
  EXPECT_FALSE(bench_.reconciler->engine()->cluster().FindNode("gpu-3").has_value());
  EXPECT_EQ(bench_.reconciler->config().nodes.size(), 3u);
  bench_.Create("nodes", "", Node("gpu-3", 4));
  bench_.Step();
  bench_.Delete("nodes", "", "gpu-3");
  bench_.Create("nodes", "", Node("gpu-3", 4));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_removes, 2);
  EXPECT_EQ(bench_.reconciler->stats().node_adds, 5);
  EXPECT_EQ(bench_.reconciler->engine()->cluster().FindNode("gpu-3"),
            std::optional<placement::NodeIndex>(5));
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/next"));
  EXPECT_EQ(bench_.reconciler->engine(), &engine);
}

// Removed nodes keep an engine index each until there are too many of them: then the
// cluster is built afresh, without them, and nothing that runs moves.
TEST_F(ReconcilerServeTest, ManyNodesRemovedRebuildTheClusterOnce) {
  bench_.Configure(70, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  const std::string ran_on = bench_.Workload("train")["status"]["placement"]["pods"][0]["node"];
  int deleted = 0;
  for (int i = 0; i < 70 && deleted < 40; ++i) {
    const std::string name = "gpu-" + std::to_string(i);
    if (name == ran_on) continue;
    bench_.Delete("nodes", "", name);
    ++deleted;
  }
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->engine()->cluster().RemovedNodeCount(), 40);
  for (int i = 0; i < 70 && deleted < 65; ++i) {
    const std::string name = "gpu-" + std::to_string(i);
    if (name == ran_on || !bench_.reconciler->engine()->cluster().FindNode(name)) continue;
    bench_.Delete("nodes", "", name);
    ++deleted;
  }
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().node_removes, 65);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 1);
  EXPECT_EQ(bench_.reconciler->engine()->cluster().NodeCount(), 5);
  EXPECT_EQ(bench_.reconciler->engine()->cluster().RemovedNodeCount(), 0);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.reconciler->engine()->Find("ml/train")->phase, engine::Phase::kRunning);
}

// A kubelet registers its node before the device plugin advertises the GPUs: the
// node first has none, then four. Both are engine events; the waiting gang starts.
TEST_F(ReconcilerServeTest, GpusAdvertisedAfterTheNodeJoinedAreAnEngineEvent) {
  bench_.Configure(1, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  bench_.Create("nodes", "", Node("gpu-1", 0));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  json node = bench_.Get("nodes", "", "gpu-1");
  node["status"]["allocatable"]["nvidia.com/gpu"] = "4";
  bench_.Replace("nodes", "", node);
  const size_t writes = bench_.sink.log.size();
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_adds, 1);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/next"));
  EXPECT_EQ(bench_.Workload("next")["status"]["placement"]["pods"][0]["node"], "gpu-1");
  EXPECT_EQ(bench_.sink.Count("Adopted", writes), 0);
  EXPECT_EQ(bench_.reconciler->config().nodes.at(1).allocatable.Get(
                ResourceNames::Intern("nvidia.com/gpu")),
            4);
}

json NodeTopology(const std::string& node, int gpus_per_zone, const std::string& available) {
  json zones = json::array();
  for (int z = 0; z < 2; ++z) {
    zones.push_back({{"name", "node-" + std::to_string(z)},
                     {"type", "Node"},
                     {"resources", json::array({{{"name", "nvidia.com/gpu"},
                                                 {"capacity", std::to_string(gpus_per_zone)},
                                                 {"allocatable", std::to_string(gpus_per_zone)},
                                                 {"available", available}}})}});
  }
  return {{"apiVersion", "topology.node.k8s.io/v1alpha2"},
          {"kind", "NodeResourceTopology"},
          {"metadata", {{"name", node}}},
          {"topologyPolicies", json::array({"SingleNUMANodePodLevel"})},
          {"zones", zones}};
}

// A NodeResourceTopology is part of its node: added, edited or deleted, the node is
// edited in place; its exporter rewriting `available` (its view of usage) changes
// nothing.
TEST_F(ReconcilerServeTest, NodeResourceTopologyEditsAreNodeEditsAndUsageChangesNothing) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  const std::string ran_on = bench_.Workload("train")["status"]["placement"]["pods"][0]["node"];
  const engine::Engine* engine = bench_.reconciler->engine();
  auto zones_of = [&](const std::string& name) {
    const auto& indexed = dynamic_cast<const placement::IndexedClusterState&>(engine->cluster());
    return indexed.Info(*engine->cluster().FindNode(name)).zones.size();
  };
  const char* kNrt = "noderesourcetopologies.topology.node.k8s.io";
  bench_.Create(kNrt, "", NodeTopology(ran_on, 2, "0"));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_EQ(zones_of(ran_on), 2u);
  ASSERT_EQ(bench_.reconciler->config().node_topologies.size(), 1u);
  EXPECT_EQ(bench_.reconciler->engine(), engine);

  bench_.Replace(kNrt, "", NodeTopology(ran_on, 2, "2"));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);

  // A topology that arrives before its node waits for it.
  bench_.Create(kNrt, "", NodeTopology("gpu-7", 2, "2"));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  bench_.Create("nodes", "", Node("gpu-7", 4));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_adds, 1);
  EXPECT_EQ(zones_of("gpu-7"), 2u);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.reconciler->engine()->Find("ml/train")->phase, engine::Phase::kRunning);

  // Deleted, the node loses its NUMA zones in place; deleted with its node, nothing
  // is left to edit.
  bench_.Delete(kNrt, "", "gpu-7");
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 2);
  EXPECT_EQ(zones_of("gpu-7"), 0u);
  ASSERT_EQ(bench_.reconciler->config().node_topologies.size(), 1u);
  EXPECT_EQ(bench_.reconciler->config().node_topologies[0].meta.name, ran_on);
  bench_.Create(kNrt, "", NodeTopology("gpu-7", 2, "2"));
  bench_.Step();
  EXPECT_EQ(zones_of("gpu-7"), 2u);
  bench_.Delete(kNrt, "", "gpu-7");
  bench_.Delete("nodes", "", "gpu-7");
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_removes, 1);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 3);
  EXPECT_EQ(bench_.reconciler->config().node_topologies.size(), 1u);
  EXPECT_EQ(bench_.reconciler->engine(), engine);
}

TEST_F(ReconcilerServeTest, CordonedNodeKeepsItsGangAndTakesNoNewOneUntilUncordoned) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  const std::string ran_on = bench_.Workload("train")["status"]["placement"]["pods"][0]["node"];
  const std::string other = ran_on == "gpu-0" ? "gpu-1" : "gpu-0";

  // kubectl cordon: spec.unschedulable. An event for that node, not a reconfiguration.
  json node = bench_.Get("nodes", "", other);
  node["spec"]["unschedulable"] = true;
  bench_.Replace("nodes", "", node);
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 1, 4));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(Condition(bench_.Workload("next"), "QuotaReserved"), "False");

  // kubectl uncordon: the waiting job starts there; the first one never moved.
  node = bench_.Get("nodes", "", other);
  node["spec"].erase("unschedulable");
  bench_.Replace("nodes", "", node);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/next"));
  EXPECT_EQ(bench_.Workload("next")["status"]["placement"]["pods"][0]["node"], other);

  // New allocatable is an in-place edit too; both gangs keep running.
  node = bench_.Get("nodes", "", other);
  node["status"]["allocatable"]["nvidia.com/gpu"] = "8";
  bench_.Replace("nodes", "", node);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 3);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/next"));
  EXPECT_EQ(bench_.reconciler->engine()
                ->cluster()
                .GetNode(*bench_.reconciler->engine()->cluster().FindNode(other))
                .allocatable.Get(ResourceNames::Intern("nvidia.com/gpu")),
            8);
  // Shrunk under its running gang: the engine is reconfigured (which decides).
  node = bench_.Get("nodes", "", other);
  node["status"]["allocatable"]["nvidia.com/gpu"] = "2";
  bench_.Replace("nodes", "", node);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 1);
}

TEST_F(ReconcilerServeTest, ARemovedNodeEvictsItsGangWhichRunsAgainElsewhere) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  json wl = bench_.Workload("train");
  const std::string node = wl["status"]["placement"]["pods"][0]["node"];
  bench_.Delete("nodes", "", node);
  bench_.Step();
  // Stopped, requeued with the reason, and started again on the other node: the node
  // leaves in place, not through a reconfiguration.
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/train", "evicted ml/train", "start ml/train"));
  wl = bench_.Workload("train");
  EXPECT_NE(wl["status"]["placement"]["pods"][0]["node"], node);
  EXPECT_EQ(bench_.sink.Count(" Evicted"), 1);
  const auto& evictions = bench_.reconciler->engine()->Find("ml/train")->evictions;
  ASSERT_EQ(evictions.size(), 1u);
  EXPECT_EQ(evictions[0].reason, "NodeFailure");
  EXPECT_EQ(evictions[0].detail, "node " + node + " was removed");
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().node_removes, 1);
}

TEST_F(ReconcilerServeTest, ANoExecuteTaintEvictsTheGangsThatDoNotTolerateIt) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  const std::string node = bench_.Workload("train")["status"]["placement"]["pods"][0]["node"];
  json tainted = bench_.Get("nodes", "", node);
  tainted["spec"]["taints"] = json::array({{{"key", "maintenance"}, {"effect", "NoExecute"}}});
  bench_.Replace("nodes", "", tainted);
  bench_.Step();
  // As Kubernetes' taint manager: its pod is turned out at once, and the gang runs
  // again on the other node; the node is edited in place.
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/train", "evicted ml/train", "start ml/train"));
  EXPECT_NE(bench_.Workload("train")["status"]["placement"]["pods"][0]["node"], node);
  const auto& evictions = bench_.reconciler->engine()->Find("ml/train")->evictions;
  ASSERT_EQ(evictions.size(), 1u);
  EXPECT_EQ(evictions[0].reason, "DeletionByTaintManager");
  EXPECT_EQ(bench_.reconciler->stats().node_updates, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
}

TEST_F(ReconcilerServeTest, HyperNodesAndTheLabelsTheySelectChangeInPlace) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  const placement::ClusterState* cluster = &bench_.reconciler->engine()->cluster();
  auto members = [&] {
    const auto& indexed =
        dynamic_cast<const placement::IndexedClusterState&>(bench_.reconciler->engine()->cluster());
    std::vector<std::string> out;
    for (int32_t d : indexed.HyperNodeDomains()) {
      for (int32_t r : indexed.Domains().Get(d).ranks) {
        out.push_back(indexed.GetNode(indexed.NodeAtRank(r)).meta.name);
      }
    }
    return out;
  };
  // A HyperNode taking the nodes labelled rack=r1: none yet.
  bench_.Create(
      "hypernodes.topology.volcano.sh", "",
      {{"apiVersion", "topology.volcano.sh/v1alpha1"},
       {"kind", "HyperNode"},
       {"metadata", {{"name", "s0"}}},
       {"spec",
        {{"tier", 1},
         {"members",
          json::array({{{"type", "Node"},
                        {"selector", {{"labelMatch", {{"matchLabels", {{"rack", "r1"}}}}}}}}})}}}});
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().hyper_node_updates, 1);
  EXPECT_EQ(bench_.reconciler->config().hyper_nodes.size(), 1u);
  EXPECT_THAT(members(), ::testing::IsEmpty());
  // A node labelled into it joins it; neither change rebuilds anything.
  json node = bench_.Get("nodes", "", "gpu-1");
  node["metadata"]["labels"]["rack"] = "r1";
  bench_.Replace("nodes", "", node);
  bench_.Step();
  EXPECT_THAT(members(), ElementsAre("gpu-1"));
  bench_.Delete("hypernodes.topology.volcano.sh", "", "s0");
  bench_.Step();
  EXPECT_THAT(members(), ::testing::IsEmpty());
  EXPECT_EQ(bench_.reconciler->stats().hyper_node_updates, 2);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(&bench_.reconciler->engine()->cluster(), cluster);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
}

TEST_F(ReconcilerServeTest, QuotaRaisedAdmitsWhatWaits) {
  bench_.Configure(2, 4, 4);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("a", 1, 4));
  bench_.Create("jobs.batch", "ml", IndexedJob("b", 1, 4));
  bench_.Step();
  EXPECT_EQ(bench_.runtime.running.size(), 1u);
  std::string reason;
  EXPECT_EQ(Condition(bench_.Workload("b"), "QuotaReserved", &reason), "False");
  json cq = bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research");
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = 8;
  bench_.Replace("clusterqueues.kueue.x-k8s.io", "", cq);
  bench_.Step();
  EXPECT_EQ(bench_.runtime.running.size(), 2u);
  EXPECT_EQ(Condition(bench_.Workload("b"), "QuotaReserved"), "True");
  // Only the numbers moved: the quota tree is edited in place, no reconfiguration.
  EXPECT_EQ(bench_.reconciler->stats().quota_updates, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->config()
                .cluster_queues.at(0)
                .resource_groups.at(0)
                .flavors.at(0)
                .resources.at(1)
                .nominal_quota.ToString(),
            "8");
}

TEST_F(ReconcilerServeTest, QuotaLoweredBelowUseEvictsAsAReconfiguration) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("a", 1, 4));
  bench_.Create("jobs.batch", "ml", IndexedJob("b", 1, 4));
  bench_.Step();
  ASSERT_EQ(bench_.runtime.running.size(), 2u);
  json cq = bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research");
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = 4;
  bench_.Replace("clusterqueues.kueue.x-k8s.io", "", cq);
  bench_.Step();
  // Quota is never over-committed: the in-place edit is refused and the rebuilt
  // queues take back only what fits (admission rebuilt, nodes kept).
  EXPECT_EQ(bench_.reconciler->stats().quota_updates, 0);
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.runtime.running.size(), 1u);
  EXPECT_EQ(bench_.sink.Count(" Evicted"), 1);

  // A structural change (a resource added to the group) rebuilds admission too.
  cq = bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research");
  cq["spec"]["resourceGroups"][0]["coveredResources"].push_back("memory");
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"].push_back(
      {{"name", "memory"}, {"nominalQuota", "1Ti"}});
  bench_.Replace("clusterqueues.kueue.x-k8s.io", "", cq);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 2);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.runtime.running.size(), 1u);
}

TEST_F(ReconcilerServeTest, RestartAdoptsRunningGangsWithoutEvents) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 2, 4));
  bench_.Step();
  // A new reconciler over the same objects (a restarted server).
  Bench restarted(ReconcilerMode::kServe);
  restarted.objects = bench_.objects;
  restarted.Build();
  restarted.Step();
  EXPECT_THAT(restarted.runtime.events, ElementsAre("adopt ml/train"));
  EXPECT_EQ(restarted.reconciler->engine()->Find("ml/train")->phase, engine::Phase::kRunning);
  EXPECT_EQ(restarted.sink.Count("event"), 0);
  EXPECT_THAT(restarted.logs, ElementsAre("adopted 1 running gangs where they run"));
}

TEST_F(ReconcilerServeTest, DeletedJobStopsItsGangAndRemovesItsWorkload) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 2, 4));
  bench_.Step();
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 1, 4));  // waits for the quota
  bench_.Step();
  bench_.Delete("jobs.batch", "ml", "train");
  bench_.Step();  // the same instant: the freed quota admits it at once, not at a resync
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/train", "deleted ml/train", "start ml/next"));
  EXPECT_TRUE(bench_.Workload("train").is_null());
  EXPECT_EQ(bench_.reconciler->JobKeys(), std::vector<std::string>{"ml/next"});
}

// kubectl delete --cascade=foreground: the job stays, marked and holding
// "foregroundDeletion", while the garbage collector deletes its pods. The reconciler
// forgets it at once, deletes its Workload (its quota goes to the next job) and never writes its
// Workload again, nor adopts it after a restart. A job created already marked (held by
// another finalizer) is not taken: Kueue makes no Workload for it.
TEST_F(ReconcilerServeTest, AJobDeletedInForegroundIsForgottenAndItsWorkloadNotWrittenAgain) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  json marked = bench_.Job("train");
  marked["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  marked["metadata"]["finalizers"] = {"foregroundDeletion"};
  bench_.Replace("jobs.batch", "ml", marked);  // the reconciler deletes its Workload
  bench_.Step();  // in the same instant: freed quota is decided on at once
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/train", "deleted ml/train", "start ml/next"));
  EXPECT_TRUE(bench_.Workload("train").is_null());
  EXPECT_EQ(bench_.reconciler->JobKeys(), std::vector<std::string>{"ml/next"});
  bench_.Restart();
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->JobKeys(), std::vector<std::string>{"ml/next"});
  EXPECT_TRUE(bench_.Workload("train").is_null());

  json held = IndexedJob("held", 1, 1);
  held["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  held["metadata"]["finalizers"] = {"example.com/hold"};
  bench_.Create("jobs.batch", "ml", held);
  bench_.Step();
  EXPECT_TRUE(bench_.Workload("held").is_null());
  EXPECT_EQ(bench_.reconciler->JobKeys(), std::vector<std::string>{"ml/next"});
}

TEST_F(ReconcilerServeTest, AFailedStoreTransactionIsWrittenAgain) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  bench_.objects.Delete("workloads.kueue.x-k8s.io", "ml", "job-train");  // rolled back
  bench_.reconciler->ForgetWrites();
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Workload("train"), "Admitted"), "True");
}

// serve writes a large step in several store transactions (Write with a budget): the
// parts together write what the whole step writes, and the first part reports the
// cycle.
TEST(ReconcilerWriteBudgetTest, AStepWrittenInPartsWritesWhatAWholeStepWrites) {
  auto run = [](size_t budget) {
    Bench bench(ReconcilerMode::kServe);
    bench.Configure(2, 4, 8);
    bench.Build();
    for (int i = 0; i < 5; ++i)
      bench.Create("jobs.batch", "ml", IndexedJob("j" + std::to_string(i), 1, 1));
    bench.reconciler->Decide();
    Reconciler::StepResult first = bench.reconciler->Write(budget);
    EXPECT_TRUE(first.cycled);
    int parts = 1;
    for (Reconciler::StepResult r = first; r.more; ++parts) {
      r = bench.reconciler->Write(budget);
      EXPECT_FALSE(r.cycled);
    }
    return std::make_pair(bench.sink.log, parts);
  };
  const auto [whole, one] = run(SIZE_MAX);
  const auto [parts, many] = run(2);
  EXPECT_EQ(one, 1);
  EXPECT_GE(many, 3);  // five admitted jobs, two per part
  EXPECT_EQ(parts, whole);
}

// What serve's executor may start (TakeRecordedAdmissions): only gangs whose
// Workload was written with their admission, and none of writes it then forgot.
TEST_F(ReconcilerServeTest, RecordedAdmissionsFollowTheWorkloadWrites) {
  bench_.Configure(1, 8, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.sink.fail["workload job-train"] = Internal("injected");
  bench_.reconciler->Decide();
  bench_.reconciler->Write();  // the Workload write refused, then written in its next round
  EXPECT_THAT(bench_.reconciler->TakeRecordedAdmissions(), ElementsAre("ml/train"));
  EXPECT_THAT(bench_.reconciler->TakeRecordedAdmissions(), IsEmpty());
  // A job synced again with its Workload already as it should be: still recorded.
  bench_.runtime.MarkReady("ml/train");
  bench_.Step();
  EXPECT_THAT(bench_.reconciler->TakeRecordedAdmissions(), ElementsAre("ml/train"));

  bench_.Create("jobs.batch", "ml", IndexedJob("other", 1, 4));
  bench_.Step();
  bench_.reconciler->ForgetWrites();  // the store did not keep that step's writes
  EXPECT_THAT(bench_.reconciler->TakeRecordedAdmissions(), IsEmpty());
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/other"));
}

}  // namespace
}  // namespace muster::control
