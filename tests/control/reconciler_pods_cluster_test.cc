// Bare Pods as workloads in cluster mode (`muster kube`): a pod whose schedulerName
// is muster's is a one-pod workload (with or without a Kueue queue) that muster binds
// once its Workload records the admission; a pod group is bound all at once when every
// pod exists; the workload finishes when its pods have; pods of kube-scheduler are
// left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::json;

json ClusterPod(const std::string& name, int gpus, const std::string& scheduler = "muster",
                const std::string& group = "", int total = 0) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {
      {"name", name}, {"namespace", "ml"}, {"labels", {{"kueue.x-k8s.io/queue-name", "team"}}}};
  if (!group.empty()) {
    pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group;
    pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = std::to_string(total);
  }
  json container = {
      {"name", "main"},
      {"image", "trainer"},
      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  pod["spec"] = {{"schedulerName", scheduler},
                 {"restartPolicy", "Never"},
                 {"containers", json::array({container})}};
  pod["status"] = {{"phase", "Pending"}};
  return pod;
}

class ReconcilerPodsClusterTest : public ::testing::Test {
 protected:
  ReconcilerPodsClusterTest() : bench_(ReconcilerMode::kCluster) {}
  json Pod(const std::string& name) { return bench_.Get("pods", "ml", name); }
  void SetPhase(const std::string& name, const std::string& phase) {
    json pod = Pod(name);
    pod["status"]["phase"] = phase;
    bench_.Replace("pods", "ml", pod);
  }
  Bench bench_;
};

TEST_F(ReconcilerPodsClusterTest, AMusterPodIsAdmittedThenBoundAndFinishesWithItsPod) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", ClusterPod("solo", 2));
  bench_.Steps(3);
  json wl = bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-solo");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  ASSERT_EQ(bench_.sink.Count("bind pods ml/solo solo->gpu-"), 1);
  EXPECT_FALSE(Pod("solo")["spec"].value("nodeName", "").empty());
  EXPECT_EQ(bench_.reconciler->stats().bindings, 1);
  bench_.Steps(2);
  EXPECT_EQ(bench_.sink.Count("bind"), 1);  // never bound twice

  SetPhase("solo", "Running");
  SetPhase("solo", "Succeeded");
  bench_.Steps(2);
  EXPECT_EQ(Condition(bench_.Get("workloads.kueue.x-k8s.io", "ml", "pod-solo"), "Finished"),
            "True");
  EXPECT_THAT(bench_.logs, IsEmpty());
}

TEST_F(ReconcilerPodsClusterTest, AGroupIsBoundAllAtOnceWhenEveryPodExists) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", ClusterPod("g-a", 4, "muster", "g", 2));
  bench_.Steps(3);
  EXPECT_EQ(bench_.sink.Count("bind"), 0);
  EXPECT_EQ(Condition(Pod("g-a"), "PodScheduled"), "False");
  bench_.Create("pods", "ml", ClusterPod("g-b", 4, "muster", "g", 2));
  bench_.Steps(3);
  ASSERT_EQ(bench_.sink.Count("bind"), 1);
  EXPECT_EQ(bench_.sink.Count("bind pods ml/g g-a->"), 1);  // one write binds both
  EXPECT_NE(Pod("g-a")["spec"].value("nodeName", ""), Pod("g-b")["spec"].value("nodeName", ""));
  EXPECT_EQ(bench_.reconciler->stats().bindings, 2);
}

TEST_F(ReconcilerPodsClusterTest, PodsOfAnotherSchedulerAreNotMusters) {
  bench_.Configure(1, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", ClusterPod("other", 1, "default-scheduler"));
  bench_.Steps(3);
  EXPECT_THAT(bench_.reconciler->JobKeys(), IsEmpty());
  EXPECT_EQ(bench_.sink.log.size(), bench_.sink.Count("status "));  // queue status only
}

TEST_F(ReconcilerPodsClusterTest, ARestartedReconcilerAdoptsABoundPodInsteadOfBindingAgain) {
  bench_.Configure(2, 4, 8);
  bench_.Build();
  bench_.Create("pods", "ml", ClusterPod("solo", 2));
  bench_.Steps(3);
  ASSERT_EQ(bench_.sink.Count("bind"), 1);
  SetPhase("solo", "Running");
  bench_.Build();
  bench_.Steps(3);
  EXPECT_EQ(bench_.sink.Count("bind"), 1);
  const engine::WorkloadRecord* r = bench_.reconciler->engine()->Find("ml/pod-solo");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->phase, engine::Phase::kRunning);
}

}  // namespace
}  // namespace muster::control
