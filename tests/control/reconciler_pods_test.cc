// Bare Pods as workloads in serve mode (pod_workloads.h): a queued Pod is a one-pod
// Workload, a Kueue pod group waits until every pod exists and fits (all or
// nothing), the pods say why they wait, deleting a pod removes its workload, and
// a job's own pods are never workloads of their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::json;

// A Pod in namespace "ml" queued to LocalQueue "team" with `gpus` GPUs; in Kueue pod
// group `group` of `total` pods when `group` is set.
json BarePod(const std::string& name, int gpus, const std::string& group = "", int total = 0) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {
      {"name", name}, {"namespace", "ml"}, {"labels", {{"kueue.x-k8s.io/queue-name", "team"}}}};
  if (!group.empty()) {
    pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group;
    if (total > 0)
      pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] =
          std::to_string(total);
  }
  json container = {
      {"name", "main"},
      {"image", "trainer"},
      {"command", json::array({"sh", "-c", "echo " + name})},
      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  pod["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  return pod;
}

class ReconcilerPodsTest : public ::testing::Test {
 protected:
  ReconcilerPodsTest() : bench_(ReconcilerMode::kServe) {}
  json Pod(const std::string& name) { return bench_.Get("pods", "ml", name); }
  std::string Scheduled(const std::string& pod, std::string* reason = nullptr) {
    return Condition(Pod(pod), "PodScheduled", reason);
  }
  std::string ScheduledMessage(const std::string& pod) {
    for (const auto& c : Pod(pod)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled") return c.value("message", "");
    }
    return "";
  }
  Bench bench_;
};

TEST_F(ReconcilerPodsTest, AQueuedPodIsAOnePodWorkloadOfItsOwnPod) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("solo", 2));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-solo"));
  json wl = bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-solo");
  EXPECT_EQ(wl["spec"]["queueName"], "team");
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "main");
  EXPECT_EQ(wl["metadata"]["ownerReferences"][0]["kind"], "Pod");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  // The pod set is the user's Pod object, not a pod made from a template.
  const engine::WorkloadRecord* r = bench_.reconciler->engine()->Find("ml/pod-solo");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->workload.pod_sets.size(), 1u);
  EXPECT_EQ(r->workload.pod_sets[0].existing_pod, "solo");
  EXPECT_EQ(r->workload.pod_sets[0].tmpl.spec.containers[0].command[2], "echo solo");
  EXPECT_EQ(bench_.sink.Count("event events ml/solo."), 2);  // Admitted, Started, on the pod
  // serve's executor writes the pod's status: the reconciler writes no job status.
  EXPECT_EQ(bench_.sink.Count("job-status"), 0);

  bench_.runtime.Finish("ml/pod-solo", true);
  bench_.Step();
  EXPECT_EQ(Condition(bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-solo"), "Finished"),
            "True");
  EXPECT_THAT(bench_.logs, IsEmpty());
}

// `kubectl run` writes no restartPolicy (Always, kube-apiserver's default), and
// neither do most pods in tutorials: such a pod runs, its Workload's template keeps
// Always (a Job refuses it, which is how the pod is decoded).
TEST_F(ReconcilerPodsTest, APodWithoutARestartPolicyRuns) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  json always = BarePod("always", 1);
  always["spec"]["restartPolicy"] = "Always";
  json unset = BarePod("unset", 1);
  unset["spec"].erase("restartPolicy");
  bench_.Create("pods", "ml", always);
  bench_.Create("pods", "ml", unset);
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-always", "start ml/pod-unset"));
  for (const char* name : {"always", "unset"}) {
    const engine::WorkloadRecord* r =
        bench_.reconciler->engine()->Find(std::string("ml/pod-") + name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->workload.pod_sets[0].tmpl.spec.restart_policy, "Always") << name;
  }
  EXPECT_THAT(bench_.logs, IsEmpty());
}

