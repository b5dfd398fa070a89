#include "control/workload_objects.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/resource_name.h"

namespace muster::control {
namespace {

using json = nlohmann::json;
using engine::Phase;

constexpr int64_t kGi = int64_t{1} << 30;

const json* FindCondition(const json& object, const std::string& type) {
  const json& conditions = object["status"]["conditions"];
  for (const auto& c : conditions) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

// A condition's (status, reason) pair, or ("absent", "") when missing.
std::pair<std::string, std::string> StatusReason(const json& object, const std::string& type) {
  const json* c = FindCondition(object, type);
  if (c == nullptr) return {"absent", ""};
  return {c->value("status", ""), c->value("reason", "")};
}

model::Node MakeNode(const std::string& name, int64_t gpus) {
  model::Node n;
  n.meta.name = name;
  n.meta.labels["kubernetes.io/hostname"] = name;
  n.allocatable.Set(kCpu, 16000);
  n.allocatable.Set(kMemory, 64 * kGi);
  n.allocatable.Set(kNvidiaGpu, gpus);
  n.allocatable.Set(kPods, 110);
  return n;
}

model::PodSet GpuPodSet(const std::string& name, int32_t count, int64_t gpus) {
  model::PodSet ps;
  ps.name = name;
  ps.count = count;
  ps.min_count = count;
  ps.requests.Set(kCpu, 2000);
  ps.requests.Set(kMemory, 4 * kGi);
  ps.requests.Set(kNvidiaGpu, gpus);
  model::Container c;
  c.name = "pytorch";
  c.image = "example.com/pretrain:1.0";
  ps.tmpl.spec.containers.push_back(c);
  return ps;
}

class WorkloadObjectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto state =
        placement::BuildClusterState({MakeNode("node-a", 4), MakeNode("node-b", 4)}, {}, {}, {});
    ASSERT_TRUE(state.ok()) << state.status().message();
    cluster_ = std::move(*state);

    record_.workload.key = "default/pretrain";
    record_.workload.meta.name = "pretrain";
    record_.workload.meta.namespace_ = "default";
    record_.workload.local_queue = "team-a";
    record_.workload.priority = 5;
    record_.workload.priority_class = "high";
    record_.workload.pod_sets = {GpuPodSet("master", 1, 2), GpuPodSet("worker", 2, 1)};
    record_.workload.min_available = 3;
    record_.submitted = true;
    record_.submit_time = 100;

    job_ = {"pytorchjobs.kubeflow.org", "default", "pretrain", "PyTorchJob",
            "kubeflow.org/v1",          "uid-1"};
  }

  WorkloadFacts Facts(const std::string& now) const {
    WorkloadFacts f;
    f.record = &record_;
    f.cluster_queue = "team-a";
    f.cohort = "lab";
    f.now = now;
    f.cluster = cluster_.get();
    return f;
  }

  // Admits and places the gang: master on node-a, both workers on node-b.
  void AdmitAndRun() {
    record_.phase = Phase::kRunning;
    record_.admit_time = 110;
    record_.start_time = 111;
    record_.assignment.pod_sets = {{"master", 1, {{"nvidia.com/gpu", "a100"}, {"cpu", "default"}}},
                                   {"worker", 2, {{"nvidia.com/gpu", "a100"}}}};
    placement::PodPlacement master{0, 0, 0, {0, 1}, -1, {}};
    placement::PodPlacement w0{1, 0, 1, {0}, 0, {}};
    placement::PodPlacement w1{1, 1, 1, {1}, -1, {}};
    record_.plan = {record_.workload.key, {master, w0, w1}};
    record_.bound = true;
  }

  std::unique_ptr<placement::ClusterState> cluster_;
  engine::WorkloadRecord record_;
  JobRef job_;
};

TEST(SetConditionTest, TransitionTimeChangesOnlyWhenStatusFlips) {
  json conditions;  // null: created as an array
  EXPECT_TRUE(SetCondition(conditions, "Admitted", false, "NoReservation", "waiting", "t1"));
  ASSERT_TRUE(conditions.is_array());
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["status"], "False");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t1");

