// Configuration objects edited while jobs wait and run: LocalQueues created, stopped,
// resumed and deleted, ClusterQueues stopped and resumed, PriorityClasses created and
// deleted. Each is an engine event or less (no reconfiguration), with Kueue's
// semantics: jobs submitted before their LocalQueue existed start once it does, a
// stopped queue holds what waits (and HoldAndDrain evicts what runs), a deleted
// LocalQueue leaves what it admitted running, and a priority is fixed when its job is
// decoded. Queue changes the quota tree cannot take in place (a new team's flavor,
// ClusterQueue and LocalQueue; a preemption policy) rebuild admission only: the
// cluster state and the gangs bound in it stay.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using testing::IndexedJob;
using testing::json;
using testing::LocalQueue;

constexpr const char* kLocalQueues = "localqueues.kueue.x-k8s.io";
constexpr const char* kClusterQueues = "clusterqueues.kueue.x-k8s.io";

// IndexedJob queued in LocalQueue `queue` instead of "team".
json JobIn(const std::string& queue, const std::string& name, int pods, int gpus) {
  json job = IndexedJob(name, pods, gpus);
  job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = queue;
  return job;
}

class ReconcilerConfigEditsTest : public ::testing::Test {
 protected:
  ReconcilerConfigEditsTest() : bench_(ReconcilerMode::kServe) {}
  // The reason of the workload's QuotaReserved=False condition ("" when reserved).
  std::string WaitReason(const std::string& job) {
    std::string reason;
    if (Condition(bench_.Workload(job), "QuotaReserved", &reason) != "False") return "";
    return reason;
  }
  void SetStopPolicy(const std::string& queue, const std::string& policy) {
    json lq = bench_.Get(kLocalQueues, "ml", queue);
    lq["spec"]["stopPolicy"] = policy;
    bench_.Replace(kLocalQueues, "ml", lq);
  }
  // The message of the workload's QuotaReserved condition.
  std::string WaitMessage(const std::string& job) {
    const json workload = bench_.Workload(job);
    for (const json& c : workload["status"]["conditions"]) {
      if (c.value("type", "") == "QuotaReserved") return c.value("message", "");
    }
    return "";
  }
  // ClusterQueue research's Active condition.
  json Active() { return bench_.Get(kClusterQueues, "", "research")["status"]["conditions"][0]; }
  void SetClusterQueueStopPolicy(const std::string& policy) {
    json cq = bench_.Get(kClusterQueues, "", "research");
    cq["spec"]["stopPolicy"] = policy;
    bench_.Replace(kClusterQueues, "", cq);
  }
  Bench bench_;
};

TEST_F(ReconcilerConfigEditsTest, AJobSubmittedBeforeItsLocalQueueStartsOnceItExists) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", JobIn("late", "train", 1, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ::testing::IsEmpty());
  const std::string waiting = WaitReason("train");
  EXPECT_FALSE(waiting.empty());

  const engine::Engine* engine = bench_.reconciler->engine();
  bench_.Create(kLocalQueues, "ml", LocalQueue("late", "research"));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().local_queue_updates, 1);
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  ASSERT_EQ(bench_.reconciler->config().local_queues.size(), 2u);
  EXPECT_EQ(bench_.reconciler->config().local_queues[0].meta.name, "late");
  EXPECT_EQ(bench_.reconciler->config().local_queues[1].meta.name, "team");
}