TEST_F(ReconcilerPodsTest, AGroupWaitsForAllItsPodsThenStartsThemAtOnce) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("g-a", 2, "g", 2));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, IsEmpty());
  std::string reason;
  EXPECT_EQ(Scheduled("g-a", &reason), "False");
  EXPECT_EQ(reason, "SchedulingGated");
  EXPECT_EQ(ScheduledMessage("g-a"), "waiting for the pods of group g: 1 of 2 exist");
  EXPECT_EQ(Pod("g-a")["status"]["phase"], "Pending");
  EXPECT_EQ(bench_.sink.Count("event events ml/g-a.pod."), 1);
  EXPECT_EQ(bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-g"), json());
  // Waiting again writes nothing new.
  const size_t writes = bench_.sink.log.size();
  bench_.clock.Advance(2);
  bench_.Step();
  EXPECT_EQ(bench_.sink.log.size(), writes);

  bench_.Create("pods", "ml", BarePod("g-b", 2, "g", 2));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-g"));
  json wl = bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-g");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 2u);
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "g-a");
  EXPECT_EQ(wl["spec"]["podSets"][1]["name"], "g-b");
  const engine::WorkloadRecord* r = bench_.reconciler->engine()->Find("ml/pod-g");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->plan.pods.size(), 2u);
}

TEST_F(ReconcilerPodsTest, AGroupThatDoesNotFitStartsNoPodAndSaysWhy) {
  bench_.Configure(2, 4, 4);  // 4 GPUs of quota: 3 + 3 do not fit
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("h-a", 3, "h", 2));
  bench_.Create("pods", "ml", BarePod("h-b", 3, "h", 2));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, IsEmpty());
  EXPECT_EQ(Scheduled("h-a"), "False");
  EXPECT_EQ(Scheduled("h-b"), "False");
  EXPECT_THAT(ScheduledMessage("h-a"), HasSubstr("nvidia.com/gpu"));
  EXPECT_EQ(Condition(bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-h"), "QuotaReserved"),
            "False");
}

TEST_F(ReconcilerPodsTest, DeletingARunningPodRemovesItsWorkloadAndFreesItsQuota) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("long", 4));
  bench_.Create("pods", "ml", BarePod("next", 4));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-long"));
  EXPECT_EQ(Scheduled("next"), "False");
  bench_.Delete("pods", "ml", "long");
  for (int i = 0; i < 3; ++i) {
    bench_.clock.Advance(2);
    bench_.Step();
  }
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/pod-long", "deleted ml/pod-long", "start ml/pod-next"));
  EXPECT_EQ(bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-long"), json());
}

TEST_F(ReconcilerPodsTest, APodAFinalizerHoldsLeavesItsWorkloadWhenMarkedForDeletion) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  json held = BarePod("held", 4);
  held["metadata"]["finalizers"] = {"example.com/keep"};
  bench_.Create("pods", "ml", held);
  bench_.Create("pods", "ml", BarePod("next", 4));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-held"));
  // What the store writes for a DELETE of a pod its finalizer holds.
  json marked = Pod("held");
  marked["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  marked["metadata"]["deletionGracePeriodSeconds"] = 0;
  bench_.Replace("pods", "ml", marked);
  for (int i = 0; i < 3; ++i) {
    bench_.clock.Advance(2);
    bench_.Step();
  }
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/pod-held", "deleted ml/pod-held", "start ml/pod-next"));
  // Later writes of the marked pod (its status) do not make it a workload again.
  marked = Pod("held");
  marked["status"]["phase"] = "Failed";
  bench_.Replace("pods", "ml", marked);
  bench_.Steps(2);
  EXPECT_EQ(bench_.reconciler->engine()->Find("ml/pod-held"), nullptr);
  EXPECT_EQ(bench_.runtime.events.size(), 3u);
}

TEST_F(ReconcilerPodsTest, AGroupPodWithoutItsTotalCountSaysWhy) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("lost", 1, "nogroup"));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, IsEmpty());
  std::string reason;
  EXPECT_EQ(Scheduled("lost", &reason), "False");
  EXPECT_EQ(reason, "Unschedulable");
  EXPECT_THAT(ScheduledMessage("lost"), HasSubstr("kueue.x-k8s.io/pod-group-total-count"));
  EXPECT_EQ(bench_.sink.Count("event events ml/lost.pod."), 1);
  EXPECT_EQ(bench_.sink.Count(" FailedScheduling"), 1);
}

