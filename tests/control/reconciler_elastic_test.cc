// Elastic gangs in cluster mode (`muster kube`), step by step: the training operator
// (played by the test) makes every worker; muster binds the ones admitted and marks
// the rest Unschedulable with a reason, binds more when the gang grows, and deletes
// the highest-index pods it bound when a preemptor shrinks it; the preemptor is bound
// only once those pods are gone. No threads, no sleeps.
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::IndexedJob;
using testing::json;
using testing::PodOf;

// 8 one-GPU workers, elasticPolicy minReplicas 2, queued to "team", suspended.
json ElasticJob() {
  json container = {{"name", "pytorch"},
                    {"image", "trainer"},
                    {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}};
  return {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata",
       {{"name", "elastic"},
        {"namespace", "ml"},
        {"labels", {{"kueue.x-k8s.io/queue-name", "team"}}}}},
      {"spec",
       {{"runPolicy", {{"suspend", true}}},
        {"elasticPolicy", {{"minReplicas", 2}, {"maxReplicas", 8}}},
        {"pytorchReplicaSpecs",
         {{"Worker",
           {{"replicas", 8},
            {"template",
             {{"spec",
               {{"schedulerName", "muster"}, {"containers", json::array({container})}}}}}}}}}}}};
}

json WorkerOf(const json& job, int index) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {{"name", "elastic-worker-" + std::to_string(index)},
                     {"namespace", "ml"},
                     {"labels",
                      {{"training.kubeflow.org/job-name", "elastic"},
                       {"training.kubeflow.org/replica-type", "worker"},
                       {"training.kubeflow.org/replica-index", std::to_string(index)}}},
                     {"ownerReferences", json::array({{{"apiVersion", "kubeflow.org/v1"},
                                                       {"kind", "PyTorchJob"},
                                                       {"name", "elastic"},
                                                       {"uid", job["metadata"]["uid"]},
                                                       {"controller", true}}})}};
  pod["spec"] = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
  pod["status"] = {{"phase", "Pending"}};
  return pod;
}

class ReconcilerElasticTest : public ::testing::Test {
 protected:
  ReconcilerElasticTest() : bench_(ReconcilerMode::kCluster) {}

  std::string NodeOf(const std::string& pod) {
    return bench_.Get("pods", "ml", pod).value("spec", json::object()).value("nodeName", "");
  }
  std::vector<int> BoundWorkers() {
    std::vector<int> out;
    for (int i = 0; i < 8; ++i) {
      if (!NodeOf("elastic-worker-" + std::to_string(i)).empty()) out.push_back(i);
    }
    return out;
  }
  json Elastic() { return bench_.Get("pytorchjobs.kubeflow.org", "ml", "elastic"); }

  Bench bench_;
};

TEST_F(ReconcilerElasticTest, BindsWhatIsAdmittedGrowsAndDeletesTheHighestPodsOnShrink) {
  // Two nodes of 4 GPUs, quota 8. The blocker holds one node.
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("blocker", 1, 4));
  bench_.Steps(3);
  bench_.Create("pods", "ml", PodOf(bench_.Job("blocker"), 0));
  bench_.Steps(2);
  const std::string blocked = NodeOf("blocker-0");
  ASSERT_FALSE(blocked.empty());

  // Admitted at once with 4 workers; the operator makes all 8; 0-3 are bound.
  bench_.Create("pytorchjobs.kubeflow.org", "ml", ElasticJob());
  bench_.Steps(3);
  ASSERT_FALSE(Elastic()["spec"]["runPolicy"].value("suspend", true));
  for (int i = 0; i < 8; ++i) bench_.Create("pods", "ml", WorkerOf(Elastic(), i));
  bench_.Steps(2);
  EXPECT_EQ(BoundWorkers(), (std::vector<int>{0, 1, 2, 3}));
  // The others are Pending, Unschedulable, saying why; written once each.
  json pending = bench_.Get("pods", "ml", "elastic-worker-6");
  ASSERT_EQ(pending["status"]["conditions"].size(), 1u) << pending.dump(2);
  const json& scheduled = pending["status"]["conditions"][0];
  EXPECT_EQ(scheduled["type"], "PodScheduled");
  EXPECT_EQ(scheduled["status"], "False");
  EXPECT_EQ(scheduled["reason"], "Unschedulable");
  EXPECT_EQ(scheduled["message"],
            "ml/elastic runs 4 of its 8 pods (elastic); this pod waits for free capacity");
  EXPECT_EQ(bench_.sink.Count("status pods ml/elastic-worker-6"), 1);
  bench_.Steps(3);
  EXPECT_EQ(bench_.sink.Count("status pods ml/elastic-worker-6"), 1);

  // The blocker ends: the gang grows to 8 and binds 4-7 onto the freed node.
  json done = bench_.Get("pods", "ml", "blocker-0");
  done["status"]["phase"] = "Succeeded";
  bench_.Replace("pods", "ml", done);
  json blocker = bench_.Job("blocker");
  blocker["status"]["conditions"] = json::array({{{"type", "Complete"}, {"status", "True"}}});
  bench_.Replace("jobs.batch", "ml", blocker);
  bench_.Steps(3);
  EXPECT_EQ(BoundWorkers(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(NodeOf("elastic-worker-7"), blocked);
  EXPECT_EQ(bench_.sink.Count("Resized"), 1);

  // An urgent job needs a whole node: the gang shrinks to 4 and muster deletes the
  // workers it bound beyond 4 (not the job); the deletions are slow, so the urgent
  // pod waits for them to be gone.
  bench_.sink.deferred = true;
  bench_.Create("jobs.batch", "ml", IndexedJob("urgent", 1, 4, "urgent"));
  bench_.Step();
  for (int i = 4; i < 8; ++i) {
    EXPECT_EQ(bench_.sink.PendingWhere("delete-pod pods ml/elastic-worker-" + std::to_string(i)),
              1);
  }
  EXPECT_EQ(bench_.sink.PendingWhere("delete-pod pods ml/elastic-worker-3"), 0);
  EXPECT_EQ(bench_.sink.Count("Shrunk"), 1);
  EXPECT_EQ(bench_.sink.PendingWhere("job pytorchjobs.kubeflow.org"), 0);  // never suspended
  bench_.sink.CompleteWhere("urgent");
  bench_.sink.CompleteWhere("workload ");
  bench_.Step();
  bench_.sink.CompleteWhere("urgent");
  bench_.Step();
  ASSERT_FALSE(bench_.Job("urgent")["spec"].value("suspend", true));
  bench_.Create("pods", "ml", PodOf(bench_.Job("urgent"), 0));
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.PendingWhere("bind pods ml/urgent"), 0) << "workers 4-7 still there";
  EXPECT_EQ(bench_.sink.Count("delete-pod"), 4) << "each asked once";

  bench_.sink.CompleteWhere("delete-pod");
  bench_.Steps(2);  // the deletions' results, then the watch's DELETED events
  EXPECT_EQ(bench_.sink.PendingWhere("bind pods ml/urgent urgent-0->" + blocked), 1);
  bench_.sink.Complete();
  bench_.Step();
  // The operator makes workers 4-7 again: they wait unbound.
  for (int i = 4; i < 8; ++i) bench_.Create("pods", "ml", WorkerOf(Elastic(), i));
  bench_.Steps(2);
  bench_.sink.Complete();
  bench_.Steps(2);
  EXPECT_EQ(BoundWorkers(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(bench_.sink.Count("delete-pod"), 4);
}

}  // namespace
}  // namespace muster::control
