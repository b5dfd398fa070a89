#include "control/gang_binder.h"

#include <gtest/gtest.h>

namespace muster::control {
namespace {

using json = nlohmann::json;

TEST(GangBinderTest, IdentifiesPodsOfEachKind) {
  auto batch = IdentifyPod(json::parse(R"({"metadata": {"name": "train-1-abcde",
    "labels": {"batch.kubernetes.io/job-name": "train"},
    "annotations": {"batch.kubernetes.io/job-completion-index": "1"},
    "ownerReferences": [{"kind": "Job", "name": "train", "controller": true}]}})"));
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->job_kind, "Job");
  EXPECT_EQ(batch->job_name, "train");
  EXPECT_EQ(batch->pod_set, "main");
  EXPECT_EQ(batch->index, 1);

  auto pt = IdentifyPod(json::parse(R"({"metadata": {"name": "pt-worker-2", "labels": {
    "training.kubeflow.org/job-name": "pt", "training.kubeflow.org/replica-type": "Worker",
    "training.kubeflow.org/replica-index": "2"},
    "ownerReferences": [{"kind": "PyTorchJob", "name": "pt", "controller": true}]}})"));
  ASSERT_TRUE(pt.has_value());
  EXPECT_EQ(pt->job_kind, "PyTorchJob");
  EXPECT_EQ(pt->pod_set, "worker");
  EXPECT_EQ(pt->index, 2);

  auto js = IdentifyPod(json::parse(R"({"metadata": {"name": "js-workers-1-0-xyz", "labels": {
    "jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
    "jobset.sigs.k8s.io/job-index": "1", "batch.kubernetes.io/job-name": "js-workers-1",
    "batch.kubernetes.io/job-completion-index": "0"}}})"));
  ASSERT_TRUE(js.has_value());
  EXPECT_EQ(js->job_kind, "JobSet");
  EXPECT_EQ(js->pod_set, "workers");
  EXPECT_EQ(js->job_index, 1);
  EXPECT_EQ(js->index, 0);

  auto vc = IdentifyPod(json::parse(R"({"metadata": {"name": "mpi-worker-3",
    "annotations": {"volcano.sh/job-name": "mpi", "volcano.sh/task-spec": "worker"}}})"));
  ASSERT_TRUE(vc.has_value());
  EXPECT_EQ(vc->job_kind, "VolcanoJob");
  EXPECT_EQ(vc->index, 3);

  EXPECT_FALSE(IdentifyPod(json::parse(R"({"metadata": {"name": "nginx"}})")).has_value());
}

std::vector<PlannedSlot> TwoByTwo() {
  return {{"master", 0, "n1"}, {"worker", 0, "n1"}, {"worker", 1, "n2"}};
}

TEST(GangBinderTest, WaitsForEveryPodOfTheGang) {
  BindPlan plan = PlanBindings(
      TwoByTwo(), {{"pt-master-0", "master", 0, ""}, {"pt-worker-0", "worker", 0, ""}});
  EXPECT_FALSE(plan.ready);
  EXPECT_TRUE(plan.bindings.empty());
  EXPECT_NE(plan.waiting.find("1 pod of pod set worker"), std::string::npos) << plan.waiting;
}

TEST(GangBinderTest, BindsTheWholeGangInRankOrder) {
  BindPlan plan = PlanBindings(TwoByTwo(), {{"pt-worker-1", "worker", 1, ""},
                                            {"pt-worker-0", "worker", 0, ""},
                                            {"pt-master-0", "master", 0, ""}});
  ASSERT_TRUE(plan.ready);
  std::vector<std::pair<std::string, std::string>> want = {
      {"pt-master-0", "n1"}, {"pt-worker-0", "n1"}, {"pt-worker-1", "n2"}};
  EXPECT_EQ(plan.bindings, want);
}

TEST(GangBinderTest, BoundPodsKeepTheirSlotAndUnindexedPodsFillTheRest) {
  std::vector<PlannedSlot> slots = {{"main", 0, "n1"}, {"main", 1, "n2"}, {"main", 2, "n3"}};
  BindPlan plan = PlanBindings(
      slots, {{"j-c", "main", -1, ""}, {"j-a", "main", -1, "n2"}, {"j-b", "main", -1, ""}});
  ASSERT_TRUE(plan.ready);
  std::vector<std::pair<std::string, std::string>> want = {{"j-b", "n1"}, {"j-c", "n3"}};
  EXPECT_EQ(plan.bindings, want);
}

TEST(GangBinderTest, ExtraPodsStayUnbound) {
  std::vector<PlannedSlot> slots = {{"main", 0, "n1"}};
  BindPlan plan = PlanBindings(slots, {{"j-0", "main", 0, ""}, {"j-1", "main", 1, ""}});
  ASSERT_TRUE(plan.ready);
  ASSERT_EQ(plan.bindings.size(), 1u);
  EXPECT_EQ(plan.bindings[0].first, "j-0");
}

}  // namespace
}  // namespace muster::control