TEST_F(ReconcilerPodsTest, AJobsOwnPodsAreNotWorkloads) {
  bench_.Configure(1, 4, 4);
  bench_.Build();
  json job = bench_.Create("jobs.batch", "ml", testing::IndexedJob("train", 1, 1));
  bench_.Step();
  bench_.Create("pods", "ml", testing::PodOf(job, 0));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_THAT(bench_.reconciler->JobKeys(), ElementsAre("ml/train"));
}

TEST_F(ReconcilerPodsTest, ARestartedReconcilerTakesBackItsPodWorkloads) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", BarePod("solo", 2));
  bench_.Create("pods", "ml", BarePod("g-a", 1, "g", 2));
  bench_.Steps(2);
  ASSERT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-solo"));
  bench_.Build();  // a restart: everything read back from the objects
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-solo", "adopt ml/pod-solo"));
  bench_.Create("pods", "ml", BarePod("g-b", 1, "g", 2));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events,
              ElementsAre("start ml/pod-solo", "adopt ml/pod-solo", "start ml/pod-g"));
}

// A standalone Volcano PodGroup of minMember 2 and a pod annotated with its name.
json VolcanoPodGroup(const std::string& name, int min_member) {
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"minMember", min_member}, {"queue", "default"}}}};
}
json VolcanoPod(const std::string& name, const std::string& group) {
  json pod = BarePod(name, 1);
  pod["metadata"]["labels"] = json::object();
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = group;
  pod["spec"]["schedulerName"] = "volcano";
  return pod;
}

TEST_F(ReconcilerPodsTest, VolcanoPodsOfAStandalonePodGroupAreOneGangAndItsPhaseFollows) {
  bench_.Configure(2, 4, 8);
  bench_.Create("queues.scheduling.volcano.sh", "",
                {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                 {"kind", "Queue"},
                 {"metadata", {{"name", "default"}}},
                 {"spec", {{"weight", 1}}}});
  bench_.Build();
  bench_.Create("pods", "ml", VolcanoPod("v-a", "pg"));
  bench_.Steps(2);
  EXPECT_THAT(ScheduledMessage("v-a"), HasSubstr("PodGroup ml/pg does not exist"));
  bench_.Create("podgroups.scheduling.volcano.sh", "ml", VolcanoPodGroup("pg", 2));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, IsEmpty());
  EXPECT_EQ(ScheduledMessage("v-a"), "waiting for the pods of group pg: 1 of 2 exist");
  EXPECT_EQ(bench_.Get("queues.scheduling.volcano.sh", "", "default")["status"]["state"], "Open");
  auto group = [&] { return bench_.Get("podgroups.scheduling.volcano.sh", "ml", "pg"); };
  EXPECT_EQ(group()["status"]["phase"], "Pending");

  bench_.Create("pods", "ml", VolcanoPod("v-b", "pg"));
  bench_.Steps(2);
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/pod-pg"));
  // Admitted; the fake runtime reports one running pod, fewer than minMember.
  EXPECT_EQ(group()["status"]["phase"], "Inqueue");
  EXPECT_EQ(group()["status"]["running"], 1);
  // The Queue's status, as Volcano's queue controller keeps it: one placed job and what
  // it holds.
  json queue = bench_.Get("queues.scheduling.volcano.sh", "", "default")["status"];
  EXPECT_EQ(queue["state"], "Open");
  EXPECT_EQ(queue["running"], 1);
  EXPECT_EQ(queue["pending"], 0);
  EXPECT_EQ(queue["allocated"]["nvidia.com/gpu"], "2");

  bench_.runtime.Finish("ml/pod-pg", true);
  bench_.Steps(2);
  EXPECT_EQ(group()["status"]["phase"], "Completed");
}

}  // namespace
}  // namespace muster::control
