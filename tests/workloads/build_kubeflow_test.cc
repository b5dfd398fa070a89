#include <gtest/gtest.h>

#include <limits>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using testing::Kubeflow;
using testing::Replica;

struct PodSetWant {
  std::string name;
  int32_t count;
  int32_t min_count;
};

std::vector<PodSetWant> Summary(const model::Workload& w) {
  std::vector<PodSetWant> out;
  for (const auto& ps : w.pod_sets) out.push_back({ps.name, ps.count, ps.min_count});
  return out;
}

bool operator==(const PodSetWant& a, const PodSetWant& b) {
  return a.name == b.name && a.count == b.count && a.min_count == b.min_count;
}

void PrintTo(const PodSetWant& p, std::ostream* os) {
  *os << p.name << ":" << p.count << "/" << p.min_count;
}

struct KubeflowCase {
  const char* name;
  model::KubeflowJob job;
  std::vector<PodSetWant> want;
  int32_t want_min_available;
};

void PrintTo(const KubeflowCase& c, std::ostream* os) { *os << c.name; }

class KubeflowPodSets : public ::testing::TestWithParam<KubeflowCase> {};

TEST_P(KubeflowPodSets, NamedAndOrderedAsKueue) {
  Result<model::Workload> w = BuildWorkload(GetParam().job, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(Summary(*w), GetParam().want) << GetParam().name;
  EXPECT_EQ(w->min_available, GetParam().want_min_available) << GetParam().name;
}

std::vector<KubeflowCase> Cases() {
  std::vector<KubeflowCase> cases;
  // Manifest order is Worker first; Kueue orders Master first.
  cases.push_back({"pytorch",
                   Kubeflow("PyTorchJob", "pt", {Replica("Worker", 3), Replica("Master", 1)}),
                   {{"master", 1, 1}, {"worker", 3, 3}},
                   4});
  cases.push_back({"tf",
                   Kubeflow("TFJob", "tf",
                            {Replica("Worker", 4), Replica("Evaluator", 1), Replica("PS", 2),
                             Replica("Chief", 1)}),
                   {{"chief", 1, 1}, {"ps", 2, 2}, {"worker", 4, 4}, {"evaluator", 1, 1}},
                   8});
  cases.push_back({"mpi",
                   Kubeflow("MPIJob", "mpi", {Replica("Worker", 2), Replica("Launcher", 1)}),
                   {{"launcher", 1, 1}, {"worker", 2, 2}},
                   3});
  {
    KubeflowCase c{"pytorch elastic minReplicas bounds workers only",
                   Kubeflow("PyTorchJob", "el", {Replica("Master", 1), Replica("Worker", 8)}),
                   {{"master", 1, 1}, {"worker", 8, 2}},
                   3};
    c.job.elastic_policy = model::ElasticPolicy{};
    c.job.elastic_policy->min_replicas = 2;
    c.job.elastic_policy->max_replicas = 8;
    cases.push_back(c);
  }
  {
    // minAvailable 3: the master first, then two workers.
    KubeflowCase c{"schedulingPolicy.minAvailable",
                   Kubeflow("PyTorchJob", "ma", {Replica("Master", 1), Replica("Worker", 4)}),
                   {{"master", 1, 1}, {"worker", 4, 2}},
                   3};
    c.job.run_policy.scheduling_policy = model::SchedulingPolicy{};
    c.job.run_policy.scheduling_policy->min_available = 3;
    cases.push_back(c);
  }
  {
    KubeflowCase c{"minAvailable wins over elastic minReplicas",
                   Kubeflow("PyTorchJob", "both", {Replica("Worker", 4)}),
                   {{"worker", 4, 3}},
                   3};
    c.job.run_policy.scheduling_policy = model::SchedulingPolicy{};
    c.job.run_policy.scheduling_policy->min_available = 3;
    c.job.elastic_policy = model::ElasticPolicy{};
    c.job.elastic_policy->min_replicas = 1;
    cases.push_back(c);
  }
  cases.push_back({"lower-case replica type in the manifest",
                   Kubeflow("PyTorchJob", "lc", {Replica("worker", 2)}),
                   {{"worker", 2, 2}},
                   2});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Table, KubeflowPodSets, ::testing::ValuesIn(Cases()));

TEST(KubeflowTest, UnknownAndRepeatedReplicaTypesAreErrors) {
  Result<model::Workload> w = BuildWorkload(Kubeflow("PyTorchJob", "x", {Replica("PS", 1)}), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "PyTorchJob default/x: spec.pytorchReplicaSpecs.PS: unknown replica type; "
            "PyTorchJob allows Master, Worker");

  w = BuildWorkload(Kubeflow("TFJob", "y", {Replica("Worker", 1), Replica("Worker", 2)}), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "TFJob default/y: spec.tfReplicaSpecs.Worker: replica type given twice");

  w = BuildWorkload(Kubeflow("MPIJob", "z", {}), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "MPIJob default/z: spec.mpiReplicaSpecs: at least one replica type is required");
}

TEST(KubeflowTest, LifecycleQueueAndRankFacts) {
  model::KubeflowJob job =
      Kubeflow("PyTorchJob", "pt", {Replica("Master", 1), Replica("Worker", 2)});
  job.replica_specs[1].restart_policy = "ExitCode";
  job.run_policy.backoff_limit = 5;
  job.run_policy.scheduling_policy = model::SchedulingPolicy{};
  job.run_policy.scheduling_policy->queue = "vq";
  job.nproc_per_node = "4";
  Result<model::Workload> w = BuildWorkload(job, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(w->lifecycle.restart_on_failure);
  EXPECT_EQ(w->lifecycle.max_restarts, 5);
  EXPECT_EQ(w->volcano_queue, "vq");
  EXPECT_EQ(w->pod_sets[0].restart_policy, "OnFailure");  // PyTorch's default
  EXPECT_EQ(w->pod_sets[1].restart_policy, "ExitCode");
  EXPECT_EQ(w->rank.nproc_per_node, "4");

  // TFJob replicas default to Never: no restarts, and no backoffLimit needed.
  Result<model::Workload> tf = BuildWorkload(Kubeflow("TFJob", "tf", {Replica("Worker", 2)}), {});
  ASSERT_TRUE(tf.ok());
  EXPECT_FALSE(tf->lifecycle.restart_on_failure);
  EXPECT_EQ(tf->lifecycle.max_restarts, 0);

  // Restartable without backoffLimit: the operator retries forever.
  Result<model::Workload> pt =
      BuildWorkload(Kubeflow("PyTorchJob", "p", {Replica("Worker", 2)}), {});
  ASSERT_TRUE(pt.ok());
  EXPECT_EQ(pt->lifecycle.max_restarts, std::numeric_limits<int32_t>::max());

  model::KubeflowJob mpi = Kubeflow("MPIJob", "m", {Replica("Launcher", 1), Replica("Worker", 2)});
  mpi.slots_per_worker = 8;
  mpi.replica_specs[0].restart_policy = "OnFailure";  // the decoder's default for Launcher
  Result<model::Workload> m = BuildWorkload(mpi, {});
  ASSERT_TRUE(m.ok());
  // The launcher is a batch Job in mpi-operator: without runPolicy.backoffLimit, the
  // Job's default of 6 retries applies.
  EXPECT_TRUE(m->lifecycle.restart_on_failure);
  EXPECT_EQ(m->lifecycle.max_restarts, 6);
  mpi.run_policy.backoff_limit = 2;
  EXPECT_EQ(BuildWorkload(mpi, {})->lifecycle.max_restarts, 2);
  EXPECT_EQ(m->rank.slots_per_worker, 8);
  EXPECT_EQ(m->rank.mpi_implementation, "OpenMPI");
  // AtStartup (the default): the launcher starts with the workers.
  for (const model::PodSet& ps : m->pod_sets) EXPECT_TRUE(ps.start_after.empty()) << ps.name;

  mpi.launcher_waits_for_workers = true;  // WaitForWorkersReady
  m = BuildWorkload(mpi, {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->pod_sets.size(), 2u);
  EXPECT_EQ(m->pod_sets[0].name, "launcher");
  ASSERT_EQ(m->pod_sets[0].start_after.size(), 1u);
  EXPECT_EQ(m->pod_sets[0].start_after[0].pod_set, "worker");
  EXPECT_FALSE(m->pod_sets[0].start_after[0].complete);
  EXPECT_TRUE(m->pod_sets[1].start_after.empty());
}

TEST(KubeflowTest, RequestsPerReplicaType) {
  model::KubeflowJob job =
      Kubeflow("PyTorchJob", "pt",
               {Replica("Master", 1, testing::Template(testing::Res({{"cpu", "2"}}))),
                Replica("Worker", 2,
                        testing::Template(testing::Res({{"cpu", "8"}, {"nvidia.com/gpu", "1"}})))});
  Result<model::Workload> w = BuildWorkload(job, {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pod_sets[0].requests, testing::List({{"cpu", "2"}}));
  EXPECT_EQ(w->pod_sets[1].requests, testing::List({{"cpu", "8"}, {"nvidia.com/gpu", "1"}}));
}

}  // namespace
}  // namespace muster::workloads
