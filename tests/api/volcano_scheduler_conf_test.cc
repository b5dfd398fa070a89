// Volcano's volcano-scheduler.conf mapped onto muster's SchedulerConfiguration:
// actions and plugins muster acts on are mapped, the rest warned about.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Lines;

// The configuration of seed 000, section 4.2 (Volcano's own default).
constexpr char kSeedConf[] = R"(actions: 'enqueue, allocate, backfill'
tiers:
  - plugins:
      - name: priority
      - name: gang
      - name: conformance
  - plugins:
      - name: drf
      - name: predicates
      - name: proportion
      - name: nodeorder
      - name: binpack
)";

TEST(VolcanoSchedulerConf, SeedConfigurationMapsWithOneWarning) {
  DecodeResult r = Decode(kSeedConf);
  EXPECT_FALSE(r.HasErrors());
  EXPECT_THAT(Lines(r), ElementsAre(HasSubstr(
                            "t.yaml:11: volcano-scheduler.conf: tiers[1].plugins[3].name: warning: "
                            "nodeorder: muster scores nodes with one policy and binpack")));
  ASSERT_TRUE(r.manifests.scheduler_config.has_value());
  const model::SchedulerConfiguration& c = *r.manifests.scheduler_config;
  EXPECT_EQ(c.mapped_from, "volcano-scheduler.conf");
  // No preempt or reclaim action: Volcano queues neither preempt nor reclaim.
  EXPECT_FALSE(c.volcano.preempt);
  EXPECT_FALSE(c.volcano.reclaim);
  EXPECT_TRUE(c.volcano.drf_job_order);
  // Plugins not listed do not act.
  EXPECT_FALSE(c.volcano.sla);
  EXPECT_FALSE(c.volcano.task_topology);
  // binpack with Volcano's default weights: cpu 1, memory 1.
  EXPECT_EQ(c.scoring, model::ScoringPolicy::kBinpack);
  EXPECT_EQ(c.binpack_weights, (std::map<std::string, int64_t>{{"cpu", 1}, {"memory", 1}}));
}

TEST(VolcanoSchedulerConf, PluginArgumentsAreMapped) {
  DecodeResult r = Decode(R"(actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
    arguments:
      sla-waiting-time: 1h2m3s
  - name: task-topology
    arguments:
      task-topology.weight: 10
- plugins:
  - name: drf
    enableJobOrder: false
  - name: predicates
  - name: proportion
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 5
      binpack.memory: 1
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
)");
  EXPECT_THAT(Lines(r), ::testing::IsEmpty());
  const model::SchedulerConfiguration& c = *r.manifests.scheduler_config;
  EXPECT_TRUE(c.volcano.preempt);
  EXPECT_TRUE(c.volcano.reclaim);
  EXPECT_FALSE(c.volcano.drf_job_order);
  EXPECT_TRUE(c.volcano.sla);
  EXPECT_DOUBLE_EQ(*c.volcano.sla_waiting_seconds, 3723);
  EXPECT_TRUE(c.volcano.task_topology);
  EXPECT_EQ(c.volcano.task_topology_weight, 10);
  EXPECT_EQ(c.scoring, model::ScoringPolicy::kBinpack);
  EXPECT_EQ(c.binpack_weights,
            (std::map<std::string, int64_t>{
                {"cpu", 5}, {"example.com/foo", 1}, {"memory", 1}, {"nvidia.com/gpu", 2}}));
}

TEST(VolcanoSchedulerConf, WarnsForWhatMusterDoesNotHave) {
  DecodeResult r = Decode(R"(actions: "enqueue, allocate, shuffle, teleport"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: overcommit
    arguments:
      overcommit-factor: 1.2
  - name: tdm
  - name: frobnicate
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments:
      leastrequested.weight: 1
      mostrequested.weight: 5
  - name: numaaware
    arguments:
      weight: 10
configurations:
- name: allocate
  arguments: {x: 1}
)");
  EXPECT_FALSE(r.HasErrors());
  std::vector<std::string> lines = Lines(r);
  auto has = [&](const std::string& what) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(
      has("t.yaml:1: volcano-scheduler.conf: actions: warning: action shuffle is not supported"));
  EXPECT_TRUE(has("unknown action \"teleport\""));
  EXPECT_TRUE(
      has("t.yaml:6: volcano-scheduler.conf: tiers[0].plugins[2].name: warning: plugin "
          "overcommit is not supported: muster admits a job only when its whole gang"));
  EXPECT_TRUE(has("plugin tdm is not supported"));
  EXPECT_TRUE(has("unknown plugin \"frobnicate\"; ignored"));
  EXPECT_TRUE(has("nodeorder: mostrequested outweighs leastrequested, so muster packs nodes"));
  EXPECT_TRUE(has("numaaware arguments are not used"));
  EXPECT_TRUE(has("arguments of action \"allocate\" are not used"));
  EXPECT_EQ(r.manifests.scheduler_config->scoring, model::ScoringPolicy::kBinpack);
  EXPECT_FALSE(r.manifests.scheduler_config->volcano.drf_job_order);
}

TEST(VolcanoSchedulerConf, InsideVolcanosConfigMap) {
  DecodeResult r = Decode(R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-scheduler-configmap
  namespace: volcano-system
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
      - name: sla
        arguments:
          sla-waiting-time: soon
      - name: predicates
      - name: proportion
      - name: nodeorder
)");
  // Lines count in the file that holds the ConfigMap.
  EXPECT_THAT(
      Lines(r),
      ::testing::Contains(HasSubstr(
          "t.yaml:15: ConfigMap volcano-system/volcano-scheduler-configmap: "
          "data[volcano-scheduler.conf].tiers[0].plugins[2].arguments.sla-waiting-time: ")));
  EXPECT_TRUE(r.HasErrors());
  EXPECT_FALSE(r.manifests.scheduler_config.has_value());
}

TEST(VolcanoSchedulerConf, ConfigMapMapsNodeorderToSpread) {
  DecodeResult r = Decode(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: predicates}, {name: proportion},
                {name: nodeorder}]
)");
  EXPECT_FALSE(r.HasErrors());
  EXPECT_THAT(Lines(r), ElementsAre(HasSubstr("scoringPolicy Spread")));
  EXPECT_EQ(r.manifests.scheduler_config->scoring, model::ScoringPolicy::kSpread);
}

TEST(VolcanoSchedulerConf, MusterConfigurationTakesVolcanoSettings) {
  DecodeResult r = Decode(R"(apiVersion: muster.dev/v1alpha1
kind: SchedulerConfiguration
volcano:
  preempt: false
  drfJobOrder: false
  taskTopologyWeight: 3
  slaWaitingTime: 10m
)");
  EXPECT_THAT(Lines(r), ::testing::IsEmpty());
  const auto& v = r.manifests.scheduler_config->volcano;
  EXPECT_FALSE(v.preempt);
  EXPECT_TRUE(v.reclaim);
  EXPECT_FALSE(v.drf_job_order);
  EXPECT_EQ(v.task_topology_weight, 3);
  EXPECT_DOUBLE_EQ(*v.sla_waiting_seconds, 600);
}

TEST(VolcanoSchedulerConf, SecondConfigurationIsAnError) {
  DecodeResult r = Decode(std::string(kSeedConf) + R"(---
apiVersion: muster.dev/v1alpha1
kind: SchedulerConfiguration
scoringPolicy: Spread
)");
  EXPECT_TRUE(r.HasErrors());
  EXPECT_THAT(Lines(r), ::testing::Contains(HasSubstr("a second SchedulerConfiguration")));
}

}  // namespace
}  // namespace muster::api
