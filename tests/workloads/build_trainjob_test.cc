// TrainJob -> JobSet -> Workload: runtime resolution, trainer overrides, torch env.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using ::testing::HasSubstr;
using testing::MakeContainer;
using testing::Res;

model::TrainingRuntime TorchRuntime() {
  model::TrainingRuntime rt;
  rt.meta.kind = "ClusterTrainingRuntime";
  rt.meta.api_version = "trainer.kubeflow.org/v1alpha1";
  rt.meta.name = "torch";
  rt.num_nodes = 1;
  rt.torch = model::TorchPolicy{};
  model::ReplicatedJob init;
  init.name = "dataset-initializer";
  init.template_labels[model::kTrainJobAncestorLabel] = "dataset-initializer";
  init.tmpl.tmpl.spec.containers.push_back(
      MakeContainer("dataset-initializer", Res({{"cpu", "1"}})));
  init.tmpl.completion_mode = model::CompletionMode::kIndexed;
  init.tmpl.completions = 1;
  model::ReplicatedJob node;
  node.name = "node";
  node.template_labels[model::kTrainJobAncestorLabel] = "trainer";
  node.tmpl.completion_mode = model::CompletionMode::kIndexed;
  node.tmpl.completions = 1;
  model::Container c = MakeContainer("node", Res({{"cpu", "1"}}));
  c.env.push_back({"KEEP", "runtime", std::nullopt});
  c.env.push_back({"LR", "0.01", std::nullopt});
  node.tmpl.tmpl.spec.containers.push_back(c);
  rt.tmpl.replicated_jobs = {init, node};
  return rt;
}

model::TrainJob Job(int32_t nodes) {
  model::TrainJob job;
  job.meta.kind = "TrainJob";
  job.meta.api_version = "trainer.kubeflow.org/v1alpha1";
  job.meta.namespace_ = "ml";
  job.meta.name = "llm";
  job.runtime_ref.name = "torch";
  job.trainer.num_nodes = nodes;
  job.trainer.image = "my/trainer";
  job.trainer.command = {"sh", "-c", "echo $PET_NODE_RANK"};
  job.trainer.env.push_back({"LR", "0.1", std::nullopt});
  job.trainer.limits = Res({{"nvidia.com/gpu", "4"}, {"cpu", "8"}});
  return job;
}

TEST(TrainJob, RunsAsTheRuntimesJobSetWithTheTrainerApplied) {
  model::ManifestSet m;
  m.training_runtimes.push_back(TorchRuntime());
  auto w = BuildWorkload(Job(2), m);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->key, "ml/llm");
  EXPECT_EQ(w->meta.kind, "TrainJob");
  ASSERT_EQ(w->pod_sets.size(), 2u);
  const model::PodSet& node = w->pod_sets[1];
  EXPECT_EQ(node.name, "node");
  EXPECT_EQ(node.count, 2);  // TrainJob's numNodes over the runtime's 1
  EXPECT_EQ(node.pods_per_job, 2);
  EXPECT_EQ(w->min_available, 3);  // one gang: initializer and both nodes
  const model::Container& c = node.tmpl.spec.containers[0];
  EXPECT_EQ(c.image, "my/trainer");
  EXPECT_EQ(c.command.back(), "echo $PET_NODE_RANK");
  ASSERT_EQ(c.env.size(), 2u);
  EXPECT_EQ(c.env[1].value, "0.1");                       // the TrainJob's env wins
  EXPECT_EQ(c.requests.at("nvidia.com/gpu").Value(), 4);  // limits default the requests
  // "auto" with GPUs stays "auto" (torchrun counts the devices).
  EXPECT_EQ(w->rank.nproc_per_node, "auto");
  EXPECT_EQ(w->rank.torch_trainer_pod_set, "node");
}

TEST(TrainJob, TorchEnvOnEveryNodePod) {
  model::ManifestSet m;
  m.training_runtimes.push_back(TorchRuntime());
  auto w = BuildWorkload(Job(2), m);
  ASSERT_TRUE(w.ok()) << w.status().message();
  for (int32_t i = 0; i < 2; ++i) {
    PodIdentity id = RankIdentity(*w, 1, i, DefaultRankContext(*w));
    EXPECT_EQ(id.hostname, "llm-node-0-" + std::to_string(i));
    EXPECT_EQ(id.env["PET_NNODES"], "2");
    EXPECT_EQ(id.env["PET_NPROC_PER_NODE"], "auto");
    EXPECT_EQ(id.env["PET_NODE_RANK"], std::to_string(i));
    EXPECT_EQ(id.env["PET_MASTER_ADDR"], "llm-node-0-0.llm");
    EXPECT_EQ(id.env["PET_MASTER_PORT"], "29400");
    EXPECT_EQ(id.env["JOB_COMPLETION_INDEX"], std::to_string(i));
  }
  EXPECT_EQ(DefaultSubdomain(*w, 1), "llm");
  // The initializer step gets no torch env.
  PodIdentity init = RankIdentity(*w, 0, 0, DefaultRankContext(*w));
  EXPECT_EQ(init.env.count("PET_NNODES"), 0u);
}

TEST(TrainJob, NumProcPerNodeFollowsTheTorchPlugin) {
  model::ManifestSet m;
  m.training_runtimes.push_back(TorchRuntime());
  model::TrainJob cpu_only = Job(1);
  cpu_only.trainer.limits = Res({{"cpu", "6"}});
  auto w = BuildWorkload(cpu_only, m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->rank.nproc_per_node, "6");  // auto without GPUs: the CPU count
  model::TrainJob fixed = Job(1);
  fixed.trainer.num_proc_per_node = "3";
  w = BuildWorkload(fixed, m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->rank.nproc_per_node, "3");
  model::TrainJob none = Job(1);
  none.trainer.limits.reset();
  m.training_runtimes[0].torch->num_proc_per_node = "gpu";
  w = BuildWorkload(none, m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->rank.nproc_per_node, "gpu");
}

TEST(TrainJob, MissingRuntimeIsNotFoundNamingIt) {
  model::ManifestSet m;
  m.training_runtimes.push_back(TorchRuntime());
  model::TrainJob job = Job(2);
  job.runtime_ref.name = "absent";
  auto w = BuildWorkload(job, m);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(w.status().message(),
              HasSubstr("TrainJob ml/llm: spec.runtimeRef: ClusterTrainingRuntime \"absent\" "
                        "not found"));
  // A namespaced TrainingRuntime is found only in the TrainJob's namespace.
  model::TrainingRuntime other_ns = TorchRuntime();
  other_ns.meta.kind = "TrainingRuntime";
  other_ns.meta.namespace_ = "elsewhere";
  m.training_runtimes.push_back(other_ns);
  job.runtime_ref = {"torch", "TrainingRuntime", "trainer.kubeflow.org"};
  w = BuildWorkload(job, m);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("not found in namespace ml"));
}

TEST(TrainJob, RuntimeWithoutTrainerStepRefusesTrainerFields) {
  model::ManifestSet m;
  model::TrainingRuntime rt = TorchRuntime();
  rt.tmpl.replicated_jobs.pop_back();
  m.training_runtimes.push_back(rt);
  auto w = BuildWorkload(Job(2), m);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("spec.trainer: ClusterTrainingRuntime \"torch\" has "
                                              "no trainer step"));
}

}  // namespace
}  // namespace muster::workloads