// Kueue reads a ClusterQueue's namespaceSelector against the Namespace's labels; a
// relabelled Namespace is an engine event (no reconfiguration).
TEST_F(ReconcilerConfigEditsTest, ANamespaceLabelledToMatchTheSelectorGetsItsJobsAdmitted) {
  bench_.Configure(2, 4, 16);
  json cq = bench_.Get(kClusterQueues, "", "research");
  cq["spec"]["namespaceSelector"] = {{"matchLabels", {{"team", "ml"}}}};
  bench_.Replace(kClusterQueues, "", cq);
  json ns = {{"apiVersion", "v1"},
             {"kind", "Namespace"},
             {"metadata", {{"name", "ml"}, {"labels", {{"kubernetes.io/metadata.name", "ml"}}}}}};
  bench_.Create("namespaces", "", ns);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ::testing::IsEmpty());
  const std::string mismatch = "Workload namespace ml doesn't match ClusterQueue research selector";
  EXPECT_EQ(WaitMessage("train"), mismatch);

  const engine::Engine* engine = bench_.reconciler->engine();
  ns["metadata"]["labels"]["team"] = "ml";
  bench_.Replace("namespaces", "", ns);
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  ASSERT_EQ(bench_.reconciler->config().namespaces.size(), 1u);
  EXPECT_EQ(bench_.reconciler->config().namespaces[0].meta.labels.at("team"), "ml");

  // The label taken off: what runs runs on; a new job waits.
  ns["metadata"]["labels"].erase("team");
  bench_.Replace("namespaces", "", ns);
  bench_.Create("jobs.batch", "ml", IndexedJob("next", 1, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(WaitMessage("next"), mismatch);
  // A restarted reconciler reads the labels from the stored Namespace.
  bench_.Restart();
  bench_.Step();
  EXPECT_EQ(WaitMessage("next"), mismatch);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
}

TEST_F(ReconcilerConfigEditsTest, StoppedHoldsWhatWaitsAndHoldAndDrainEvictsWhatRuns) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));

  // Hold: what runs stays, what arrives waits with the reason.
  SetStopPolicy("team", "Hold");
  bench_.Create("jobs.batch", "ml", IndexedJob("held", 1, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  EXPECT_FALSE(WaitReason("held").empty());

  // HoldAndDrain: what it admitted is evicted too.
  SetStopPolicy("team", "HoldAndDrain");
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running", "evicted ml/running"));

  // Resumed: both start.
  SetStopPolicy("team", "None");
  bench_.Step();
  ASSERT_EQ(bench_.runtime.events.size(), 4u);
  EXPECT_THAT(
      std::vector<std::string>(bench_.runtime.events.begin() + 2, bench_.runtime.events.end()),
      ::testing::UnorderedElementsAre("start ml/running", "start ml/held"));
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().local_queue_updates, 3);
}

TEST_F(ReconcilerConfigEditsTest, DeletedItLeavesWhatItAdmittedRunningAndHoldsWhatWaits) {
  bench_.Configure(2, 4, 4);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Create("jobs.batch", "ml", IndexedJob("waiting", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));

  bench_.Delete(kLocalQueues, "ml", "team");
  bench_.Step();
  // As in Kueue: the admitted workload keeps its quota and runs on.
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  EXPECT_EQ(Condition(bench_.Workload("running"), "Admitted"), "True");
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_TRUE(bench_.reconciler->config().local_queues.empty());

  // Its quota is still held: the waiting job starts only when it finishes and the
  // queue is back.
  bench_.Create(kLocalQueues, "ml", LocalQueue("team", "research"));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  bench_.runtime.Finish("ml/running", true);
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/running", "done ml/running", "start ml/waiting"));
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().local_queue_updates, 2);
}

// Deleted and created again in one batch, or pointed at another ClusterQueue (which
// Kueue forbids): the latter rebuilds the queues, which decides.
TEST_F(ReconcilerConfigEditsTest, ANewClusterQueueForALocalQueueRebuildsTheQueues) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  bench_.Delete(kLocalQueues, "ml", "team");
  bench_.Create(kLocalQueues, "ml", LocalQueue("team", "research"));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().local_queue_updates, 2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));

  // Moved to another ClusterQueue (immutable in Kueue; refused in place): admission
  // is rebuilt, placement kept.
  bench_.Replace(kLocalQueues, "ml", LocalQueue("team", "elsewhere"));
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 1);
}

// The Active condition's lastTransitionTime is when its status last changed, not when
// the controller last started: a restarted reconciler keeps the stored time while the
// status holds.
TEST_F(ReconcilerConfigEditsTest, TheActiveConditionsTimeSurvivesARestart) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Step();
  const json ready_since = Active()["lastTransitionTime"];
  ASSERT_TRUE(ready_since.is_string());

  bench_.clock.Advance(60);
  bench_.Restart();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  EXPECT_EQ(Active()["status"], "True");
  EXPECT_EQ(Active()["lastTransitionTime"], ready_since);

  // Stopped while the controller was away: the status moved, so the time does.
  bench_.clock.Advance(60);
  json cq = bench_.Get(kClusterQueues, "", "research");
  cq["spec"]["stopPolicy"] = "Hold";
  ASSERT_TRUE(bench_.objects.Replace(kClusterQueues, "", cq).ok());  // nobody watches
  bench_.Restart();
  bench_.Step();
  EXPECT_EQ(Active()["reason"], "Stopped");
  EXPECT_NE(Active()["lastTransitionTime"], ready_since);
}