  // Same everything: nothing changes, not even the time.
  EXPECT_FALSE(SetCondition(conditions, "Admitted", false, "NoReservation", "waiting", "t2"));
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t1");

  // Reason and message update without a transition.
  EXPECT_TRUE(SetCondition(conditions, "Admitted", false, "Other", "still waiting", "t3"));
  EXPECT_EQ(conditions[0]["reason"], "Other");
  EXPECT_EQ(conditions[0]["message"], "still waiting");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t1");

  // The status flips: the time moves.
  EXPECT_TRUE(SetCondition(conditions, "Admitted", true, "Admitted", "ok", "t4"));
  EXPECT_EQ(conditions[0]["status"], "True");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t4");

  // Another type is appended; the first is untouched.
  EXPECT_TRUE(SetCondition(conditions, "PodsReady", true, "PodsReady", "", "t5"));
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[1]["type"], "PodsReady");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t4");
}

TEST(WorkloadObjectNameTest, KindLowerCaseAndJobName) {
  JobRef job{"pytorchjobs.kubeflow.org", "default", "pretrain", "PyTorchJob",
             "kubeflow.org/v1",          "u"};
  EXPECT_EQ(WorkloadObjectName(job), "pytorchjob-pretrain");
  job.kind = "Job";
  job.name = "finetune";
  EXPECT_EQ(WorkloadObjectName(job), "job-finetune");
  job.name = std::string(300, 'x');
  EXPECT_EQ(WorkloadObjectName(job).size(), 253u);  // a valid object name still
}

TEST(Rfc3339Test, UtcSeconds) { EXPECT_EQ(Rfc3339(1795310351.7), "2026-11-22T01:19:11Z"); }

