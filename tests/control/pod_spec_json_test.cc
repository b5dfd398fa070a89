#include "control/pod_spec_json.h"

#include <gtest/gtest.h>

namespace muster::control {
namespace {

using nlohmann::json;

Quantity Q(const char* text) { return *Quantity::Parse(text); }

model::Container Trainer() {
  model::Container c;
  c.name = "trainer";
  c.image = "registry:5000/team/trainer";
  c.command = {"python", "train.py"};
  c.env.push_back({"EPOCHS", "3", std::nullopt});
  model::EnvVar pod_name{"POD", "", model::EnvVarSource{}};
  pod_name.value_from->field_path = "metadata.name";
  c.env.push_back(pod_name);
  c.ports.push_back({"dist", 29500});
  c.requests["cpu"] = Q("2");
  c.limits["memory"] = Q("4Gi");
  c.limits["nvidia.com/gpu"] = Q("1");
  c.volume_mounts.push_back({"data", "/data", "", true});
  return c;
}

TEST(PodSpecJsonTest, WritesWhatTheModelHoldsWithLimitsAndDefaultedRequests) {
  model::PodSpec spec;
  spec.containers.push_back(Trainer());
  model::Volume data;
  data.name = "data";
  data.kind = model::VolumeKind::kPersistentVolumeClaim;
  data.source = "datasets";
  spec.volumes.push_back(data);
  spec.node_selector["gpu"] = "a100";
  model::Toleration t;
  t.key = "dedicated";
  t.value = "ml";
  t.effect = model::TaintEffect::kNoSchedule;
  spec.tolerations.push_back(t);
  spec.restart_policy = "Never";

  const json out = PodSpecJson(spec);
  const json& c = out["containers"][0];
  EXPECT_EQ(c["image"], "registry:5000/team/trainer");
  EXPECT_EQ(c["command"], json::array({"python", "train.py"}));
  EXPECT_EQ(c["env"][0], (json{{"name", "EPOCHS"}, {"value", "3"}}));
  EXPECT_EQ(c["env"][1]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.name");
  EXPECT_EQ(c["ports"][0], (json{{"containerPort", 29500}, {"name", "dist"}}));
  EXPECT_EQ(c["resources"]["limits"], (json{{"memory", "4Gi"}, {"nvidia.com/gpu", "1"}}));
  // A limit without a request is the request (SetDefaults_Container).
  EXPECT_EQ(c["resources"]["requests"],
            (json{{"cpu", "2"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(c["volumeMounts"][0],
            (json{{"name", "data"}, {"mountPath", "/data"}, {"readOnly", true}}));
  EXPECT_EQ(out["volumes"][0],
            (json{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "datasets"}}}}));
  EXPECT_EQ(out["nodeSelector"], (json{{"gpu", "a100"}}));
  EXPECT_EQ(
      out["tolerations"][0],
      (json{
          {"key", "dedicated"}, {"operator", "Equal"}, {"value", "ml"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(out["restartPolicy"], "Never");
}

TEST(PodSpecJsonTest, DefaultsAsTheApiServerDoesAndKeepsWhatIsSet) {
  model::PodSpec spec;
  spec.containers.push_back(Trainer());
  spec.containers.push_back(Trainer());
  spec.containers[1].name = "pinned";
  spec.containers[1].image = "repo/x:1.2";
  spec.containers[1].image_pull_policy = "Never";
  model::Volume config;
  config.name = "config";
  config.kind = model::VolumeKind::kConfigMap;
  config.source = "settings";
  spec.volumes.push_back(config);
  spec.service_account_name = "trainer";
  json out = PodSpecJson(spec);
  DefaultPodSpecJson(out);
  EXPECT_EQ(out["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(out["schedulerName"], "default-scheduler");
  EXPECT_EQ(out["serviceAccountName"], "trainer");
  EXPECT_EQ(out["serviceAccount"], "trainer");
  EXPECT_EQ(out["securityContext"], json::object());
  // No tag: Always (":5000" is the registry's port, not a tag).
  EXPECT_EQ(out["containers"][0]["imagePullPolicy"], "Always");
  EXPECT_EQ(out["containers"][1]["imagePullPolicy"], "Never");
  EXPECT_EQ(out["containers"][0]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(out["containers"][0]["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(out["volumes"][0]["configMap"]["defaultMode"], 0644);
}

TEST(PodSpecJsonTest, QosClassFollowsTheKubelet) {
  model::PodSpec spec;
  model::Container c;
  c.name = "c";
  spec.containers.push_back(c);
  EXPECT_EQ(PodQosClass(spec), "BestEffort");
  // A GPU alone does not count.
  spec.containers[0].limits["nvidia.com/gpu"] = Q("1");
  EXPECT_EQ(PodQosClass(spec), "BestEffort");
  spec.containers[0].limits["cpu"] = Q("1");
  spec.containers[0].limits["memory"] = Q("1Gi");
  EXPECT_EQ(PodQosClass(spec), "Guaranteed");  // requests default to limits
  spec.containers[0].requests["cpu"] = Q("500m");
  EXPECT_EQ(PodQosClass(spec), "Burstable");
  spec.containers[0].requests["cpu"] = Q("1000m");
  EXPECT_EQ(PodQosClass(spec), "Guaranteed");
  spec.containers.push_back(c);
  spec.containers[1].requests["memory"] = Q("1Mi");
  EXPECT_EQ(PodQosClass(spec), "Burstable");
}

}  // namespace
}  // namespace muster::control
