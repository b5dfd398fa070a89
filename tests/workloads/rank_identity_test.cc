#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using EnvMap = std::map<std::string, std::string>;
using testing::Kubeflow;
using testing::Replica;

model::Workload BuildRanked(const model::JobObject& job) {
  Result<model::Workload> w = BuildWorkload(job, {});
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : model::Workload();
}

int32_t SetIndex(const model::Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    if (w.pod_sets[i].name == name) return static_cast<int32_t>(i);
  }
  ADD_FAILURE() << "no pod set " << name;
  return -1;
}

PodIdentity Id(const model::Workload& w, const std::string& set, int32_t index,
               const RankContext& context = {}) {
  return RankIdentity(w, SetIndex(w, set), index, context);
}

// --- PyTorchJob ---------------------------------------------------------------------

struct PyTorchCase {
  const char* name;
  const char* pod_set;
  int32_t index;
  EnvMap want;
};

void PrintTo(const PyTorchCase& c, std::ostream* os) { *os << c.name; }

class PyTorchRank : public ::testing::TestWithParam<PyTorchCase> {};

TEST_P(PyTorchRank, MatchesTrainingOperator) {
  // 1 master + 3 workers with 8 processes each.
  model::KubeflowJob job =
      Kubeflow("PyTorchJob", "pt", {Replica("Master", 1), Replica("Worker", 3)});
  job.nproc_per_node = "8";
  model::Workload w = BuildRanked(job);
  PodIdentity id = Id(w, GetParam().pod_set, GetParam().index);
  EXPECT_EQ(id.env, GetParam().want) << GetParam().name;
  EXPECT_EQ(id.hostname,
            std::string("pt-") + GetParam().pod_set + "-" + std::to_string(GetParam().index));
  EXPECT_EQ(id.mpi_hostfile, "");
}

EnvMap PyTorchEnv(const char* rank) {
  return {{"MASTER_ADDR", "pt-master-0"},
          {"MASTER_PORT", "23456"},
          {"PET_MASTER_ADDR", "pt-master-0"},
          {"PET_MASTER_PORT", "23456"},
          {"PET_NNODES", "4"},
          {"PET_NODE_RANK", rank},
          {"PET_NPROC_PER_NODE", "8"},
          {"PYTHONUNBUFFERED", "1"},
          {"RANK", rank},
          {"WORLD_SIZE", "32"}};
}

INSTANTIATE_TEST_SUITE_P(Table, PyTorchRank,
                         ::testing::Values(PyTorchCase{"master", "master", 0, PyTorchEnv("0")},
                                           PyTorchCase{"worker 0", "worker", 0, PyTorchEnv("1")},
                                           PyTorchCase{"worker 2", "worker", 2, PyTorchEnv("3")}));

TEST(PyTorchRankTest, WithoutMasterWorkerZeroIsRankZero) {
  model::Workload w = BuildRanked(Kubeflow("PyTorchJob", "pt", {Replica("Worker", 2)}));
  EnvMap want = {{"MASTER_ADDR", "pt-worker-0"},
                 {"MASTER_PORT", "23456"},
                 {"PET_MASTER_ADDR", "pt-worker-0"},
                 {"PET_MASTER_PORT", "23456"},
                 {"PET_NNODES", "2"},
                 {"PET_NODE_RANK", "1"},
                 {"PET_NPROC_PER_NODE", "auto"},
                 {"PYTHONUNBUFFERED", "1"},
                 {"RANK", "1"},
                 {"WORLD_SIZE", "2"}};
  EXPECT_EQ(Id(w, "worker", 1).env, want);
  EXPECT_EQ(Id(w, "worker", 0).env.at("RANK"), "0");
}

TEST(PyTorchRankTest, ContextSetsAddressPortAndHostnames) {
  model::Workload w =
      BuildRanked(Kubeflow("PyTorchJob", "pt", {Replica("Master", 1), Replica("Worker", 1)}));
  RankContext context;
  context.master_port = 29500;
  context.hostnames["master"] = {"node-a"};
  PodIdentity id = Id(w, "worker", 0, context);
  EXPECT_EQ(id.env.at("MASTER_ADDR"), "node-a");
  EXPECT_EQ(id.env.at("MASTER_PORT"), "29500");
  EXPECT_EQ(id.env.at("PET_MASTER_PORT"), "29500");
  EXPECT_EQ(Id(w, "master", 0, context).hostname, "node-a");

  context.master_addr = "10.0.0.1";
  EXPECT_EQ(Id(w, "worker", 0, context).env.at("MASTER_ADDR"), "10.0.0.1");
}