TEST_F(WorkloadObjectsTest, PendingRecordHasNoReservation) {
  WorkloadFacts facts = Facts("t1");
  facts.pending_message = "couldn't assign flavors to pod set master: insufficient quota";
  json w = BuildWorkloadObject(job_, facts, nullptr);

  EXPECT_EQ(w["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(w["kind"], "Workload");
  EXPECT_EQ(w["metadata"]["name"], "pytorchjob-pretrain");
  EXPECT_EQ(w["metadata"]["namespace"], "default");
  EXPECT_EQ(w["metadata"]["labels"]["kueue.x-k8s.io/job-uid"], "uid-1");
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["kind"], "PyTorchJob");
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(w["spec"]["queueName"], "team-a");
  EXPECT_EQ(w["spec"]["priority"], 5);
  EXPECT_EQ(w["spec"]["priorityClassName"], "high");
  ASSERT_EQ(w["spec"]["podSets"].size(), 2u);
  EXPECT_EQ(w["spec"]["podSets"][1]["name"], "worker");
  EXPECT_EQ(w["spec"]["podSets"][1]["count"], 2);

  EXPECT_EQ(StatusReason(w, "QuotaReserved"),
            std::make_pair(std::string("False"), std::string("Pending")));
  EXPECT_EQ((*FindCondition(w, "QuotaReserved"))["message"], facts.pending_message);
  EXPECT_EQ(StatusReason(w, "Admitted"),
            std::make_pair(std::string("False"), std::string("NoReservation")));
  EXPECT_FALSE(w["status"].contains("admission"));
  EXPECT_FALSE(w["status"].contains("placement"));
  EXPECT_EQ(StatusReason(w, "PodsReady").first, "absent");
  EXPECT_EQ(StatusReason(w, "Finished").first, "absent");
}

TEST_F(WorkloadObjectsTest, PodSetTemplateIsTheJobsTemplate) {
  model::PodSet& worker = record_.workload.pod_sets[1];
  worker.tmpl.labels["team"] = "a";
  worker.tmpl.spec.containers[0].limits["nvidia.com/gpu"] = *Quantity::Parse("1");
  worker.tmpl.spec.containers[0].env.push_back({"EPOCHS", "3", std::nullopt});
  worker.tmpl.spec.node_selector["gpu"] = "a100";
  json w = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  const json& tmpl = w["spec"]["podSets"][1]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"], (json{{"team", "a"}}));
  EXPECT_EQ(tmpl["spec"]["nodeSelector"], (json{{"gpu", "a100"}}));
  const json& c = tmpl["spec"]["containers"][0];
  EXPECT_EQ(c["image"], "example.com/pretrain:1.0");
  EXPECT_EQ(c["resources"]["limits"], (json{{"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(c["env"][0]["name"], "EPOCHS");
}

TEST_F(WorkloadObjectsTest, PendingWithoutMessageSaysWaiting) {
  json w = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  EXPECT_EQ((*FindCondition(w, "QuotaReserved"))["message"], "Waiting for admission");
}

TEST_F(WorkloadObjectsTest, AdmittedRunningRecordHasAdmissionAndPlacement) {
  json pending = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  AdmitAndRun();
  json w = BuildWorkloadObject(job_, Facts("t2"), &pending);

  EXPECT_EQ(StatusReason(w, "QuotaReserved"),
            std::make_pair(std::string("True"), std::string("QuotaReserved")));
  EXPECT_EQ((*FindCondition(w, "QuotaReserved"))["message"],
            "Quota reserved in ClusterQueue team-a");
  EXPECT_EQ((*FindCondition(w, "QuotaReserved"))["lastTransitionTime"], "t2");
  EXPECT_EQ(StatusReason(w, "Admitted"),
            std::make_pair(std::string("True"), std::string("Admitted")));
  // Not every pod runs yet.
  EXPECT_EQ(StatusReason(w, "PodsReady"),
            std::make_pair(std::string("False"), std::string("WaitForStart")));

  const json& admission = w["status"]["admission"];
  EXPECT_EQ(admission["clusterQueue"], "team-a");
  ASSERT_EQ(admission["podSetAssignments"].size(), 2u);
  const json& master = admission["podSetAssignments"][0];
  EXPECT_EQ(master["name"], "master");
  EXPECT_EQ(master["count"], 1);
  EXPECT_EQ(master["flavors"], json({{"cpu", "default"}, {"nvidia.com/gpu", "a100"}}));
  EXPECT_EQ(master["resourceUsage"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(master["resourceUsage"]["cpu"], "2");
  const json& worker = admission["podSetAssignments"][1];
  EXPECT_EQ(worker["count"], 2);
  // Usage is per-pod requests times the admitted count.
  EXPECT_EQ(worker["resourceUsage"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(worker["resourceUsage"]["cpu"], "4");
  EXPECT_EQ(worker["resourceUsage"]["memory"], ResourceList::FormatAmount(kMemory, 8 * kGi));

  const json& pods = w["status"]["placement"]["pods"];
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0],
            json({{"podSet", "master"}, {"index", 0}, {"node", "node-a"}, {"gpus", {0, 1}}}));
  EXPECT_EQ(pods[1]["node"], "node-b");
  EXPECT_EQ(pods[1]["podSet"], "worker");
  EXPECT_EQ(pods[1]["numaZone"], 0);
  EXPECT_EQ(pods[2]["index"], 1);
  EXPECT_EQ(pods[2]["gpus"], json({1}));
  EXPECT_FALSE(pods[2].contains("numaZone"));

  // All pods run: PodsReady flips, and the quota's transition time stays.
  WorkloadFacts ready = Facts("t3");
  ready.pods_ready = true;
  json w2 = BuildWorkloadObject(job_, ready, &w);
  EXPECT_EQ(StatusReason(w2, "PodsReady"),
            std::make_pair(std::string("True"), std::string("Started")));
  EXPECT_EQ((*FindCondition(w2, "PodsReady"))["lastTransitionTime"], "t3");
  EXPECT_EQ((*FindCondition(w2, "QuotaReserved"))["lastTransitionTime"], "t2");

  // A pod fails: WaitForRecovery; ready again: Recovered (Kueue's reasons).
  record_.ready_lost_time = 140;
  json lost = BuildWorkloadObject(job_, Facts("t4"), &w2);
  EXPECT_EQ(StatusReason(lost, "PodsReady"),
            std::make_pair(std::string("False"), std::string("WaitForRecovery")));
  record_.ready_lost_time.reset();
  json back = BuildWorkloadObject(job_, ready, &lost);
  EXPECT_EQ(StatusReason(back, "PodsReady"),
            std::make_pair(std::string("True"), std::string("Recovered")));
}

TEST_F(WorkloadObjectsTest, QuotaOnlyAdmissionWaitsForNodes) {
  AdmitAndRun();
  record_.phase = Phase::kAdmitted;
  record_.plan = {};
  record_.bound = false;
  json w = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  EXPECT_EQ(StatusReason(w, "Admitted").first, "True");
  EXPECT_EQ((*FindCondition(w, "PodsReady"))["message"],
            "Admitted, waiting for nodes for the gang");
  EXPECT_TRUE(w["status"]["placement"]["pods"].empty());
}

TEST_F(WorkloadObjectsTest, EvictedThenReadmitted) {
  AdmitAndRun();
  json running = BuildWorkloadObject(job_, Facts("t1"), nullptr);

  // Preempted: back to pending with the eviction recorded.
  record_.phase = Phase::kPending;
  record_.assignment = {};
  record_.plan = {};
  record_.bound = false;
  record_.evictions.push_back(
      {120, engine::kReasonPreempted, "InCohortReclamation", "default/finetune"});
  WorkloadFacts facts = Facts("t2");
  facts.pending_message = "waiting";
  json evicted = BuildWorkloadObject(job_, facts, &running);
  EXPECT_EQ(StatusReason(evicted, "Evicted"),
            std::make_pair(std::string("True"), std::string("Preempted")));
  EXPECT_EQ((*FindCondition(evicted, "Evicted"))["message"],
            "InCohortReclamation: evicted to admit default/finetune");
  EXPECT_EQ(StatusReason(evicted, "Preempted"),
            std::make_pair(std::string("True"), std::string("InCohortReclamation")));
  EXPECT_EQ(StatusReason(evicted, "QuotaReserved").first, "False");
  EXPECT_EQ(StatusReason(evicted, "Admitted").first, "False");
  EXPECT_EQ(StatusReason(evicted, "PodsReady").first, "False");
  EXPECT_FALSE(evicted["status"].contains("admission"));
  EXPECT_FALSE(evicted["status"].contains("placement"));

  // Admitted again: the eviction conditions go False and keep what happened.
  AdmitAndRun();
  json again = BuildWorkloadObject(job_, Facts("t3"), &evicted);
  EXPECT_EQ(StatusReason(again, "Admitted").first, "True");
  EXPECT_EQ(StatusReason(again, "Evicted").first, "False");
  EXPECT_EQ((*FindCondition(again, "Evicted"))["message"],
            "Previously: InCohortReclamation: evicted to admit default/finetune");
  EXPECT_EQ((*FindCondition(again, "Evicted"))["lastTransitionTime"], "t3");
  EXPECT_EQ(StatusReason(again, "Preempted").first, "False");
  EXPECT_EQ((*FindCondition(again, "Preempted"))["message"],
            "Previously: InCohortReclamation: evicted to admit default/finetune");
  EXPECT_TRUE(again["status"].contains("admission"));
}

TEST_F(WorkloadObjectsTest, NodeFailureEvictionIsNotPreemption) {
  record_.evictions.push_back({120, engine::kReasonNodeFailure, "", ""});
  json w = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  EXPECT_EQ(StatusReason(w, "Evicted"),
            std::make_pair(std::string("True"), std::string("NodeFailure")));
  EXPECT_EQ((*FindCondition(w, "Evicted"))["message"], "NodeFailure");
  EXPECT_EQ(StatusReason(w, "Preempted").first, "absent");
}

TEST_F(WorkloadObjectsTest, FinishedSucceededKeepsAdmission) {
  AdmitAndRun();
  WorkloadFacts ready = Facts("t1");
  ready.pods_ready = true;
  json running = BuildWorkloadObject(job_, ready, nullptr);
  record_.phase = Phase::kSucceeded;
  record_.finish_time = 130;
  json w = BuildWorkloadObject(job_, Facts("t2"), &running);
  EXPECT_EQ(StatusReason(w, "Finished"),
            std::make_pair(std::string("True"), std::string("Succeeded")));
  // Kueue stops updating PodsReady once the job has finished: it stays as the run left it.
  EXPECT_EQ(StatusReason(w, "PodsReady"),
            std::make_pair(std::string("True"), std::string("Started")));
  // The last admission stays visible (kubectl describe shows where it ran).
  EXPECT_TRUE(w["status"].contains("admission"));
}

TEST_F(WorkloadObjectsTest, FinishedFailedCarriesTheMessage) {
  record_.phase = Phase::kFailed;
  record_.failure_message = "backoffLimit 0 exceeded";
  record_.evictions.push_back({120, engine::kReasonPreempted, "", ""});
  json w = BuildWorkloadObject(job_, Facts("t1"), nullptr);
  EXPECT_EQ(StatusReason(w, "Finished"),
            std::make_pair(std::string("True"), std::string("Failed")));
  EXPECT_EQ((*FindCondition(w, "Finished"))["message"], "backoffLimit 0 exceeded");
  // A finished workload is not reported as evicted.
  EXPECT_EQ(StatusReason(w, "Evicted").first, "absent");
}

json JobObject(const std::string& api_version, const std::string& kind) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"metadata", {{"name", "demo"}, {"namespace", "default"}}},
          {"spec", json::object()}};
}

TEST_F(WorkloadObjectsTest, PyTorchJobStatusFollowsTheTrainingOperator) {
  json job = JobObject("kubeflow.org/v1", "PyTorchJob");
  json pending = WithJobStatus(job, Facts("t1"), 0, 0, 0);
  EXPECT_EQ(StatusReason(pending, "Created"),
            std::make_pair(std::string("True"), std::string("PyTorchJobCreated")));
  EXPECT_EQ(StatusReason(pending, "Running").first, "absent");

  AdmitAndRun();
  json running = WithJobStatus(pending, Facts("t2"), 3, 0, 0);
  EXPECT_EQ(StatusReason(running, "Running"),
            std::make_pair(std::string("True"), std::string("PyTorchJobRunning")));
  EXPECT_EQ((*FindCondition(running, "Created"))["lastTransitionTime"], "t1");

  // Preempted: Restarting, then Running again clears it.
  record_.phase = Phase::kPending;
  record_.evictions.push_back({120, engine::kReasonPreempted, "", ""});
  json restarting = WithJobStatus(running, Facts("t3"), 0, 0, 0);
  EXPECT_EQ(StatusReason(restarting, "Restarting").first, "True");
  EXPECT_EQ((*FindCondition(restarting, "Restarting"))["message"],
            "PyTorchJob demo is restarting: Preempted");
  record_.phase = Phase::kRunning;
  json resumed = WithJobStatus(restarting, Facts("t4"), 3, 0, 0);
  EXPECT_EQ(StatusReason(resumed, "Restarting").first, "False");

  record_.phase = Phase::kSucceeded;
  json done = WithJobStatus(resumed, Facts("t5"), 0, 3, 0);
  EXPECT_EQ(StatusReason(done, "Succeeded"),
            std::make_pair(std::string("True"), std::string("PyTorchJobSucceeded")));
  EXPECT_EQ(StatusReason(done, "Running").first, "False");

  record_.phase = Phase::kFailed;
  record_.failure_message = "backoff";
  json failed = WithJobStatus(resumed, Facts("t5"), 0, 0, 1);
  EXPECT_EQ(StatusReason(failed, "Failed"),
            std::make_pair(std::string("True"), std::string("PyTorchJobFailed")));
  EXPECT_EQ((*FindCondition(failed, "Failed"))["message"], "backoff");
}

TEST_F(WorkloadObjectsTest, BatchJobStatusHasCountsAndComplete) {
  json job = JobObject("batch/v1", "Job");
  AdmitAndRun();
  json running = WithJobStatus(job, Facts("t1"), 2, 1, 0);
  EXPECT_EQ(running["status"]["active"], 2);
  EXPECT_EQ(running["status"]["succeeded"], 1);
  EXPECT_EQ(running["status"]["failed"], 0);
  EXPECT_EQ(running["status"]["startTime"], Rfc3339(111));
  EXPECT_FALSE(running["status"].contains("conditions"));  // no empty list

  record_.phase = Phase::kSucceeded;
  record_.finish_time = 140;
  json done = WithJobStatus(running, Facts("t2"), 0, 3, 0);
  EXPECT_EQ(StatusReason(done, "Complete"),
            std::make_pair(std::string("True"), std::string("CompletionsReached")));
  EXPECT_EQ(done["status"]["completionTime"], Rfc3339(140));
  EXPECT_EQ(done["status"]["succeeded"], 3);

  record_.phase = Phase::kFailed;
  record_.failure_message = "too many failures";
  json failed = WithJobStatus(running, Facts("t2"), 0, 0, 2);
  EXPECT_EQ(StatusReason(failed, "Failed"),
            std::make_pair(std::string("True"), std::string("BackoffLimitExceeded")));
  EXPECT_EQ(failed["status"]["failed"], 2);
}

// An Indexed Job: status.completedIndexes in the Job controller's ranges, and the
// running pods counted ready.
TEST_F(WorkloadObjectsTest, IndexedBatchJobStatusHasItsCompletedIndexes) {
  json job = JobObject("batch/v1", "Job");
  job["spec"]["completionMode"] = "Indexed";
  AdmitAndRun();
  json running = WithJobStatus(job, Facts("t1"), 2, 4, 0, 0, {0, 1, 2, 5});
  EXPECT_EQ(running["status"]["completedIndexes"], "0-2,5");
  EXPECT_EQ(running["status"]["ready"], 2);
  EXPECT_FALSE(WithJobStatus(job, Facts("t1"), 2, 0, 0)["status"].contains("completedIndexes"));
  EXPECT_EQ(IndexRanges({}), "");
  EXPECT_EQ(IndexRanges({3}), "3");
  EXPECT_EQ(IndexRanges({3, 4, 7, 8, 9, 11}), "3-4,7-9,11");
  // A NonIndexed Job has none.
  json plain = JobObject("batch/v1", "Job");
  EXPECT_FALSE(
      WithJobStatus(plain, Facts("t1"), 0, 2, 0, 0, {0, 1})["status"].contains("completedIndexes"));
}

TEST_F(WorkloadObjectsTest, JobSetStatusCompletedOrFailed) {
  json job = JobObject("jobset.x-k8s.io/v1alpha2", "JobSet");
  record_.failures = 1;
  record_.phase = Phase::kSucceeded;
  json done = WithJobStatus(job, Facts("t1"), 0, 3, 0);
  EXPECT_EQ(StatusReason(done, "Completed"),
            std::make_pair(std::string("True"), std::string("AllJobsCompleted")));
  EXPECT_EQ(done["status"]["restarts"], 1);
  record_.phase = Phase::kFailed;
  json failed = WithJobStatus(job, Facts("t1"), 0, 0, 3);
  EXPECT_EQ(StatusReason(failed, "Failed"),
            std::make_pair(std::string("True"), std::string("FailedJobs")));
  // The final failure is no restart.
  EXPECT_EQ(failed["status"]["restarts"], 0);
}

TEST_F(WorkloadObjectsTest, JobSetFailureReasonsAndRestartCounts) {
  json job = JobObject("jobset.x-k8s.io/v1alpha2", "JobSet");
  job["spec"]["failurePolicy"] = {{"maxRestarts", 1}};
  record_.phase = Phase::kRunning;
  record_.failures = 1;
  record_.uncounted_restarts = 2;
  json running = WithJobStatus(job, Facts("t1"), 3, 0, 0);
  EXPECT_EQ(running["status"]["restarts"], 3);
  EXPECT_EQ(running["status"]["restartsCountTowardsMax"], 1);
  record_.phase = Phase::kFailed;
  record_.failures = 2;
  EXPECT_EQ(StatusReason(WithJobStatus(job, Facts("t1"), 0, 0, 3), "Failed"),
            std::make_pair(std::string("True"), std::string("ReachedMaxRestarts")));
  record_.failure_message = "pod x failed; its failure policy fails the job";
  EXPECT_EQ(StatusReason(WithJobStatus(job, Facts("t1"), 0, 0, 3), "Failed"),
            std::make_pair(std::string("True"), std::string("FailJobSetFailurePolicyAction")));
}

TEST_F(WorkloadObjectsTest, JobSetInOrderStartupConditions) {
  json job = JobObject("jobset.x-k8s.io/v1alpha2", "JobSet");
  job["spec"]["startupPolicy"] = {{"startupPolicyOrder", "InOrder"}};
  record_.phase = Phase::kRunning;
  json starting = WithJobStatus(job, Facts("t1"), 1, 0, 0, /*waiting_pods=*/2);
  EXPECT_EQ(StatusReason(starting, "StartupPolicyInProgress"),
            std::make_pair(std::string("True"), std::string("InOrderStartupPolicyInProgress")));
  json started = WithJobStatus(starting, Facts("t2"), 3, 0, 0, 0);
  EXPECT_EQ(StatusReason(started, "StartupPolicyCompleted"),
            std::make_pair(std::string("True"), std::string("InOrderStartupPolicyCompleted")));
  for (const auto& c : started["status"]["conditions"]) {
    EXPECT_NE(c.value("type", ""), "StartupPolicyInProgress");  // exclusive, as upstream
  }
  // Succeeded straight from in progress (its last jobs started and ended between two
  // syncs): the startup completed all the same.
  record_.phase = Phase::kSucceeded;
  json done = WithJobStatus(starting, Facts("t3"), 0, 3, 0, 0);
  EXPECT_EQ(StatusReason(done, "StartupPolicyCompleted"),
            std::make_pair(std::string("True"), std::string("InOrderStartupPolicyCompleted")));
  EXPECT_EQ(StatusReason(done, "StartupPolicyInProgress").first, "absent");
  record_.phase = Phase::kRunning;
  // AnyOrder: neither condition.
  json any =
      WithJobStatus(JobObject("jobset.x-k8s.io/v1alpha2", "JobSet"), Facts("t1"), 1, 0, 0, 2);
  EXPECT_FALSE(any["status"].contains("conditions"));
}

TEST_F(WorkloadObjectsTest, VolcanoJobPhaseAndCounts) {
  json job = JobObject("batch.volcano.sh/v1alpha1", "Job");
  json pending = WithJobStatus(job, Facts("t1"), 0, 0, 0);
  EXPECT_EQ(pending["status"]["state"]["phase"], "Pending");
  EXPECT_EQ(pending["status"]["state"]["lastTransitionTime"], "t1");
  // A Volcano Job is not a batch Job: no Complete condition or active count.
  EXPECT_FALSE(pending["status"].contains("active"));

  AdmitAndRun();
  json running = WithJobStatus(pending, Facts("t2"), 3, 0, 0);
  EXPECT_EQ(running["status"]["state"]["phase"], "Running");
  EXPECT_EQ(running["status"]["state"]["lastTransitionTime"], "t2");
  EXPECT_EQ(running["status"]["running"], 3);
  json still = WithJobStatus(running, Facts("t3"), 3, 0, 0);
  EXPECT_EQ(still["status"]["state"]["lastTransitionTime"], "t2");

  record_.phase = Phase::kPending;
  record_.failures = 2;
  record_.evictions.push_back({120, engine::kReasonNodeFailure, "", ""});
  json restarting = WithJobStatus(still, Facts("t4"), 0, 0, 0);
  EXPECT_EQ(restarting["status"]["state"]["phase"], "Restarting");
  EXPECT_EQ(restarting["status"]["retryCount"], 2);

  record_.phase = Phase::kSucceeded;
  EXPECT_EQ(WithJobStatus(still, Facts("t5"), 0, 3, 0)["status"]["state"]["phase"], "Completed");
  record_.phase = Phase::kFailed;
  EXPECT_EQ(WithJobStatus(still, Facts("t5"), 0, 0, 3)["status"]["state"]["phase"], "Failed");
}

}  // namespace
}  // namespace muster::control

namespace muster::control {
namespace {

TEST_F(WorkloadObjectsTest, RecordedAdmissionReadsBackWhatWasWritten) {
  AdmitAndRun();
  json wl = BuildWorkloadObject(job_, Facts("2026-11-23T00:00:00Z"), nullptr);
  RecordedAdmission back = ReadRecordedAdmission(
      wl["status"]["admission"], wl["status"]["placement"]["pods"], record_, *cluster_);
  ASSERT_TRUE(back.status.ok()) << back.status.message();
  ASSERT_EQ(back.plan.pods.size(), record_.plan.pods.size());
  for (size_t i = 0; i < back.plan.pods.size(); ++i) {
    EXPECT_EQ(back.plan.pods[i].pod_set, record_.plan.pods[i].pod_set);
    EXPECT_EQ(back.plan.pods[i].index, record_.plan.pods[i].index);
    EXPECT_EQ(back.plan.pods[i].node, record_.plan.pods[i].node);
    EXPECT_EQ(back.plan.pods[i].gpus, record_.plan.pods[i].gpus);
    EXPECT_EQ(back.plan.pods[i].numa_zone, record_.plan.pods[i].numa_zone);
  }
  ASSERT_EQ(back.assignment.pod_sets.size(), 2u);
  EXPECT_EQ(back.assignment.pod_sets[0].flavors.at("nvidia.com/gpu"), "a100");
  EXPECT_EQ(back.assignment.pod_sets[1].count, 2);
}

TEST_F(WorkloadObjectsTest, RecordedAdmissionOfAnyShapeNeverThrows) {
  AdmitAndRun();
  const json admission = json::parse(R"({"podSetAssignments": [{"name": "master", "count": 1}]})");
  for (const char* pods : {R"("not a list")", R"([{"podSet": "master", "node": "gone"}])",
                           R"([{"podSet": "nope", "node": "node-a"}])", R"([7])",
                           R"([{"podSet": "master", "node": "node-a", "gpus": "x"}])"}) {
    RecordedAdmission back =
        ReadRecordedAdmission(admission, json::parse(pods), record_, *cluster_);
    EXPECT_EQ(back.status.code(), StatusCode::kFailedPrecondition) << pods;
  }
  RecordedAdmission bad = ReadRecordedAdmission(json("x"), json::array(), record_, *cluster_);
  EXPECT_FALSE(bad.status.ok());
}

}  // namespace
}  // namespace muster::control
