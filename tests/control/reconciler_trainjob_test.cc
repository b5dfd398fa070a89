// TrainJobs in serve: the runtime comes from the store; a TrainJob whose runtime is
// missing waits with a condition naming it and runs once the runtime is created.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::json;

constexpr const char* kTrainJobs = "trainjobs.trainer.kubeflow.org";

json Runtime(const std::string& name) {
  json container = {{"name", "node"}, {"image", "trainer"}};
  json node = {
      {"name", "node"},
      {"template",
       {{"metadata", {{"labels", {{"trainer.kubeflow.org/trainjob-ancestor-step", "trainer"}}}}},
        {"spec", {{"template", {{"spec", {{"containers", json::array({container})}}}}}}}}}};
  return {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
          {"kind", "ClusterTrainingRuntime"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"mlPolicy", {{"numNodes", 1}, {"torch", json::object()}}},
            {"template", {{"spec", {{"replicatedJobs", json::array({node})}}}}}}}};
}

json TrainJob(const std::string& name, const std::string& runtime, int nodes, int gpus) {
  return {
      {"apiVersion", "trainer.kubeflow.org/v1alpha1"},
      {"kind", "TrainJob"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"labels", {{"kueue.x-k8s.io/queue-name", "team"}}}}},
      {"spec",
       {{"runtimeRef", {{"name", runtime}}},
        {"trainer",
         {{"numNodes", nodes},
          {"resourcesPerNode",
           {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}};
}

class ReconcilerTrainJobTest : public ::testing::Test {
 protected:
  ReconcilerTrainJobTest() : bench_(ReconcilerMode::kServe) {}
  json Get(const std::string& name) { return bench_.Get(kTrainJobs, "ml", name); }
  Bench bench_;
};

TEST_F(ReconcilerTrainJobTest, RunsAsOneGangAndEndsComplete) {
  bench_.Configure(2, 4, 8);
  bench_.Create("clustertrainingruntimes.trainer.kubeflow.org", "", Runtime("torch"));
  bench_.Build();
  bench_.Create(kTrainJobs, "ml", TrainJob("llm", "torch", 2, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/llm"));
  json wl = bench_.Get("workloads.kueue.x-k8s.io", "ml", "trainjob-llm");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 1u);
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "node");
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 2);
  EXPECT_EQ(Condition(Get("llm"), "Created"), "True");

  bench_.runtime.Finish("ml/llm", true);
  bench_.Step();
  EXPECT_EQ(Condition(Get("llm"), "Complete"), "True");
  json jobs = Get("llm")["status"]["jobsStatus"];
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["name"], "node");
  EXPECT_EQ(jobs[0]["succeeded"], 1);  // one child Job of two pods
  EXPECT_EQ(jobs[0]["active"], 0);
}

TEST_F(ReconcilerTrainJobTest, WaitsForAMissingRuntimeThenRuns) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create(kTrainJobs, "ml", TrainJob("llm", "later", 1, 4));
  bench_.Step();
  EXPECT_TRUE(bench_.runtime.events.empty());
  json job = Get("llm");
  std::string reason;
  EXPECT_EQ(Condition(job, "Created", &reason), "False");
  EXPECT_EQ(reason, "TrainingRuntimeNotFound");
  EXPECT_THAT(job.dump(), HasSubstr("ClusterTrainingRuntime \\\"later\\\" not found"));
  const size_t writes = bench_.sink.log.size();
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.log.size(), writes);  // said once

  const engine::Engine* engine = bench_.reconciler->engine();
  bench_.Create("clustertrainingruntimes.trainer.kubeflow.org", "", Runtime("later"));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/llm"));
  EXPECT_EQ(Condition(Get("llm"), "Created"), "True");
  // Only job decoding reads a runtime: the engine is not rebuilt for it.
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  EXPECT_EQ(bench_.reconciler->stats().decoding_updates, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 0);
}

TEST_F(ReconcilerTrainJobTest, ATrainJobStoredBeforeAStartWaitsForItsRuntimeToo) {
  bench_.Configure(2, 4, 8);
  bench_.Create(kTrainJobs, "ml", TrainJob("early", "absent", 1, 4));
  bench_.Build();  // a restart: the TrainJob is in the store already
  bench_.Step();
  std::string reason;
  EXPECT_EQ(Condition(Get("early"), "Created", &reason), "False");
  EXPECT_EQ(reason, "TrainingRuntimeNotFound");
  bench_.Create("clustertrainingruntimes.trainer.kubeflow.org", "", Runtime("absent"));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/early"));
}

}  // namespace
}  // namespace muster::control