TEST(PyTorchRankTest, DefaultContextReadsTheDeclaredMasterPort) {
  model::PodTemplate master = testing::Template();
  master.spec.containers[0].name = "pytorch";
  master.spec.containers[0].ports = {{"pytorchjob-port", 29400}};
  model::Workload w = BuildRanked(
      Kubeflow("PyTorchJob", "pt", {Replica("Master", 1, master), Replica("Worker", 1)}));
  RankContext context = DefaultRankContext(w);
  EXPECT_EQ(context.master_port, 29400);
  EXPECT_EQ(Id(w, "worker", 0, context).env.at("MASTER_PORT"), "29400");
  EXPECT_EQ(DefaultRankContext(BuildRanked(Kubeflow("PyTorchJob", "p", {Replica("Worker", 1)})))
                .master_port,
            23456);
}

TEST(PyTorchRankTest, ElasticPolicy) {
  model::KubeflowJob job = Kubeflow("PyTorchJob", "el", {Replica("Worker", 4)});
  job.elastic_policy = model::ElasticPolicy{};
  job.elastic_policy->min_replicas = 2;
  job.elastic_policy->max_replicas = 4;
  job.elastic_policy->max_restarts = 3;
  model::Workload w = BuildRanked(job);
  EnvMap want = {{"MASTER_ADDR", "el-worker-0"},
                 {"MASTER_PORT", "23456"},
                 {"PET_MASTER_ADDR", "el-worker-0"},
                 {"PET_MASTER_PORT", "23456"},
                 {"PET_MAX_RESTARTS", "3"},
                 {"PET_NNODES", "2:4"},
                 {"PET_NODE_RANK", "2"},
                 {"PET_NPROC_PER_NODE", "auto"},
                 {"PET_RDZV_BACKEND", "c10d"},
                 {"PET_RDZV_ENDPOINT", "el-worker-0:23456"},
                 {"PYTHONUNBUFFERED", "1"},
                 {"RANK", "2"},
                 {"WORLD_SIZE", "4"}};
  EXPECT_EQ(Id(w, "worker", 2).env, want);
}

