#include "control/job_templates.h"

#include <gtest/gtest.h>

namespace muster::control {
namespace {

using json = nlohmann::json;

json BatchJob() {
  return json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "team-a", "resourceVersion": "7",
                 "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": {"suspend": true, "parallelism": 2,
             "template": {"spec": {"nodeSelector": {"disk": "ssd"},
                                   "containers": [{"name": "c", "image": "x"}]}}}})");
}

json PyTorchJob() {
  return json::parse(R"({
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "pt", "namespace": "team-a"},
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch"}]}}},
      "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "pytorch"}]}}}}}})");
}

std::map<std::string, json> Flavors() {
  return {{"a100", json::parse(R"({"metadata": {"name": "a100"}, "spec": {
             "nodeLabels": {"gpu": "a100"},
             "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}})")},
          {"cpu", json::parse(R"({"metadata": {"name": "cpu"}, "spec": {}})")}};
}

TEST(JobTemplatesTest, SuspendPathPerKind) {
  EXPECT_EQ(SuspendPath("Job", "batch/v1"), "/spec/suspend");
  EXPECT_EQ(SuspendPath("JobSet", "jobset.x-k8s.io/v1alpha2"), "/spec/suspend");
  EXPECT_EQ(SuspendPath("PyTorchJob", "kubeflow.org/v1"), "/spec/runPolicy/suspend");
  EXPECT_EQ(SuspendPath("MPIJob", "kubeflow.org/v2beta1"), "/spec/runPolicy/suspend");
  EXPECT_FALSE(SuspendPath("Job", "batch.volcano.sh/v1alpha1").has_value());
  EXPECT_FALSE(SuspendPath("Unknown", "example.com/v1").has_value());
}

TEST(JobTemplatesTest, PodTemplatePaths) {
  EXPECT_EQ(PodTemplatePath(BatchJob(), "main"), "/spec/template");
  EXPECT_FALSE(PodTemplatePath(BatchJob(), "worker").has_value());
  EXPECT_EQ(PodTemplatePath(PyTorchJob(), "worker"), "/spec/pytorchReplicaSpecs/Worker/template");
  json js = json::parse(R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "spec": {"replicatedJobs": [{"name": "driver"}, {"name": "workers"}]}})");
  EXPECT_EQ(PodTemplatePath(js, "workers"), "/spec/replicatedJobs/1/template/spec/template");
  json vc = json::parse(R"({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "spec": {"tasks": [{"name": "ps"}, {}]}})");
  EXPECT_EQ(PodTemplatePath(vc, "default1"), "/spec/tasks/1/template");
}

TEST(JobTemplatesTest, AdmitInjectsFlavorAndUnsuspendsThenRestores) {
  json job = BatchJob();
  auto admitted = Admitted(job, InjectionsFor({{"main", {"a100", "cpu"}}}, Flavors()));
  ASSERT_TRUE(admitted.ok()) << admitted.status().message();
  const json& spec = (*admitted)["spec"]["template"]["spec"];
  EXPECT_FALSE((*admitted)["spec"]["suspend"].get<bool>());
  EXPECT_EQ(spec["nodeSelector"], json::parse(R"({"disk": "ssd", "gpu": "a100"})"));
  ASSERT_EQ(spec["tolerations"].size(), 1u);
  EXPECT_EQ((*admitted)["metadata"]["resourceVersion"], "7");  // the write's precondition

  auto suspended = Suspended(*admitted);
  ASSERT_TRUE(suspended.ok());
  EXPECT_TRUE(IsSuspended(*suspended));
  auto restored = Restored(*suspended);
  ASSERT_TRUE(restored.has_value());
  EXPECT_EQ((*restored)["spec"], job["spec"]);
  EXPECT_FALSE((*restored)["metadata"].contains("annotations"));
  EXPECT_FALSE(Restored(*restored).has_value());
}

TEST(JobTemplatesTest, ReadmissionKeepsTheFirstOriginals) {
  auto first = Admitted(BatchJob(), InjectionsFor({{"main", {"a100"}}}, Flavors()));
  ASSERT_TRUE(first.ok());
  auto again = Admitted(*first, InjectionsFor({{"main", {"a100"}}}, Flavors()));
  ASSERT_TRUE(again.ok());
  auto restored = Restored(*again);
  ASSERT_TRUE(restored.has_value());
  EXPECT_EQ((*restored)["spec"]["template"], BatchJob()["spec"]["template"]);
}

TEST(JobTemplatesTest, KubeflowRunPolicyIsCreated) {
  auto admitted = Admitted(PyTorchJob(),
                           InjectionsFor({{"master", {"a100"}}, {"worker", {"a100"}}}, Flavors()));
  ASSERT_TRUE(admitted.ok());
  EXPECT_FALSE((*admitted)["spec"]["runPolicy"]["suspend"].get<bool>());
  EXPECT_EQ((*admitted)["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"]
                       ["gpu"],
            "a100");
  auto suspended = Suspended(PyTorchJob());
  ASSERT_TRUE(suspended.ok());
  EXPECT_TRUE(IsSuspended(*suspended));
}

TEST(JobTemplatesTest, UnknownPodSetIsAnError) {
  auto admitted = Admitted(BatchJob(), InjectionsFor({{"worker", {"a100"}}}, Flavors()));
  EXPECT_FALSE(admitted.ok());
  EXPECT_NE(admitted.status().message().find("worker"), std::string::npos);
}

TEST(JobTemplatesTest, MalformedOriginalsAnnotationIsIgnored) {
  json job = BatchJob();
  job["metadata"]["annotations"][kOriginalTemplatesAnnotation] = R"([{"path": "no-slash"}])";
  auto restored = Restored(job);
  ASSERT_TRUE(restored.has_value());
  EXPECT_EQ((*restored)["spec"], job["spec"]);
}

}  // namespace
}  // namespace muster::control
