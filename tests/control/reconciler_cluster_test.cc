// The reconciler in cluster mode (`muster kube`), against a sink that plays a slow API
// server: admission writes the Workload, then unsuspends the job with its flavor's
// node labels and tolerations, then binds the whole gang once its pods exist; each job
// advances as its own writes finish; eviction suspends, resets status.startTime and
// restores the templates (Kueue's Stop); a refused start parks the job instead of
// retrying it for ever.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/job_templates.h"
#include "control/reconciler_harness.h"
#include "control/workload_objects.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using testing::IndexedJob;
using testing::json;
using testing::PodOf;

class ReconcilerClusterTest : public ::testing::Test {
 protected:
  ReconcilerClusterTest() : bench_(ReconcilerMode::kCluster) {}

  json CreateJob(const std::string& name, int pods, int gpus, const std::string& pc = "") {
    return bench_.Create("jobs.batch", "ml", IndexedJob(name, pods, gpus, pc));
  }
  void CreatePods(const std::string& job, int pods) {
    json j = bench_.Job(job);
    for (int i = 0; i < pods; ++i) bench_.Create("pods", "ml", PodOf(j, i));
  }
  std::string NodeOf(const std::string& pod) {
    return bench_.Get("pods", "ml", pod).value("spec", json::object()).value("nodeName", "");
  }
  void SetPodPhase(const std::string& pod, const std::string& phase) {
    json p = bench_.Get("pods", "ml", pod);
    p["status"]["phase"] = phase;
    bench_.Replace("pods", "ml", p);
  }

  Bench bench_;
};

TEST_F(ReconcilerClusterTest, WorkloadFirstThenUnsuspendThenTheWholeGangIsBound) {
  bench_.Configure(2, 4, 8);
  bench_.sink.deferred = true;
  bench_.Build();
  CreateJob("train", 2, 4);
  bench_.Step();
  // The admission's first write is the Workload; the job waits for it.
  EXPECT_EQ(bench_.sink.Count("workload workloads.kueue.x-k8s.io ml/job-train"), 1);
  EXPECT_EQ(bench_.sink.Count("job jobs.batch ml/train"), 0);
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count("job jobs.batch ml/train"), 0);
  bench_.sink.Complete();
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count("job jobs.batch ml/train"), 1);
  bench_.sink.Complete();
  bench_.Step();
  json job = bench_.Job("train");
  EXPECT_FALSE(job["spec"]["suspend"].get<bool>());
  EXPECT_EQ(job["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
  EXPECT_EQ(job["spec"]["template"]["spec"]["tolerations"][0]["key"], "gpu");
  json wl = bench_.Workload("train");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  EXPECT_FALSE(wl["status"].contains("placement"));  // pruned by Kueue's schema
  EXPECT_TRUE(wl["metadata"]["annotations"].contains(kPlacementAnnotation));

  // One pod is not enough: nothing is bound until the gang's pods all exist.
  bench_.Create("pods", "ml", PodOf(job, 0));
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count("bind"), 0);
  bench_.Create("pods", "ml", PodOf(job, 1));
  bench_.Step();
  ASSERT_EQ(bench_.sink.Count("bind"), 1);
  EXPECT_EQ(bench_.sink.Count("bind pods ml/train train-0->"), 1);  // rank order
  bench_.sink.Complete();
  bench_.Step();
  EXPECT_FALSE(NodeOf("train-0").empty());
  EXPECT_FALSE(NodeOf("train-1").empty());
  EXPECT_EQ(bench_.reconciler->stats().bindings, 2);
  bench_.Steps(3);
  EXPECT_EQ(bench_.sink.Count("bind"), 1);  // never bound twice

  SetPodPhase("train-0", "Running");
  SetPodPhase("train-1", "Running");
  bench_.Step();
  bench_.sink.Complete();
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Workload("train"), "PodsReady"), "True");
}

