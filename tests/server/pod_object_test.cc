#include "server/pod_object.h"

#include <gtest/gtest.h>

namespace muster::server {
namespace {

using nlohmann::json;

model::Workload OnePodSet() {
  model::Workload w;
  w.meta.api_version = "kubeflow.org/v1";
  w.meta.kind = "PyTorchJob";
  w.meta.name = "train";
  w.meta.namespace_ = "ml";
  model::PodSet ps;
  ps.name = "master";
  model::Container c;
  c.name = "pytorch";
  c.image = "trainer:1.0";
  c.env.push_back({"RANK", "7", std::nullopt});
  c.limits["memory"] = *Quantity::Parse("2Gi");
  c.limits["cpu"] = *Quantity::Parse("1");
  ps.tmpl.spec.containers.push_back(c);
  ps.tmpl.spec.scheduler_name = "default-scheduler";
  w.pod_sets.push_back(ps);
  return w;
}

const json* Condition(const json& pod, const std::string& type) {
  for (const json& c : pod["status"]["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

PodRunView RunView(PodRunState state) {
  PodRunView v;
  v.name = "train-master-0";
  v.node = "n1";
  v.state = state;
  v.started_at = "2026-12-07T08:00:00Z";
  v.controller_env = {{"MASTER_ADDR", "train-master-0"}, {"RANK", "0"}};
  return v;
}

TEST(PodObjectTest, SpecCarriesLimitsEnvAndMustersSchedulerName) {
  const json pod = BuildPodObject(OnePodSet(), RunView(PodRunState::kRunning), 0);
  const json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["limits"], (json{{"cpu", "1"}, {"memory", "2Gi"}}));
  // The template's RANK stays; the controller's other variables follow it.
  EXPECT_EQ(c["env"], (json::array({{{"name", "RANK"}, {"value", "7"}},
                                    {{"name", "MASTER_ADDR"}, {"value", "train-master-0"}}})));
  EXPECT_EQ(pod["spec"]["schedulerName"], "muster");
  EXPECT_EQ(pod["spec"]["nodeName"], "n1");
  EXPECT_EQ(pod["spec"]["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(pod["status"]["qosClass"], "Guaranteed");
}

TEST(PodObjectTest, ConditionsFollowThePodsState) {
  json pod = BuildPodObject(OnePodSet(), RunView(PodRunState::kWaiting), 0);
  EXPECT_EQ((*Condition(pod, "PodScheduled"))["status"], "True");
  EXPECT_EQ((*Condition(pod, "Ready"))["status"], "False");
  EXPECT_EQ((*Condition(pod, "Ready"))["reason"], "ContainersNotReady");
  EXPECT_EQ((*Condition(pod, "ContainersReady"))["message"],
            "containers with unready status: [pytorch]");

  pod = BuildPodObject(OnePodSet(), RunView(PodRunState::kRunning), 0);
  EXPECT_EQ((*Condition(pod, "Ready"))["status"], "True");
  EXPECT_EQ((*Condition(pod, "Ready"))["lastTransitionTime"], "2026-12-07T08:00:00Z");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["started"], true);

  PodRunView done = RunView(PodRunState::kFailed);
  done.exit_code = 1;
  done.finished_at = "2026-12-07T08:05:00Z";
  pod = BuildPodObject(OnePodSet(), done, 0);
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ((*Condition(pod, "Ready"))["status"], "False");
  EXPECT_EQ((*Condition(pod, "Ready"))["reason"], "PodCompleted");
  EXPECT_EQ((*Condition(pod, "ContainersReady"))["lastTransitionTime"], "2026-12-07T08:05:00Z");
  EXPECT_EQ((*Condition(pod, "Initialized"))["status"], "True");
}

TEST(PodObjectTest, AUsersOwnPodKeepsItsSpecAndGetsTheBuiltStatus) {
  const json stored = {{"metadata", {{"name", "p"}}},
                       {"spec", {{"containers", json::array({{{"name", "own"}}})}}}};
  const json built = BuildPodObject(OnePodSet(), RunView(PodRunState::kRunning), 0);
  const json out = ExistingPodObject(stored, built);
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "own");
  EXPECT_EQ(out["spec"]["nodeName"], "n1");
  EXPECT_EQ((*Condition(out, "Ready"))["status"], "True");
}

TEST(PodObjectTest, AUsersOwnPodGetsItsFlavorsNodeLabelsAndTolerations) {
  const json toleration = {{"key", "spot"}, {"operator", "Exists"}};
  const json stored = {{"metadata", {{"name", "p"}}},
                       {"spec",
                        {{"containers", json::array({{{"name", "own"}}})},
                         {"nodeSelector", {{"team", "ml"}}},
                         {"tolerations", json::array({toleration})}}}};
  json built = BuildPodObject(OnePodSet(), RunView(PodRunState::kRunning), 0);
  built["spec"]["nodeSelector"] = {{"team", "ml"}, {"pool", "spot"}};
  built["spec"]["tolerations"] =
      json::array({toleration, {{"key", "gpu"}, {"operator", "Exists"}}});
  const json out = ExistingPodObject(stored, built);
  EXPECT_EQ(out["spec"]["nodeSelector"], json({{"pool", "spot"}, {"team", "ml"}}));
  EXPECT_EQ(out["spec"]["tolerations"],
            json::array({toleration, {{"key", "gpu"}, {"operator", "Exists"}}}));
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "own");
}

}  // namespace
}  // namespace muster::server
