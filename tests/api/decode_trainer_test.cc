// Kubeflow Trainer v2 kinds: ClusterTrainingRuntime, TrainingRuntime, TrainJob.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;

constexpr char kRuntime[] = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed, namespace: ignored}
spec:
  mlPolicy:
    numNodes: 1
    torch: {numProcPerNode: auto}
  podGroupPolicy:
    coscheduling: {}
  template:
    metadata: {labels: {team: ml}}
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: pytorch/pytorch}
)";

TEST(DecodeTrainer, ClusterTrainingRuntime) {
  auto r = Decode(kRuntime);
  ASSERT_THAT(Lines(r), IsEmpty());
  ASSERT_EQ(r.manifests.training_runtimes.size(), 1u);
  const auto& rt = r.manifests.training_runtimes[0];
  EXPECT_EQ(rt.meta.kind, "ClusterTrainingRuntime");
  EXPECT_EQ(rt.meta.namespace_, "");  // cluster-scoped
  EXPECT_EQ(rt.num_nodes, 1);
  ASSERT_TRUE(rt.torch);
  EXPECT_EQ(rt.torch->num_proc_per_node, "auto");
  ASSERT_EQ(rt.tmpl.replicated_jobs.size(), 1u);
  EXPECT_EQ(rt.tmpl.replicated_jobs[0].name, "node");
  EXPECT_EQ(rt.tmpl.meta.labels.at("team"), "ml");
  // JobSet's defaults apply to the template: Indexed completion.
  EXPECT_EQ(rt.tmpl.replicated_jobs[0].tmpl.completion_mode, model::CompletionMode::kIndexed);
}

TEST(DecodeTrainer, TrainJobFieldsAndDefaults) {
  auto r = Decode(std::string(kRuntime) + R"(---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mnist
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: my/trainer:1
    command: [torchrun, train.py]
    args: [--epochs, "3"]
    env: [{name: LR, value: "0.1"}]
    numNodes: 2
    numProcPerNode: 4
    resourcesPerNode:
      limits: {nvidia.com/gpu: 4}
  labels: {a: b}
  suspend: true
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  ASSERT_EQ(r.manifests.jobs.size(), 1u);
  const auto* job = std::get_if<model::TrainJob>(&r.manifests.jobs[0]);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->meta.namespace_, "default");
  EXPECT_EQ(job->runtime_ref.name, "torch-distributed");
  EXPECT_EQ(job->runtime_ref.kind, "ClusterTrainingRuntime");
  EXPECT_EQ(job->runtime_ref.api_group, "trainer.kubeflow.org");
  EXPECT_EQ(job->trainer.image, "my/trainer:1");
  EXPECT_THAT(job->trainer.command, ElementsAre("torchrun", "train.py"));
  EXPECT_THAT(job->trainer.args, ElementsAre("--epochs", "3"));
  ASSERT_EQ(job->trainer.env.size(), 1u);
  EXPECT_EQ(job->trainer.num_nodes, 2);
  EXPECT_EQ(job->trainer.num_proc_per_node, "4");
  ASSERT_TRUE(job->trainer.limits);
  EXPECT_EQ(job->trainer.limits->at("nvidia.com/gpu").Value(), 4);
  EXPECT_EQ(job->labels.at("a"), "b");
  EXPECT_TRUE(job->suspend);
}

TEST(DecodeTrainer, ErrorsNameTheField) {
  auto r = Decode(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: bad, namespace: ml}
spec:
  runtimeRef: {name: torch, kind: Runtime, apiGroup: example.com}
  trainer:
    numNodes: 0
    numProcPerNode: many
    env: [{name: PET_NNODES, value: "3"}]
  managedBy: someone
)");
  auto lines = Lines(r);
  EXPECT_TRUE(r.manifests.jobs.empty());
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("t.yaml:5: TrainJob ml/bad: spec.runtimeRef.kind"));
  EXPECT_THAT(all, HasSubstr("spec.runtimeRef.apiGroup: must be trainer.kubeflow.org"));
  EXPECT_THAT(all, HasSubstr("t.yaml:7: TrainJob ml/bad: spec.trainer.numNodes"));
  EXPECT_THAT(
      all, HasSubstr("spec.trainer.numProcPerNode: must be an integer or one of auto, cpu, gpu"));
  EXPECT_THAT(all, HasSubstr("spec.trainer.env[0].name: \"PET_NNODES\" is reserved"));
  EXPECT_THAT(all, HasSubstr("spec.managedBy"));
}

TEST(DecodeTrainer, RuntimeRefIsRequiredAndNameIsRfc1035) {
  auto r = Decode(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: 1job}
spec: {}
)");
  std::string all;
  for (const auto& l : Lines(r)) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("metadata.name: must be an RFC 1035 DNS label"));
  EXPECT_THAT(all, HasSubstr("spec.runtimeRef: is required"));
}

TEST(DecodeTrainer, IgnoredFieldsAreWarnedAndMissingRuntimeToo) {
  auto r = Decode(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: ml}
spec:
  runtimeRef: {name: nowhere, kind: TrainingRuntime}
  initializer:
    dataset: {storageUri: "hf://x"}
  podTemplateOverrides: []
  bogus: 1
)");
  ASSERT_EQ(r.manifests.jobs.size(), 1u);
  std::string all;
  for (const auto& l : Lines(r)) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("spec.initializer: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.podTemplateOverrides: warning: not applied"));
  EXPECT_THAT(all, HasSubstr("spec.bogus: warning: unknown field"));
  EXPECT_THAT(all,
              HasSubstr("spec.runtimeRef.name: warning: TrainingRuntime \"ml/nowhere\" is not in "
                        "the input"));
}

TEST(DecodeTrainer, RuntimeMpiAndElasticAreWarned) {
  auto r = Decode(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: mpi, namespace: ml}
spec:
  mlPolicy:
    mpi: {numProcPerNode: 1}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template: {spec: {template: {spec: {containers: [{name: x, image: y}]}}}}
)");
  ASSERT_EQ(r.manifests.training_runtimes.size(), 1u);
  EXPECT_EQ(r.manifests.training_runtimes[0].meta.namespace_, "ml");
  std::string all;
  for (const auto& l : Lines(r)) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("spec.mlPolicy.mpi: warning: the MPI policy is not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.template.spec.replicatedJobs: warning: no replicated job"));
}

}  // namespace
}  // namespace muster::api