TEST_F(ReconcilerClusterTest, OneSlowAdmissionDoesNotHoldBackAnotherGangsBinds) {
  bench_.Configure(2, 4, 8);
  bench_.sink.deferred = true;
  bench_.Build();
  CreateJob("a", 1, 4);
  CreateJob("b", 1, 4);
  bench_.Step();
  // Both Workloads are in flight together (with the Events and queue status).
  ASSERT_EQ(bench_.sink.PendingWhere("workload workloads.kueue.x-k8s.io ml/job-a"), 1);
  ASSERT_EQ(bench_.sink.PendingWhere("workload workloads.kueue.x-k8s.io ml/job-b"), 1);
  bench_.sink.CompleteWhere("event ");
  bench_.sink.CompleteWhere("status ");
  // a's Workload answers first; b's is still in flight. a's unsuspend goes out at once.
  ASSERT_EQ(bench_.sink.CompleteWhere("ml/job-a"), 1);
  bench_.Step();
  ASSERT_EQ(bench_.sink.PendingWhere("job jobs.batch ml/a"), 1);
  EXPECT_EQ(bench_.sink.PendingWhere("ml/job-b"), 1);
  ASSERT_EQ(bench_.sink.CompleteWhere("job jobs.batch ml/a"), 1);
  bench_.Step();
  // a's pods can be bound while b's Workload is still in flight.
  CreatePods("a", 1);
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count("bind pods ml/a"), 1);
  EXPECT_EQ(bench_.sink.Count("bind pods ml/b"), 0);
}

TEST_F(ReconcilerClusterTest, PreemptionSuspendsResetsStartTimeRestoresAndReadmits) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  CreateJob("low", 2, 4);
  bench_.Steps(3);
  CreatePods("low", 2);
  bench_.Steps(2);
  ASSERT_FALSE(NodeOf("low-0").empty());
  // The Job controller started it.
  json low = bench_.Job("low");
  low["status"]["startTime"] = "2027-01-15T08:00:01Z";
  low["status"]["active"] = 2;
  bench_.Replace("jobs.batch", "ml", low);

  CreateJob("urgent", 2, 4, "urgent");
  bench_.Steps(4);
  low = bench_.Job("low");
  EXPECT_TRUE(low["spec"]["suspend"].get<bool>());
  EXPECT_FALSE(low["status"].contains("startTime"));  // reset, as Kueue's Stop does
  EXPECT_FALSE(low["spec"]["template"]["spec"].contains("nodeSelector"));  // restored
  EXPECT_FALSE(
      low["metadata"].value("annotations", json::object()).contains(kOriginalTemplatesAnnotation));
  EXPECT_EQ(Condition(bench_.Workload("low"), "Evicted"), "True");
  EXPECT_EQ(Condition(bench_.Workload("low"), "Preempted"), "True");
  EXPECT_FALSE(bench_.Job("urgent")["spec"]["suspend"].get<bool>());

  // The urgent gang waits while the victim's pods still hold the nodes.
  CreatePods("urgent", 2);
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.Count("bind pods ml/urgent"), 0);
  // The Job controller removes the suspended job's pods: the urgent gang is bound.
  bench_.Delete("pods", "ml", "low-0");
  bench_.Delete("pods", "ml", "low-1");
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.Count("bind pods ml/urgent"), 1);

  // The urgent job finishes: the low one is admitted again, injected again.
  json urgent = bench_.Job("urgent");
  urgent["status"]["conditions"] = json::array({{{"type", "Complete"}, {"status", "True"}}});
  bench_.Replace("jobs.batch", "ml", urgent);
  bench_.Steps(4);
  low = bench_.Job("low");
  EXPECT_FALSE(low["spec"]["suspend"].get<bool>());
  EXPECT_EQ(low["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
  EXPECT_EQ(Condition(bench_.Workload("low"), "Admitted"), "True");
  EXPECT_EQ(Condition(bench_.Workload("urgent"), "Finished"), "True");
}

TEST_F(ReconcilerClusterTest, ARefusedStartParksTheJobWithAConditionAndAnEvent) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.sink.fail["job bad"] =
      InvalidArgument("PUT jobs/bad: HTTP 422: spec.template: field is immutable");
  CreateJob("bad", 1, 4);
  CreateJob("next", 1, 4);
  bench_.Steps(3);
  std::string reason;
  json wl = bench_.Workload("bad");
  EXPECT_EQ(Condition(wl, "QuotaReserved", &reason), "False");
  EXPECT_EQ(reason, "Inadmissible");
  EXPECT_FALSE(wl["status"].contains("admission"));
  EXPECT_EQ(bench_.sink.Count("event events ml/bad.", 0) >= 1, true);
  EXPECT_EQ(bench_.sink.Count(" FailedToStart"), 1);
  EXPECT_EQ(bench_.reconciler->stats().parked, 1);
  // Its quota went to the next job; the refused one is not tried again...
  EXPECT_EQ(Condition(bench_.Workload("next"), "Admitted"), "True");
  const int tries = bench_.sink.Count("job jobs.batch ml/bad");
  bench_.clock.Advance(5);
  bench_.Steps(5);
  EXPECT_EQ(bench_.sink.Count("job jobs.batch ml/bad"), tries);
  // ...until the job changes.
  json bad = bench_.Job("bad");
  bad["spec"]["template"]["spec"]["containers"][0]["image"] = "trainer:2";
  bench_.Replace("jobs.batch", "ml", bad);
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Workload("bad"), "QuotaReserved", &reason), "False");
  EXPECT_EQ(reason, "Pending");
}

