#include "control/store_snapshot.h"

#include <gtest/gtest.h>

#include <string>

#include "control/config_objects.h"
#include "control/memory_objects.h"

namespace muster::control {
namespace {

using nlohmann::json;

class StoreSnapshotTest : public ::testing::Test {
 protected:
  void Create(const std::string& resource, const std::string& ns, const json& object) {
    store_.now = now_;
    store_.Create(resource, ns, object);
  }

  void CreateConfig() {
    Create("nodes", "", testing::NodeObject("workstation", "16", "64Gi", "4"));
    Create("resourceflavors.kueue.x-k8s.io", "", testing::FlavorObject("workstation"));
    Create("clusterqueues.kueue.x-k8s.io", "",
           testing::ClusterQueueObject("team-a", "workstation", 8, 4));
    Create("localqueues.kueue.x-k8s.io", "default",
           testing::LocalQueueObject("team-a", "default", "team-a"));
  }

  static json BatchJob(const std::string& name, int parallelism) {
    json container = {{"name", "main"},
                      {"image", "busybox"},
                      {"command", {"sh", "-c", "true"}},
                      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}};
    return {
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata",
         {{"name", name},
          {"namespace", "default"},
          {"labels", {{"kueue.x-k8s.io/queue-name", "team-a"}}}}},
        {"spec",
         {{"parallelism", parallelism},
          {"completions", parallelism},
          {"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", {container}}}}}}}}};
  }

  static json PyTorchJob(const std::string& name) {
    json container = {{"name", "pytorch"},
                      {"image", "busybox"},
                      {"command", {"sh", "-c", "true"}},
                      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}};
    json replica = {{"replicas", 1},
                    {"restartPolicy", "OnFailure"},
                    {"template", {{"spec", {{"containers", {container}}}}}}};
    return {{"apiVersion", "kubeflow.org/v1"},
            {"kind", "PyTorchJob"},
            {"metadata",
             {{"name", name},
              {"namespace", "default"},
              {"labels", {{"kueue.x-k8s.io/queue-name", "team-a"}}}}},
            {"spec", {{"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", replica}}}}}};
  }

  std::string now_ = "2026-01-01T00:00:00Z";
  testing::MemoryObjects store_;
};

TEST(StoreResourceKindsTest, ConfigAndJobResources) {
  EXPECT_TRUE(IsConfigResource("nodes"));
  EXPECT_TRUE(IsConfigResource("clusterqueues.kueue.x-k8s.io"));
  EXPECT_TRUE(IsConfigResource("localqueues.kueue.x-k8s.io"));
  EXPECT_TRUE(IsConfigResource("resourceflavors.kueue.x-k8s.io"));
  EXPECT_TRUE(IsConfigResource("priorityclasses.scheduling.k8s.io"));
  EXPECT_FALSE(IsConfigResource("jobs.batch"));
  EXPECT_FALSE(IsConfigResource("pytorchjobs.kubeflow.org"));
  // What the controller itself writes must not trigger a rebuild.
  EXPECT_FALSE(IsConfigResource("pods"));
  EXPECT_FALSE(IsConfigResource("workloads.kueue.x-k8s.io"));
  EXPECT_FALSE(IsConfigResource("events"));

  for (const char* job :
       {"jobs.batch", "jobs.batch.volcano.sh", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org",
        "mpijobs.kubeflow.org", "jobsets.jobset.x-k8s.io"}) {
    EXPECT_TRUE(IsJobResource(job)) << job;
  }
  EXPECT_FALSE(IsJobResource("nodes"));
  EXPECT_FALSE(IsJobResource("pods"));
  EXPECT_FALSE(IsJobResource("workloads.kueue.x-k8s.io"));
  EXPECT_FALSE(IsJobResource("jobs"));  // the store key carries the group
}