TEST(PyTorchRankTest, NonIntegerNprocCountsAsOne) {
  model::KubeflowJob job =
      Kubeflow("PyTorchJob", "pt", {Replica("Master", 1), Replica("Worker", 1)});
  job.nproc_per_node = "gpu";
  model::Workload w = BuildRanked(job);
  EXPECT_EQ(Id(w, "master", 0).env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(Id(w, "master", 0).env.at("PET_NPROC_PER_NODE"), "gpu");
}

// --- TFJob ----------------------------------------------------------------------------

// Addresses are the operator's per-replica Services, "<job>-<type>-<index>.<ns>.svc".
TEST(TensorFlowRankTest, TfConfigIsSortedAndSkipsTheEvaluator) {
  model::Workload w = BuildRanked(Kubeflow(
      "TFJob", "tf",
      {Replica("Worker", 2), Replica("PS", 1), Replica("Chief", 1), Replica("Evaluator", 1)}));
  EXPECT_EQ(Id(w, "worker", 1).env,
            (EnvMap{{"TF_CONFIG",
                     R"({"cluster":{"chief":["tf-chief-0.default.svc:2222"],)"
                     R"("ps":["tf-ps-0.default.svc:2222"],)"
                     R"("worker":["tf-worker-0.default.svc:2222","tf-worker-1.default.svc:2222"]},)"
                     R"("environment":"cloud","task":{"index":1,"type":"worker"}})"}}));
  EXPECT_EQ(Id(w, "evaluator", 0).env.at("TF_CONFIG"),
            R"({"cluster":{"chief":["tf-chief-0.default.svc:2222"],)"
            R"("ps":["tf-ps-0.default.svc:2222"],)"
            R"("worker":["tf-worker-0.default.svc:2222","tf-worker-1.default.svc:2222"]},)"
            R"("environment":"cloud","task":{"index":0,"type":"evaluator"}})");
}

TEST(TensorFlowRankTest, DeclaredPortAndSingleReplica) {
  model::PodTemplate worker = testing::Template();
  worker.spec.containers[0].name = "tensorflow";
  worker.spec.containers[0].ports = {{"tfjob-port", 3333}};
  model::Workload w = BuildRanked(Kubeflow("TFJob", "tf", {Replica("Worker", 2, worker)}));
  EXPECT_EQ(Id(w, "worker", 0).env.at("TF_CONFIG"),
            R"({"cluster":{"worker":["tf-worker-0.default.svc:3333",)"
            R"("tf-worker-1.default.svc:3333"]},"environment":"cloud",)"
            R"("task":{"index":0,"type":"worker"}})");

  // Addresses the executor chooses (pod IPs) are used verbatim.
  RankContext context;
  context.hostnames["worker"] = {"127.64.0.1", "127.64.0.2"};
  EXPECT_EQ(Id(w, "worker", 1, context).env.at("TF_CONFIG"),
            R"({"cluster":{"worker":["127.64.0.1:3333","127.64.0.2:3333"]},)"
            R"("environment":"cloud","task":{"index":1,"type":"worker"}})");

  // Not distributed: the operator sets no TF_CONFIG.
  EXPECT_TRUE(
      Id(BuildRanked(Kubeflow("TFJob", "one", {Replica("Worker", 1)})), "worker", 0).env.empty());
}

// --- MPIJob ---------------------------------------------------------------------------

TEST(MpiRankTest, OpenMpiLauncherHostfile) {
  model::KubeflowJob job =
      Kubeflow("MPIJob", "mpi", {Replica("Launcher", 1), Replica("Worker", 2)});
  job.slots_per_worker = 4;
  model::Workload w = BuildRanked(job);
  PodIdentity launcher = Id(w, "launcher", 0);
  // Workers resolve through the job's headless Service (mpi-operator v2).
  EXPECT_EQ(launcher.mpi_hostfile,
            "mpi-worker-0.mpi.default.svc slots=4\nmpi-worker-1.mpi.default.svc slots=4\n");
  EXPECT_EQ(launcher.env, (EnvMap{{"K_MPI_JOB_ROLE", "launcher"},
                                  {"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"},
                                  {"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
                                  {"OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"}}));
  PodIdentity worker = Id(w, "worker", 1);
  EXPECT_EQ(worker.hostname, "mpi-worker-1");
  EXPECT_EQ(worker.env, (EnvMap{{"K_MPI_JOB_ROLE", "worker"}}));
  EXPECT_EQ(worker.mpi_hostfile, "");
}

TEST(MpiRankTest, HydraImplementationsAndContextHostnames) {
  model::KubeflowJob job =
      Kubeflow("MPIJob", "mpi", {Replica("Launcher", 1), Replica("Worker", 2)});
  job.slots_per_worker = 2;
  job.mpi_implementation = "Intel";
  model::Workload w = BuildRanked(job);
  RankContext context;
  context.hostnames["worker"] = {"mpi-worker-0.mpi-worker.ml.svc",
                                 "mpi-worker-1.mpi-worker.ml.svc"};
  PodIdentity launcher = Id(w, "launcher", 0, context);
  EXPECT_EQ(launcher.mpi_hostfile,
            "mpi-worker-0.mpi-worker.ml.svc:2\nmpi-worker-1.mpi-worker.ml.svc:2\n");
  EXPECT_EQ(launcher.env,
            (EnvMap{{"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10"},
                    {"I_MPI_HYDRA_HOST_FILE", "/etc/mpi/hostfile"},
                    {"K_MPI_JOB_ROLE", "launcher"}}));

  job.mpi_implementation = "MPICH";
  launcher = Id(BuildRanked(job), "launcher", 0);
  EXPECT_EQ(launcher.env.at("HYDRA_HOST_FILE"), "/etc/mpi/hostfile");
  EXPECT_EQ(launcher.env.at("HYDRA_LAUNCH_EXTRA_ARGS"), "-o ConnectionAttempts=10");
}

// --- batch Job and JobSet --------------------------------------------------------------

TEST(BatchRankTest, IndexedJobsGetTheCompletionIndex) {
  model::BatchJob job = testing::BatchJob("b", 3, 3);
  job.spec.completion_mode = model::CompletionMode::kIndexed;
  PodIdentity id = Id(BuildRanked(job), "main", 2);
  EXPECT_EQ(id.env, (EnvMap{{"JOB_COMPLETION_INDEX", "2"}}));
  // The Indexed Job hostname "<job>-<index>" (what "b-2.<subdomain>" resolves).
  EXPECT_EQ(id.hostname, "b-2");

  EXPECT_TRUE(Id(BuildRanked(testing::BatchJob("n", 3)), "main", 1).env.empty());
}

// The seed 001 lab: "pytorch-ddp-0.pytorch-ddp-svc" names pod 0 of the Indexed Job.
TEST(PodNamingTest, HostnamesAndSubdomainsOfTheKindsControllers) {
  model::BatchJob job = testing::BatchJob("pytorch-ddp", 2, 2);
  job.spec.completion_mode = model::CompletionMode::kIndexed;
  job.spec.tmpl.spec.subdomain = "pytorch-ddp-svc";
  model::Workload w = BuildRanked(job);
  EXPECT_EQ(DefaultHostname(w, 0, 1), "pytorch-ddp-1");
  EXPECT_EQ(DefaultSubdomain(w, 0), "pytorch-ddp-svc");
  EXPECT_EQ(DefaultSubdomain(BuildRanked(testing::BatchJob("n", 1)), 0), "");
  // Controllers that create a headless Service named after the job.
  EXPECT_EQ(
      DefaultSubdomain(BuildRanked(testing::JobSet("js", {testing::Replicated("w", 1, 2)})), 0),
      "js");
  model::Workload mpi =
      BuildRanked(Kubeflow("MPIJob", "mpi", {Replica("Launcher", 1), Replica("Worker", 2)}));
  EXPECT_EQ(DefaultSubdomain(mpi, 1), "mpi");
  // The training operator's per-replica Services need no subdomain.
  model::Workload pt = BuildRanked(Kubeflow("PyTorchJob", "pt", {Replica("Master", 1)}));
  EXPECT_EQ(DefaultSubdomain(pt, 0), "");
  EXPECT_EQ(DefaultHostname(pt, 0, 0), "pt-master-0");
  EXPECT_EQ(DefaultSubdomain(pt, 7), "");
}

TEST(JobSetRankTest, ChildJobIndexAndCompletionIndex) {
  model::Workload w = BuildRanked(testing::JobSet(
      "js", {testing::Replicated("driver", 1, 1), testing::Replicated("workers", 2, 3)}));
  // Pod 4 of "workers" is pod 1 of child Job 1.
  PodIdentity id = Id(w, "workers", 4);
  EXPECT_EQ(id.hostname, "js-workers-1-1");
  EXPECT_EQ(id.env, (EnvMap{{"JOBSET_NAME", "js"},
                            {"JOB_COMPLETION_INDEX", "1"},
                            {"JOB_INDEX", "1"},
                            {"REPLICATED_JOB_NAME", "workers"}}));
  EXPECT_EQ(Id(w, "driver", 0).hostname, "js-driver-0-0");
  EXPECT_EQ(DefaultHostname(w, 1, 0), "js-workers-0-0");
}

// --- Volcano Job ----------------------------------------------------------------------

TEST(VolcanoRankTest, EnvAndSvcPlugins) {
  model::VolcanoJob job =
      testing::VolcanoJob("vj", {testing::Task("ps", 1), testing::Task("worker-gpu", 2)});
  job.plugins = {{"env", {}}, {"svc", {}}};
  model::Workload w = BuildRanked(job);
  PodIdentity id = Id(w, "worker-gpu", 1);
  EXPECT_EQ(id.hostname, "vj-worker-gpu-1");
  EXPECT_EQ(id.env, (EnvMap{{"VC_PS_HOSTS", "vj-ps-0.vj"},
                            {"VC_PS_NUM", "1"},
                            {"VC_TASK_INDEX", "1"},
                            {"VC_WORKER_GPU_HOSTS", "vj-worker-gpu-0.vj,vj-worker-gpu-1.vj"},
                            {"VC_WORKER_GPU_NUM", "2"},
                            {"VK_TASK_INDEX", "1"}}));
  // The svc plugin's ConfigMap, mounted at /etc/volcano: "<task, - as _>.host", a host a line.
  EXPECT_EQ(id.volcano_hostfiles,
            (EnvMap{{"ps.host", "vj-ps-0.vj"},
                    {"worker_gpu.host", "vj-worker-gpu-0.vj\nvj-worker-gpu-1.vj"}}));
}

TEST(VolcanoRankTest, PluginsAreOptIn) {
  model::VolcanoJob job = testing::VolcanoJob("vj", {testing::Task("t", 2)});
  EXPECT_TRUE(Id(BuildRanked(job), "t", 1).env.empty());
  EXPECT_TRUE(Id(BuildRanked(job), "t", 1).volcano_hostfiles.empty());

  job.plugins = {{"env", {}}};
  EXPECT_EQ(Id(BuildRanked(job), "t", 1).env,
            (EnvMap{{"VC_TASK_INDEX", "1"}, {"VK_TASK_INDEX", "1"}}));

  // A template subdomain replaces the job name as the Service domain.
  job.plugins = {{"svc", {}}};
  job.tasks[0].tmpl.spec.subdomain = "mesh";
  EXPECT_EQ(Id(BuildRanked(job), "t", 0).env.at("VC_T_HOSTS"), "vj-t-0.mesh,vj-t-1.mesh");
}

TEST(RankIdentityTest, OutOfRangeIsEmpty) {
  model::Workload w = BuildRanked(testing::BatchJob("b", 1));
  EXPECT_EQ(RankIdentity(w, 5, 0, {}).hostname, "");
  EXPECT_EQ(RankIdentity(w, -1, 0, {}).hostname, "");
  EXPECT_EQ(DefaultHostname(w, 3, 0), "");
}

}  // namespace
}  // namespace muster::workloads