TEST_F(ReconcilerClusterTest, ConflictsAreRetriedOnTheFreshObject) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.sink.fail["job train"] = Conflict("the object has been modified");
  CreateJob("train", 1, 4);
  bench_.Steps(4);
  EXPECT_EQ(bench_.sink.Count("job jobs.batch ml/train"), 2);
  EXPECT_FALSE(bench_.Job("train")["spec"]["suspend"].get<bool>());
  EXPECT_EQ(bench_.reconciler->stats().conflicts, 1);
}

TEST_F(ReconcilerClusterTest, UnqueuedJobsAreLeftAloneAndQueuedOnesKeptSuspended) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  json plain = IndexedJob("plain", 1, 1);
  plain["metadata"].erase("labels");
  plain["spec"]["suspend"] = false;
  bench_.Create("jobs.batch", "ml", plain);
  json big = IndexedJob("big", 3, 4);
  big["spec"]["suspend"] = false;  // created before the webhook ran
  bench_.Create("jobs.batch", "ml", big);
  bench_.Steps(3);
  EXPECT_TRUE(bench_.Workload("plain").is_null());
  EXPECT_FALSE(bench_.Job("plain")["spec"]["suspend"].get<bool>());
  EXPECT_TRUE(bench_.Job("big")["spec"]["suspend"].get<bool>());
  EXPECT_EQ(Condition(bench_.Workload("big"), "QuotaReserved"), "False");
}

TEST_F(ReconcilerClusterTest, JobFinishedByItsControllerFreesItsQuota) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  CreateJob("a", 1, 4);
  CreateJob("b", 1, 4);
  bench_.Steps(3);
  EXPECT_EQ(Condition(bench_.Workload("b"), "QuotaReserved"), "False");
  json a = bench_.Job("a");
  a["status"]["conditions"] =
      json::array({{{"type", "Failed"}, {"status", "True"}, {"message", "BackoffLimitExceeded"}}});
  bench_.Replace("jobs.batch", "ml", a);
  bench_.Steps(3);
  EXPECT_EQ(Condition(bench_.Workload("a"), "Finished"), "True");
  EXPECT_EQ(Condition(bench_.Workload("b"), "Admitted"), "True");
}

TEST_F(ReconcilerClusterTest, LeaderTakeoverAdoptsWhatRuns) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  CreateJob("train", 2, 4);
  bench_.Steps(3);
  CreatePods("train", 2);
  bench_.Steps(2);
  Bench next(ReconcilerMode::kCluster);
  next.objects = bench_.objects;
  next.Build();
  next.Steps(2);
  EXPECT_EQ(next.reconciler->engine()->Find("ml/train")->phase, engine::Phase::kRunning);
  EXPECT_EQ(next.sink.Count("job jobs.batch"), 0);  // neither suspended nor unsuspended
  EXPECT_EQ(next.sink.Count("bind"), 0);
  EXPECT_EQ(next.sink.Count("event"), 0);
}

TEST_F(ReconcilerClusterTest, QueueStatusesAreWrittenAtMostOncePerInterval) {
  bench_.Reconfigure([](ReconcilerOptions& o) { o.queue_status_interval = 0.5; });
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Step();
  const std::string cq = "status clusterqueues.kueue.x-k8s.io /research";
  const std::string lq = "status localqueues.kueue.x-k8s.io ml/team";
  ASSERT_EQ(bench_.sink.Count(cq), 1);
  ASSERT_EQ(bench_.sink.Count(lq), 1);
  // Two admissions within the interval: the counts move, nothing is written yet.
  CreateJob("a", 1, 4);
  bench_.Step();
  bench_.clock.Advance(0.2);
  CreateJob("b", 1, 4);
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count(cq), 1);
  EXPECT_EQ(bench_.sink.Count(lq), 1);
  // The next step past the interval writes both, with both admissions.
  bench_.clock.Advance(0.3);
  bench_.Step();
  EXPECT_EQ(bench_.sink.Count(cq), 2);
  EXPECT_EQ(bench_.sink.Count(lq), 2);
  EXPECT_EQ(
      bench_.Get("clusterqueues.kueue.x-k8s.io", "", "research")["status"]["admittedWorkloads"], 2);
}

}  // namespace
}  // namespace muster::control