TEST_F(StoreSnapshotTest, EmptyStoreIsEmpty) {
  auto snapshot = ReadStoreSnapshot(store_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_TRUE(snapshot->config.nodes.empty());
  EXPECT_TRUE(snapshot->jobs.empty());
  EXPECT_TRUE(snapshot->problems.empty());
}

TEST_F(StoreSnapshotTest, ConfigWithoutJobsAndJobsInCreationOrder) {
  CreateConfig();
  // Created out of name order: "zeta" first, then "alpha", then a PyTorchJob "mid";
  // "beta" shares alpha's timestamp and sorts after it by name.
  now_ = "2026-01-01T00:00:05Z";
  Create("jobs.batch", "default", BatchJob("zeta", 2));
  now_ = "2026-01-01T00:00:07Z";
  Create("jobs.batch", "default", BatchJob("beta", 1));
  Create("jobs.batch", "default", BatchJob("alpha", 1));
  now_ = "2026-01-01T00:00:09Z";
  Create("pytorchjobs.kubeflow.org", "default", PyTorchJob("mid"));

  auto snapshot = ReadStoreSnapshot(store_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_TRUE(snapshot->problems.empty());
  const model::ManifestSet& config = snapshot->config;
  ASSERT_EQ(config.nodes.size(), 1u);
  EXPECT_EQ(config.nodes[0].meta.name, "workstation");
  EXPECT_EQ(config.resource_flavors.size(), 1u);
  ASSERT_EQ(config.cluster_queues.size(), 1u);
  ASSERT_EQ(config.local_queues.size(), 1u);
  EXPECT_TRUE(config.jobs.empty());

  ASSERT_EQ(snapshot->jobs.size(), 4u);
  EXPECT_EQ(snapshot->jobs[0].ref.name, "zeta");
  EXPECT_EQ(snapshot->jobs[1].ref.name, "alpha");
  EXPECT_EQ(snapshot->jobs[2].ref.name, "beta");
  EXPECT_EQ(snapshot->jobs[3].ref.name, "mid");
  EXPECT_EQ(snapshot->jobs[0].created, "2026-01-01T00:00:05Z");

  const SnapshotJob& zeta = snapshot->jobs[0];
  EXPECT_EQ(zeta.ref.resource, "jobs.batch");
  EXPECT_EQ(zeta.ref.namespace_, "default");
  EXPECT_EQ(zeta.ref.kind, "Job");
  EXPECT_EQ(zeta.ref.api_version, "batch/v1");
  EXPECT_EQ(zeta.ref.uid.size(), 36u);
  EXPECT_EQ(zeta.workload.key, "default/zeta");
  EXPECT_EQ(zeta.workload.local_queue, "team-a");
  EXPECT_EQ(zeta.workload.TotalCount(), 2);

  const SnapshotJob& mid = snapshot->jobs[3];
  EXPECT_EQ(mid.ref.resource, "pytorchjobs.kubeflow.org");
  EXPECT_EQ(mid.ref.kind, "PyTorchJob");
  EXPECT_EQ(mid.workload.pod_sets.size(), 2u);
}

TEST_F(StoreSnapshotTest, BrokenObjectsAreReportedAndDoNotHideOthers) {
  CreateConfig();
  // Stores validate on the API path: objects that no longer decode are what an
  // older server version or a schema change leaves behind.
  Create("nodes", "",
         {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "broken-node"}}},
          {"status", {{"allocatable", {{"cpu", "lots"}}}}}});
  Create("jobs.batch", "default", BatchJob("good", 1));
  json bad = BatchJob("bad", 1);
  bad["spec"]["parallelism"] = "many";
  Create("jobs.batch", "default", bad);

  auto snapshot = ReadStoreSnapshot(store_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ(snapshot->problems.size(), 2u);
  EXPECT_EQ(snapshot->problems.count("nodes//broken-node"), 1u);
  ASSERT_EQ(snapshot->problems.count("jobs.batch/default/bad"), 1u);
  EXPECT_FALSE(snapshot->problems.at("jobs.batch/default/bad").empty());
  // The good node and the good job are still there.
  ASSERT_EQ(snapshot->config.nodes.size(), 1u);
  EXPECT_EQ(snapshot->config.nodes[0].meta.name, "workstation");
  ASSERT_EQ(snapshot->jobs.size(), 1u);
  EXPECT_EQ(snapshot->jobs[0].ref.name, "good");
}

TEST_F(StoreSnapshotTest, DecodeJobRejectsNonJobs) {
  CreateConfig();
  auto snapshot = ReadStoreSnapshot(store_);
  ASSERT_TRUE(snapshot.ok());
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n"}}}};
  EXPECT_FALSE(DecodeJob(node, snapshot->config).ok());
  auto job = DecodeJob(BatchJob("x", 3), snapshot->config);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->TotalCount(), 3);
}

}  // namespace
}  // namespace muster::control