TEST_F(ReconcilerConfigEditsTest, AClusterQueueStoppedAndResumedInPlace) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  const engine::Engine* engine = bench_.reconciler->engine();

  const json ready_since = Active()["lastTransitionTime"];
  bench_.clock.Advance(5);
  bench_.Create("jobs.batch", "ml", JobIn("nowhere", "stray", 1, 4));  // syncs the queues
  bench_.Step();
  EXPECT_EQ(Active()["lastTransitionTime"], ready_since) << "moves only with the status";

  SetClusterQueueStopPolicy("Hold");
  bench_.Create("jobs.batch", "ml", IndexedJob("held", 1, 4));
  bench_.Step();
  EXPECT_EQ(Active()["reason"], "Stopped");
  EXPECT_EQ(Active()["message"], "Can't admit new workloads: is stopped.");
  EXPECT_NE(Active()["lastTransitionTime"], ready_since);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  EXPECT_FALSE(WaitReason("held").empty());

  SetClusterQueueStopPolicy("HoldAndDrain");
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running", "evicted ml/running"));

  // Resumed together with a quota change: both in place.
  json cq = bench_.Get(kClusterQueues, "", "research");
  cq["spec"]["stopPolicy"] = "None";
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = 8;
  bench_.Replace(kClusterQueues, "", cq);
  bench_.Step();
  ASSERT_EQ(bench_.runtime.events.size(), 4u);
  EXPECT_THAT(
      std::vector<std::string>(bench_.runtime.events.begin() + 2, bench_.runtime.events.end()),
      ::testing::UnorderedElementsAre("start ml/running", "start ml/held"));
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().quota_updates, 3);
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  EXPECT_EQ(bench_.reconciler->config().cluster_queues.at(0).stop_policy, model::StopPolicy::kNone);
}

// Kueue's resource-in-use finalizer: a ClusterQueue deleted while it has admitted
// workloads stays, terminating, admits nothing new, and lets what it admitted run;
// once that is done the finalizer comes off and the API server removes it.
TEST_F(ReconcilerConfigEditsTest, ADeletedClusterQueueTerminatesOnceWhatItAdmittedIsDone) {
  bench_.Configure(2, 4, 16);
  json cq = bench_.Get(kClusterQueues, "", "research");
  cq["metadata"]["finalizers"] = {"kueue.x-k8s.io/resource-in-use"};
  bench_.Replace(kClusterQueues, "", cq);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  const engine::Engine* engine = bench_.reconciler->engine();
  EXPECT_EQ(Active()["status"], "True");
  EXPECT_EQ(Active()["reason"], "Ready");

  // What the API server writes for the DELETE: the mark, nothing else.
  cq = bench_.Get(kClusterQueues, "", "research");
  cq["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  bench_.Replace(kClusterQueues, "", cq);
  bench_.Create("jobs.batch", "ml", IndexedJob("late", 1, 4));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  EXPECT_FALSE(WaitReason("late").empty());
  EXPECT_THAT(bench_.Workload("late")["status"].dump(),
              ::testing::HasSubstr("ClusterQueue research is terminating or missing"));
  EXPECT_EQ(Condition(bench_.Workload("running"), "Admitted"), "True");
  EXPECT_EQ(bench_.sink.Count("remove-finalizer"), 0);
  EXPECT_EQ(Active()["status"], "False");
  EXPECT_EQ(Active()["reason"], "Terminating");
  EXPECT_EQ(Active()["message"], "Can't admit new workloads; clusterQueue is terminating");
  EXPECT_FALSE(bench_.Get(kClusterQueues, "", "research").is_null());
  // In place: no rebuild of admission for the mark.
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  EXPECT_TRUE(bench_.reconciler->config().cluster_queues.at(0).terminating);

  bench_.runtime.Finish("ml/running", true);
  bench_.Steps(3);
  EXPECT_EQ(bench_.sink.Count("remove-finalizer clusterqueues.kueue.x-k8s.io /research"), 1);
  EXPECT_TRUE(bench_.Get(kClusterQueues, "", "research").is_null());
  EXPECT_TRUE(bench_.reconciler->config().cluster_queues.empty());
  // The job that came meanwhile still waits: its LocalQueue names no ClusterQueue.
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running", "done ml/running"));
  EXPECT_FALSE(WaitReason("late").empty());
}

// Kueue's resource-in-use finalizer on a ResourceFlavor: deleted while a ClusterQueue
// names it, the flavor serves on (what runs stays, the queue stays Active and admits
// on it); once no ClusterQueue names it the finalizer comes off and it is gone.
TEST_F(ReconcilerConfigEditsTest, ADeletedFlavorServesUntilNoClusterQueueNamesIt) {
  constexpr const char* kFlavors = "resourceflavors.kueue.x-k8s.io";
  bench_.Configure(2, 4, 16);
  json flavor = bench_.Get(kFlavors, "", "a100");
  flavor["metadata"]["finalizers"] = {"kueue.x-k8s.io/resource-in-use"};
  bench_.Replace(kFlavors, "", flavor);
  bench_.Create(kFlavors, "", testing::Flavor("spare"));  // named by no ClusterQueue
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("running", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/running"));
  const engine::Engine* engine = bench_.reconciler->engine();

  // The API server's mark for the DELETE.
  flavor = bench_.Get(kFlavors, "", "a100");
  flavor["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  bench_.Replace(kFlavors, "", flavor);
  bench_.Create("jobs.batch", "ml", IndexedJob("late", 1, 4));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/running", "start ml/late"));
  EXPECT_EQ(bench_.sink.Count("remove-finalizer"), 0);
  EXPECT_FALSE(bench_.Get(kFlavors, "", "a100").is_null());
  EXPECT_EQ(Active()["reason"], "Ready");
  EXPECT_EQ(bench_.reconciler->engine(), engine);  // nothing the engine reads moved

  // The ClusterQueue is deleted (it has no finalizer here): nothing names the flavor.
  bench_.Delete(kClusterQueues, "", "research");
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.Count("remove-finalizer resourceflavors.kueue.x-k8s.io /a100"), 1);
  EXPECT_TRUE(bench_.Get(kFlavors, "", "a100").is_null());
  ASSERT_EQ(bench_.reconciler->config().resource_flavors.size(), 1u);
  EXPECT_EQ(bench_.reconciler->config().resource_flavors[0].meta.name, "spare");
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.Count("remove-finalizer"), 1);  // once
}

TEST_F(ReconcilerConfigEditsTest, PriorityClassesChangeNothingThatRuns) {
  bench_.Configure(2, 4, 16);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("urgent", 1, 4, "urgent"));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/urgent"));
  const engine::Engine* engine = bench_.reconciler->engine();

  bench_.Create("priorityclasses.scheduling.k8s.io", "", testing::PriorityClass("top", 5000));
  bench_.Delete("priorityclasses.scheduling.k8s.io", "", "urgent");
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(bench_.reconciler->stats().decoding_updates, 1);
  EXPECT_EQ(bench_.reconciler->engine(), engine);
  ASSERT_EQ(bench_.reconciler->config().priority_classes.size(), 1u);
  EXPECT_EQ(bench_.reconciler->config().priority_classes[0].meta.name, "top");
  // The running job keeps the priority it was decoded with; the next one reads the
  // new class.
  EXPECT_EQ(engine->Find("ml/urgent")->workload.priority, 1000);
  bench_.Create("jobs.batch", "ml", IndexedJob("top", 1, 4, "top"));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/urgent", "start ml/top"));
  EXPECT_EQ(engine->Find("ml/top")->workload.priority, 5000);
}

TEST_F(ReconcilerConfigEditsTest, ANewTeamsQueuesRebuildAdmissionAndKeepWhatRuns) {
  bench_.Configure(2, 4, 4);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 4));
  bench_.Step();
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  const placement::ClusterState* cluster = &bench_.reconciler->engine()->cluster();

  // A second team onboards: a flavor, a ClusterQueue and a LocalQueue in one batch.
  // Admission is rebuilt once; the cluster, and the gang on it, stay as they are.
  bench_.Create("resourceflavors.kueue.x-k8s.io", "", testing::Flavor("spare"));
  bench_.Create(kClusterQueues, "", testing::ClusterQueue("vision", 4));
  bench_.Create(kLocalQueues, "ml", LocalQueue("vision", "vision"));
  bench_.Create("jobs.batch", "ml", JobIn("vision", "see", 1, 4));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/see"));
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 1);
  EXPECT_EQ(bench_.reconciler->stats().reconfigures, 0);
  EXPECT_EQ(&bench_.reconciler->engine()->cluster(), cluster);
  EXPECT_EQ(bench_.reconciler->config().cluster_queues.size(), 2u);
  EXPECT_EQ(bench_.reconciler->config().resource_flavors.size(), 2u);

  // An edit the quota tree cannot take in place (preemption policy): the same path.
  json cq = bench_.Get(kClusterQueues, "", "vision");
  cq["spec"]["preemption"]["withinClusterQueue"] = "Never";
  bench_.Replace(kClusterQueues, "", cq);
  bench_.Step();
  EXPECT_EQ(bench_.reconciler->stats().readmissions, 2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "start ml/see"));
  EXPECT_EQ(bench_.reconciler->config().cluster_queues.at(1).preemption.within_cluster_queue,
            model::PreemptionPolicy::kNever);
}

}  // namespace
}  // namespace muster::control
